"""Derive independent, reproducible seeds from one base seed (for many games, workers, agents)."""

from __future__ import annotations

import hashlib


def derive_seed(base: int, *keys) -> int:
    """A 63-bit seed determined by ``base`` and ``keys`` (ints or strings), stable across runs and platforms."""
    text = ":".join(str(k) for k in (base, *keys))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1
