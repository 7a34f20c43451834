"""``allfives replay``: replay game records through the engine, print them, and check every rule."""

from __future__ import annotations

import sys

from .common import print_json_line


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="replay allfives-record/1 files and check them against the rules")
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON Lines (or JSON) record files")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.add_argument("--json", action="store_true", help="print a summary as one JSON object on the last line")
    p.add_argument("--html", metavar="OUT", help="also write a self-contained page that steps through one game (pictures of every position)")
    p.add_argument("--game", type=int, default=1, metavar="K", help="with --html: the K-th game of the files (default 1)")
    p.set_defaults(run=run)


def describe_game(name: str, game) -> list[str]:
    """Readable lines: one per hand, and the final result."""
    lines = [f"{name}: seed {game.seed}, {game.num_players} players, {len(game.hand_logs)} hands"]
    for i, log in enumerate(game.hand_logs):
        result = log.result
        if result is None:
            lines.append(f"  hand {i + 1}: starter {log.starter}, unfinished")
            continue
        how = result["outcome"]
        if how == "domino":
            how = f"domino by seat {result['went_out']}"
        lines.append(
            f"  hand {i + 1}: starter {log.starter}, {len(log.events)} events, {how}, "
            f"penalties {result['penalties']}, scores {result['scores_after']}"
        )
    end = f"winner side {game.winner}" if game.winner is not None else "incomplete"
    lines.append(f"  final scores {game.scores}, {end}")
    return lines


def run(args) -> int:
    from allfives_env.engine.errors import RecordError
    from allfives_env.engine.record import replay_file

    from .common import CLIError, refuse_input_as_output

    if args.html is not None:
        try:
            refuse_input_as_output(args.html, args.files, "--html")
        except CLIError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.html is not None and args.game < 1:
        print(f"error: --game must be at least 1, got {args.game}", file=sys.stderr)
        return 2
    games = hands = 0
    chosen = None
    try:
        for path in args.files:
            for name, game in replay_file(path):
                games += 1
                hands += len(game.hand_logs)
                if games == args.game:
                    chosen = (name, game)
                if not args.quiet:
                    print("\n".join(describe_game(name, game)))
    except RecordError as exc:
        print(f"invalid record: {exc}", file=sys.stderr)
        if args.json:
            print_json_line({"valid": False, "games_checked": games, "error": str(exc)})
        return 1
    print(f"{games} games, {hands} hands replayed: every event follows the rules")
    if args.html is not None:
        if chosen is None:
            print(f"error: --game {args.game}: the files hold {games} games", file=sys.stderr)
            return 2
        from pathlib import Path

        from allfives.replay_page import replay_page
        from allfives_train.checkpoint import atomic_write

        atomic_write(Path(args.html), replay_page(chosen[1], f"All Fives: {chosen[0]}").encode())
        print(f"wrote {args.html}: {chosen[0]}, one picture per position")
    if args.json:
        print_json_line({"valid": True, "games": games, "hands": hands})
    return 0
