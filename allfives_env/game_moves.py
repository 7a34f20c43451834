"""The heuristics' moves straight from an engine ``Game``, without a ``PlayerView``.

``expert_move(game, seat, weights)`` and ``greedy_move(game, seat)`` are the moves
``agents.expert.ExpertAgent.act`` and ``agents.greedy.GreedyAgent.act`` choose for
``game.view(seat)``, made by the C accelerator (``_fastlook.expert_game`` and ``greedy_game``) from
the game's hands and layout, as ``observation.GameObserver`` makes an observation: what an
environment asks of its heuristic opponents at every move of the learner. The heuristics' rules stay
in ``agents`` (their Python code is the reference, tests/test_game_moves.py checks every decision of
random games against it); where the accelerator is not built (``ACCELERATED`` false) the agents
decide from the view as before.
"""

from __future__ import annotations

import functools

from . import accelerator, observation
from .lookahead import reply_seats

#: the accelerator, where ``observation`` configured it for games (``GAME_ACCELERATED``)
_fast = accelerator.load("_fastlook") if observation.GAME_ACCELERATED else None
#: whether ``expert_move`` and ``greedy_move`` can be called
ACCELERATED = _fast is not None


@functools.lru_cache(maxsize=64)
def _seats(rules) -> tuple[tuple[int, int, int, int], ...]:
    """Per seat: the next seat when it plays for another side and the partner (-1: none), the mask
    of the other sides' seats, and the seat's side."""
    out = []
    for seat in range(rules.num_players):
        side = rules.side_of[seat]
        opponents = sum(1 << s for s in range(rules.num_players) if rules.side_of[s] != side)
        out.append((*reply_seats(rules, seat), opponents, side))
    return tuple(out)


def expert_move(game, seat: int, weights: tuple[float, ...]) -> int:
    """``ExpertAgent(**weights).act(game.view(seat))``, with ``weights`` its 8 weights in
    ``DEFAULT_WEIGHTS``' order; ``seat`` must be to act. Only where ``ACCELERATED``."""
    rules = game.rules
    nxt, partner, opponents, side = _seats(rules)[seat]
    return _fast.expert_game(game, seat, nxt, partner, opponents, rules.target_score - game.scores[side], weights)


def greedy_move(game, seat: int) -> int:
    """``GreedyAgent().act(game.view(seat))``; ``seat`` must be to act. Only where ``ACCELERATED``."""
    return _fast.greedy_game(game, seat)
