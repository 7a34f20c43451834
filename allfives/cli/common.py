"""Shared pieces of the command line: rule options, errors, progress bars, JSON output."""

from __future__ import annotations

import argparse
import json


class CLIError(Exception):
    """A user error: printed as ``error: ...`` with exit status 2, never as a traceback."""


def refuse_input_as_output(out: str, inputs, flag: str) -> None:
    """``CLIError`` if the output file ``out`` is one of the ``inputs`` (it would be overwritten while read)."""
    import os

    target = os.path.realpath(out)
    for name in inputs:
        if os.path.realpath(name) == target:
            raise CLIError(f"{flag} {out} is one of the input files: writing it would destroy what is read; choose another file")


#: short spellings of three rules flags, kept beside the full names (``--players 4`` = ``--num-players 4``)
SHORT_FLAGS = {"num_players": "--players", "boneyard_reserve": "--reserve", "target_score": "--target"}


def _int_or_name(text: str):
    """A number of tiles or a name (``--hand-size 6`` or ``--hand-size five``)."""
    return int(text) if text.strip().isdigit() else text


def _flag_type(option):
    if option.given is int:
        return int
    if option.given is str:
        return str
    return _int_or_name  # Union[int, str]


def add_rules_args(parser: argparse.ArgumentParser) -> None:
    """The rules options as flags, one per ``engine.rules.OPTIONS`` entry, named after it."""
    from allfives_env.engine.rules import OPTIONS

    g = parser.add_argument_group("rules (see docs/rules.md)")
    for option in OPTIONS:
        flags = ["--" + option.name.replace("_", "-")]
        if option.name in SHORT_FLAGS:
            flags.append(SHORT_FLAGS[option.name])
        help_text = option.help
        if option.choices and option.given is str:
            help_text += f" ({', '.join(option.choices)})"
        if option.given is bool:
            g.add_argument(*flags, dest=option.name, action=argparse.BooleanOptionalAction, default=option.default, help=help_text)
            continue
        if not option.resolved_later:
            help_text += " (default %(default)s)"
        g.add_argument(*flags, dest=option.name, type=_flag_type(option), default=option.default, help=help_text)


def rules_from_args(args):
    """A validated ``Rules`` from the flags of ``add_rules_args``; ``CLIError`` naming a bad option."""
    from allfives_env.engine.rules import OPTION_NAMES, Rules

    try:
        return Rules.make(**{name: getattr(args, name) for name in OPTION_NAMES})
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def print_json_line(obj) -> None:
    """Print one JSON object on one line (the last line of ``--json`` output)."""
    print(json.dumps(obj, separators=(", ", ": ")), flush=True)
