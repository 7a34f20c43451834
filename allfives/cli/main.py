"""Entry point of the ``allfives`` command: dispatches to one module per subcommand."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
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


@contextlib.contextmanager
def main_thread_takes_ctrl_c():
    """SIGINT blocked inside the block. numpy's BLAS starts its worker threads when numpy is first
    imported, and a thread keeps the mask it starts with; the kernel hands Ctrl-C to any thread that
    does not block it, and one that reached a BLAS thread left the main thread waiting in a prompt's
    read until the next line came (``allfives play``). A SIGINT sent meanwhile is delivered when the
    mask is lifted."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    saved = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, saved)


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    with main_thread_takes_ctrl_c():
        import numpy  # noqa: F401  (its BLAS threads start here, deaf to Ctrl-C)
    parser = build_parser()
    args = parser.parse_args(argv)
    # SIGTERM (kill, timeout, a scheduler's preemption) stops a command as Ctrl-C does: a run saves its
    # checkpoint and says how to resume, and worker processes are stopped with it
    signal.signal(signal.SIGTERM, _terminated)
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
