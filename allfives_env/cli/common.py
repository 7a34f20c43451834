"""Shared pieces of the command line: rule options, errors, progress bars, JSON output."""

from __future__ import annotations

import argparse
import json
import sys


class CLIError(Exception):
    """A user error: printed as ``error: ...`` with exit status 2, never as a traceback."""


def hand_size_arg(text: str):
    """``--hand-size``: a name (standard, five, seven_five) or a number of tiles."""
    return int(text) if text.strip().isdigit() else text


def add_rules_args(parser: argparse.ArgumentParser, players_default: int | None = 2) -> None:
    """The options of RULES.md as flags."""
    g = parser.add_argument_group("rules (see docs/rules.md)")
    g.add_argument("--players", type=int, default=players_default, help="number of players, 2-4 (default %(default)s)")
    g.add_argument(
        "--partnerships",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="4-player partnership game (default: on with 4 players)",
    )
    g.add_argument("--hand-size", type=hand_size_arg, default="standard", help="standard, five, seven_five or a number")
    g.add_argument("--hand-end", default="subtract", help="subtract or winner_takes (default %(default)s)")
    g.add_argument("--reserve", type=int, default=0, help="boneyard tiles that can never be drawn (default 0)")
    g.add_argument("--target", type=int, default=None, help="score that wins (default 250 for 2p, 200 for 3-4p)")


def rules_from_args(args):
    """A validated ``Rules`` from the flags of ``add_rules_args``; ``CLIError`` naming a bad option."""
    from allfives_env.engine import Rules

    try:
        return Rules.make(
            num_players=args.players,
            partnerships=args.partnerships,
            hand_size=args.hand_size,
            boneyard_reserve=args.reserve,
            hand_end=args.hand_end,
            target_score=args.target,
        )
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def progress(total: int, desc: str, enabled: bool = True):
    """A progress bar on stderr that appears only when a run lasts more than a second."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", delay=1.0, disable=not enabled, file=sys.stderr, leave=False)


def print_json_line(obj) -> None:
    """Print one JSON object on one line (the last line of ``--json`` output)."""
    print(json.dumps(obj, separators=(", ", ": ")), flush=True)
