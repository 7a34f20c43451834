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

from allfives_env.engine.layout import placements_points
from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, IS_DOUBLE, TILE_PIP_MASK, mask_pips, mask_tiles

from .base import Agent
from .belief import allowed_mask, unseen_mask
from .registry import check_options

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


def expected_best(values: list[int], p: float) -> float:
    """E[max] of independent prizes ``values``, each present with probability ``p`` (0 if none)."""
    if p <= 0.0 or not values:
        return 0.0
    values = sorted(values, reverse=True)
    miss = 1.0
    total = 0.0
    for v in values:
        if v <= 0:
            break
        total += v * p * miss
        miss *= 1.0 - p
    return total


def best_reply_points(layout, candidates: int) -> list[int]:
    """For each candidate tile that fits an end of ``layout``, the most it could score there."""
    actions = layout.actions_for(candidates)
    best: dict[int, int] = {}
    for a, points in zip(actions, placements_points(layout.pips, layout.values, False, actions)):
        t = ACTION_TILE[a]
        if points > best.get(t, -1):
            best[t] = points
    return list(best.values())


class ExpertAgent(Agent):
    """The heuristic described in the module docstring; options override the weights."""

    name = "expert"

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        super().__init__(seed)
        self.weights = dict(DEFAULT_WEIGHTS)
        self.weights.update(check_options("expert", weights))  # known names, finite numbers

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        return max(zip(legal, self.scores(view)), key=lambda pair: pair[1])[0]

    def scores(self, view) -> list[float]:
        """The score of every legal move, in ``view.legal_actions`` order."""
        w = self.weights
        rules = view.rules
        n = rules.num_players
        seat = view.seat
        side_of = rules.side_of
        my_side = side_of[seat]
        unseen = unseen_mask(view)
        unseen_count = unseen.bit_count()
        counts = view.tile_counts
        opponents = [s for s in range(n) if side_of[s] != my_side]
        nxt = (seat + 1) % n
        partner = rules.partner_of(seat)
        fewest = min(counts[s] for s in opponents)
        heavy = w["heavy"] / (1 + fewest)
        target_left = rules.target_score - view.scores[my_side]
        # opponents' expected pips if the hand ended now (unseen pips spread evenly)
        pips_per_unseen = mask_pips(unseen) / unseen_count if unseen_count else 0.0
        opp_tiles = sum(counts[s] for s in opponents)
        reply_models = []
        for who, weight in ((nxt, -w["threat"]), (partner, w["partner"])):
            if who is None or who == seat or counts[who] == 0:
                continue
            allowed = allowed_mask(view, who, unseen)
            k = allowed.bit_count()
            p = min(1.0, counts[who] / k) if k else 0.0
            reply_models.append((allowed, p, weight))
        out = []
        for action, points in zip(view.legal_actions, view.move_points()):
            t = ACTION_TILE[action]
            score = w["points"] * points
            if points and points >= target_left:
                score += 1000.0
            left = view.hand & ~(1 << t)
            if not left:
                score += w["domino"] * pips_per_unseen * opp_tiles
                out.append(score)
                continue
            layout = view.layout_copy()
            layout.place(t, ACTION_END[action])
            for allowed, p, weight in reply_models:
                score += weight * expected_best(best_reply_points(layout, allowed), p)
            score -= heavy * mask_pips(left)
            pipset = 0
            for lt in mask_tiles(left):
                pipset |= TILE_PIP_MASK[lt]
            score += w["variety"] * pipset.bit_count()
            score += w["mobility"] * (left & layout.open_tiles).bit_count()
            if IS_DOUBLE[t]:
                score += w["double"]
            out.append(score)
        return out
