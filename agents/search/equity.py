"""Match equity: a side's chance to win the game from the scores at the start of a hand.

A hand's points are worth more or less by the score: ten points when the opponents need five to
win are not ten points at 0-0. ``MatchEquity(rules)`` tabulates, for games of two sides (two
players, or two partnerships), the probability that side 0 wins from every pair of scores,
as backgammon players do with match equity tables. The table comes from the distribution of hand
outcomes in ``expert`` self-play (``HANDS`` hands dealt from ``SEED``, played to the end whatever
the target, each counted for both sides so that neither side is favoured), solved by value iteration:

    E(a, b) = sum over outcomes of p * E(a + gain_a + end_a, b + gain_b + end_b)

where ``gain`` is what a side scores by placements during the hand and ``end`` what it loses or
takes when the hand ends (docs/specification.md "End of a hand"). A side whose ``score + gain`` reaches the
target has won in the hand (both: a coin flip, as the order is not modelled); so has a side whose
end-of-hand bonus takes it there. Scores below ``-target`` count as ``-target``. Who starts the
next hand is not modelled. Scores are in points; the table's step is five, the game's unit.
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np

from allfives_env.engine import Game
from allfives_env.engine.events import PLAY
from allfives_env.engine.rules import MAX_TARGET, Rules

#: the self-play hands the outcome distribution is counted from, and their seed
HANDS = 3000
SEED = 20261202
#: the game's scoring unit: every score change is a multiple of it
UNIT = 5


class EquityError(ValueError):
    """The rules have no match equity table (not two sides)."""


def hand_outcomes(rules: Rules, hands: int = HANDS, seed: int = SEED) -> Counter:
    """``(gain_0, gain_1, end_0, end_1)`` in units of five, counted over ``hands`` expert self-play
    hands from 0-0 (played with no target in reach), each also counted with the sides swapped."""
    from ..expert import ExpertAgent  # the agents package imports this module's users

    free = Rules.from_dict(dict(rules.to_dict(), target_score=MAX_TARGET))
    expert = ExpertAgent()
    counts: Counter = Counter()
    side_of = free.side_of
    for h in range(hands):
        game = Game(free, seed=seed + h, max_hands=1)
        while not game.over:
            game.step(expert.act(game.view(game.current_player)))
        log = game.hand_logs[-1]
        gain = [0, 0]
        for e in log.events:
            if e[0] == PLAY:
                gain[side_of[e[1]]] += e[4]
        end = list(log.result["bonus"])
        for s, penalty in enumerate(log.result["penalties"]):
            end[side_of[s]] -= penalty
        g, d = [x // UNIT for x in gain], [x // UNIT for x in end]
        counts[(g[0], g[1], d[0], d[1])] += 1
        counts[(g[1], g[0], d[1], d[0])] += 1
    return counts


class MatchEquity:
    """Side 0's chance to win from scores ``(a, b)`` at a hand's start: ``equity(a, b)``."""

    def __init__(self, rules: Rules, hands: int = HANDS, seed: int = SEED, tol: float = 1e-5) -> None:
        if rules.num_sides != 2:
            raise EquityError(f"match equity needs two sides, these rules have {rules.num_sides}")
        self.target = rules.target_score
        t = -(-self.target // UNIT)  # a score of t units or more has won
        self.low = -t
        outcomes = hand_outcomes(rules, hands, seed)
        total = sum(outcomes.values())
        size = 2 * t  # units from -t to t - 1
        a = np.arange(self.low, t)[:, None]
        b = np.arange(self.low, t)[None, :]
        fixed = np.zeros((size, size))  # the chance of winning in this hand
        moves: dict[tuple[int, int], np.ndarray] = {}  # per net change: the chance the hand ends with it, the game going on
        for (ga, gb, ea, eb), count in outcomes.items():
            p = count / total
            reach_a, reach_b = a + ga >= t, b + gb >= t
            na, nb = ga + ea, gb + eb
            fixed += p * np.where(reach_a & reach_b, 0.5, np.where(reach_a, 1.0, 0.0))
            fixed += p * (~reach_a & ~reach_b & (a + na >= t))
            goes_on = ~reach_a & ~reach_b & (a + na < t) & (b + nb < t)
            if (na, nb) in moves:
                moves[(na, nb)] += p * goes_on
            else:
                moves[(na, nb)] = p * goes_on
        pad = max(0, -min(min(d) for d in moves))  # scores below -target count as -target
        over = max(0, max(max(d) for d in moves))
        table = np.full((size, size), 0.5)
        for sweeps in range(2000):
            padded = np.pad(table, ((pad, over), (pad, over)), mode="edge")
            new = fixed.copy()
            for (da, db), weight in moves.items():
                new += weight * padded[pad + da : pad + da + size, pad + db : pad + db + size]
            done = np.abs(new - table).max() < tol
            table = new
            if done:
                break
        self.iterations = sweeps + 1
        self.table = table

    def equity(self, a: int, b: int) -> float:
        """Side 0's chance to win from scores ``a`` (side 0) and ``b`` (side 1), in points."""
        t = self.table.shape[0] + self.low
        if a >= self.target:
            return 1.0 if b < self.target else 0.5
        if b >= self.target:
            return 0.0
        i = min(max(a // UNIT, self.low), t - 1) - self.low
        j = min(max(b // UNIT, self.low), t - 1) - self.low
        return float(self.table[i, j])


@functools.lru_cache(maxsize=8)
def match_equity(rules: Rules) -> MatchEquity:
    """The table for ``rules``, built once per process."""
    return MatchEquity(rules)
