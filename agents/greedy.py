"""``greedy``: the legal move that scores the most points now.

Ties are broken, in order, toward: (1) the heavier tile (more pips shed), (2) a double (doubles
are the hardest tiles to place later), (3) the lower action id (west before east before north
before south, then the lower tile index). No randomness: greedy is deterministic.
"""

from __future__ import annotations

from allfives_env import game_moves
from allfives_env.engine.tiles import ACTION_TILE, IS_DOUBLE, TILE_PIPS

from .base import Agent


def greedy_action(legal: list[int], points: list[int]) -> int:
    """The greedy choice among ``legal`` actions scoring ``points`` (same order)."""
    best = legal[0]
    best_key = (points[0], TILE_PIPS[ACTION_TILE[best]], IS_DOUBLE[ACTION_TILE[best]])
    for a, pts in zip(legal, points):
        key = (pts, TILE_PIPS[ACTION_TILE[a]], IS_DOUBLE[ACTION_TILE[a]])
        if key > best_key:
            best, best_key = a, key
    return best


class GreedyAgent(Agent):
    """Most points now; then heaviest tile; then a double; then the lowest action id."""

    name = "greedy"

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        return greedy_action(legal, view.move_points())

    def act_game(self, game, seat: int) -> int:
        """``act(game.view(seat))`` for the seat to act of an engine ``Game``, made in C without the
        view where the accelerator is built (``allfives_env.game_moves``). A subclass that changes
        ``act`` is asked through the view."""
        if game_moves.ACCELERATED and type(self).act is GreedyAgent.act:
            return game_moves.greedy_move(game, seat)
        return self.act(game.view(seat))
