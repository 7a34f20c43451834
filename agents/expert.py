"""``expert``: a hand-written All Fives heuristic that looks one reply ahead.

Every legal move gets a score, the highest wins (ties: lower action id). The terms, with their
default weights (each can be overridden as an option, e.g. ``expert:threat=0.8``):

- ``points`` (1.0): points the move scores now. Reaching the target wins at once: +1000.
- ``threat`` (0.7): minus the expected best score of the next opponent's reply on the ends the
  move leaves. Candidates are the tiles the seat has not seen that the opponent may hold (not
  showing a pip it is known to lack); each is held with probability
  ``opponent tiles / candidates``; the expectation of the best of them is taken over that model.
- ``partner`` (0.35, partnership only): plus the same expectation for the partner's reply.
- ``domino`` (1.0): going out ends the hand: plus the pips the opponents are expected to hold
  (unseen pips spread over the unseen tiles), which is what they lose (``subtract``) or what the
  seat's side takes (``winner_takes``); and no reply is possible.
- ``heavy`` (0.15, times 1 / (1 + fewest tiles any opponent holds)): minus the pips left in hand:
  shed heavy tiles, more urgently as the hand nears its end.
- ``variety`` (1.2): plus the number of different pips left in hand (fewer forced draws later).
- ``mobility`` (0.8): plus how many tiles left in hand fit the ends the move leaves.
- ``double`` (1.5): plus for placing a double (doubles are the hardest tiles to place).

The weights were tuned by duplicate matches against ``greedy`` (see the tournament figures in the
project's notes).
"""

from __future__ import annotations

from allfives_env import game_moves
from allfives_env.engine.tiles import mask_pips
from allfives_env.lookahead import context, move_facts

from .base import Agent
from .options import Option, check_options

DEFAULT_WEIGHTS = {
    "points": 1.0,
    "threat": 0.7,
    "partner": 0.35,
    "domino": 1.0,
    "heavy": 0.15,
    "variety": 1.2,
    "mobility": 0.8,
    "double": 1.5,
}

#: the options of ``expert``: its weights, any finite number (a negative weight reverses a term)
OPTIONS = {name: Option(float, help=f"the weight of the {name} term (default {w:g})") for name, w in DEFAULT_WEIGHTS.items()}


class ExpertAgent(Agent):
    """The heuristic described in the module docstring; options override the weights."""

    name = "expert"

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        super().__init__(seed)
        self.weights = dict(DEFAULT_WEIGHTS)
        self.weights.update(check_options("expert", weights, OPTIONS))  # known names, finite numbers

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        return max(zip(legal, self.scores(view)), key=lambda pair: pair[1])[0]

    def act_game(self, game, seat: int) -> int:
        """``act(game.view(seat))`` for the seat to act of an engine ``Game``, made in C without the
        view where the accelerator is built (``allfives_env.game_moves``): what the environments ask
        of their opponents. A subclass that changes ``act`` is asked through the view."""
        if game_moves.ACCELERATED and type(self).act is ExpertAgent.act:
            return game_moves.expert_move(game, seat, tuple(map(self.weights.__getitem__, DEFAULT_WEIGHTS)))
        return self.act(game.view(seat))

    def scores(self, view) -> list[float]:
        """The score of every legal move, in ``view.legal_actions`` order."""
        w = self.weights
        ctx, fewest, target_left, pips_per_unseen, opp_tiles = _situation(view)
        heavy = w["heavy"] / (1 + fewest)
        out = []
        for f in move_facts(view, ctx, follow_up=False):
            score = w["points"] * f.points
            if f.points and f.points >= target_left:
                score += 1000.0
            if f.out:
                out.append(score + w["domino"] * pips_per_unseen * opp_tiles)
                continue
            if ctx.next_model is not None:
                score += -w["threat"] * f.threat
            if ctx.partner_model is not None:
                score += w["partner"] * f.partner
            score -= heavy * f.pips_left
            score += w["variety"] * f.variety
            score += w["mobility"] * f.mobility
            if f.double:
                score += w["double"]
            out.append(score)
        return out

    def terms(self, view) -> tuple[list[float], list[list[float]]]:
        """``scores`` taken apart, for fitting the weights to a player's choices (``allfives_agents.search.play_fit``):
        per legal move, the part no weight scales (+1000 for reaching the target) and each term's
        value in ``DEFAULT_WEIGHTS``' order, so that a move's score is the part plus the terms'
        values times the weights (up to rounding; ``tests/test_play_fit.py`` checks it)."""
        ctx, fewest, target_left, pips_per_unseen, opp_tiles = _situation(view)
        heavy = 1.0 / (1 + fewest)
        fixed, rows = [], []
        for f in move_facts(view, ctx, follow_up=False):
            fixed.append(1000.0 if f.points and f.points >= target_left else 0.0)
            if f.out:
                rows.append([f.points, 0.0, 0.0, pips_per_unseen * opp_tiles, 0.0, 0.0, 0.0, 0.0])
                continue
            rows.append([
                f.points,
                -f.threat if ctx.next_model is not None else 0.0,
                f.partner if ctx.partner_model is not None else 0.0,
                0.0,
                -heavy * f.pips_left,
                f.variety,
                f.mobility,
                1.0 if f.double else 0.0,
            ])
        return fixed, rows


def _situation(view):
    """What ``scores`` and ``terms`` read from the view besides the moves: the lookahead context, the
    fewest tiles any opponent holds, the points the side still needs, the pips per unseen tile and
    the opponents' tiles (their product: the pips they are expected to hold if the hand ended now)."""
    rules = view.rules
    my_side = rules.side_of[view.seat]
    ctx = context(view)
    unseen_count = ctx.unseen.bit_count()
    counts = view.tile_counts
    opponents = [s for s in range(rules.num_players) if rules.side_of[s] != my_side]
    pips_per_unseen = mask_pips(ctx.unseen) / unseen_count if unseen_count else 0.0
    opp_tiles = sum(counts[s] for s in opponents)
    return ctx, min(counts[s] for s in opponents), rules.target_score - view.scores[my_side], pips_per_unseen, opp_tiles
