"""Entry point of the ``allfives`` command: dispatches to one module per subcommand."""

from __future__ import annotations

import argparse
import importlib
import sys

from .common import CLIError

#: subcommand name -> module in this package that defines ``add_parser`` and ``run``
COMMANDS = {
    "bots": "allfives.cli.bots",
    "simulate": "allfives.cli.simulate",
    "replay": "allfives.cli.replay",
    "analyze": "allfives.cli.analyze",
    "fit-play": "allfives.cli.fit_play",
    "play": "allfives.cli.play",
    "tournament": "allfives.cli.tournament",
    "train": "allfives.cli.train",
    "exploit": "allfives.cli.exploit",
    "export": "allfives.cli.export",
    "serve": "allfives.cli.serve",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="allfives", description="All Fives dominoes: engine, bots, training, tournaments.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in COMMANDS.items():
        importlib.import_module(module).add_parser(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except CLIError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into a command that stopped reading (``| head``)
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
