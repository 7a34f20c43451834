"""Helpers for building explicit positions in tests: tiles by name, deals with a filled boneyard."""

from __future__ import annotations

import subprocess
import sys

from allfives_env.engine import Deal, Game, Rules, encode_action, tile_index


def run_cli(*args, stdin: str | None = None, cwd=None, env=None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``allfives ARGS`` in a fresh interpreter, as a user runs it (text output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "allfives.cli.main", *map(str, args)],
        input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
    )


def T(name: str) -> int:
    """Tile index from ``"a-b"``."""
    return tile_index(name)


def A(tile: str, end: str) -> int:
    """Action id from a tile name and an end name (``lead`` = west)."""
    return encode_action(tile, end)


def make_deal(hands: list[list[str]], boneyard: list[str] = (), starter: int | None = 0) -> Deal:
    """A deal of the named tiles; the boneyard continues after ``boneyard`` with every tile not named, ascending."""
    named = [T(t) for h in hands for t in h] + [T(t) for t in boneyard]
    rest = [t for t in range(28) if t not in named]
    return Deal(tuple(tuple(T(t) for t in h) for h in hands), tuple(T(t) for t in boneyard) + tuple(rest), starter)


def game_from(hands, boneyard=(), starter=0, seed=0, extra_deals=(), **options) -> Game:
    """A game whose first hand is the given deal (``hand_size`` defaults to the hands' size)."""
    options.setdefault("num_players", len(hands))
    options.setdefault("hand_size", len(hands[0]))
    rules = Rules.make(**options)
    deals = [make_deal(hands, boneyard, starter), *extra_deals]
    return Game(rules, seed, deals=deals)
