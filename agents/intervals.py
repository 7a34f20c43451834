"""The 95% Wilson score interval of a proportion: the intervals of tournaments and of the move analysis."""

from __future__ import annotations

import math

#: two-sided 95% normal quantile
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n`` (``successes`` may hold half wins).

    ``center ± half`` with ``center = (p + z²/2n) / (1 + z²/n)`` and
    ``half = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)``; ``(0, 1)`` when ``n == 0``.
    """
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    p = successes / n
    z2n = z * z / n
    denom = 1 + z2n
    center = (p + z2n / 2) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    # at p = 0 or 1 one end is exactly 0 or 1 (rounding would leave it a hair inside)
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high
