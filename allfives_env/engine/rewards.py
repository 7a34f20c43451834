"""Per-side outcome values shared by the environments and the search agent (zero-sum across sides)."""

from __future__ import annotations


def zero_sum(deltas: list[int]) -> list[float]:
    """Per side: its change minus the mean change of the other sides (sums to zero)."""
    k = len(deltas)
    total = sum(deltas)
    return [d - (total - d) / (k - 1) for d in deltas]


def win_rewards(scores: list[int], winner: int | None) -> list[float]:
    """Per side: +1 for the winner, the loss spread so that the rewards sum to zero (all 0 with no winner)."""
    k = len(scores)
    if winner is None:
        return [0.0] * k
    loss = -1.0 if k == 2 else -1.0 / (k - 1)
    return [1.0 if side == winner else loss for side in range(k)]


def hand_winner(scores: list[int]) -> int | None:
    """The side with the strictly highest score, else None."""
    best = max(scores)
    return scores.index(best) if scores.count(best) == 1 else None
