"""Checks of a game's own parameters (not rules options): the hand limit and the seed.

``Game`` checks them, and so do the layers above that take them before a game exists (the
episode options, the tournament), with the same messages.
"""

from __future__ import annotations


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_max_hands(max_hands) -> None:
    """``ValueError`` unless ``max_hands`` is a positive integer or ``None`` (no limit)."""
    if max_hands is not None and (not _is_int(max_hands) or max_hands < 1):
        raise ValueError(f"max_hands must be a positive integer or None, got {max_hands!r}")


def check_seed(seed) -> None:
    """``ValueError`` unless ``seed`` is an integer (``None`` is handled by the caller)."""
    if not _is_int(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")
