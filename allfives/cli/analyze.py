"""``allfives analyze``: every legal move of a position with its value and a 95% interval (allfives_agents.analysis)."""

from __future__ import annotations

import json
import sys

from .common import CLIError, print_json_line


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="estimate the value of every legal move of a position from sampled worlds")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("record", nargs="?", metavar="RECORD", help="an allfives-record/1 file; the position before --move of --hand")
    where.add_argument("--position", metavar="FILE", help="a position as the bot server's POST /move body (JSON: rules, seat, hand, history, scores)")
    p.add_argument("--game", type=int, default=1, metavar="K", help="with RECORD: the K-th game of the file (default 1)")
    p.add_argument("--hand", type=int, default=1, metavar="H", help="with RECORD: the hand, from 1 (default 1)")
    p.add_argument("--move", type=int, default=1, metavar="M", help="with RECORD: the M-th placement of the hand, from 1 (default 1)")
    p.add_argument("--policy", default="greedy", help="the agent spec that plays every seat in the playouts (default greedy)")
    p.add_argument("--worlds", type=int, default=200, help="sampled worlds (1..2000, default 200)")
    p.add_argument("--belief", metavar="MODEL", default=None,
                   help="weigh the worlds by how likely this network (a policy file or a shipped model's name) finds the other seats' choices")
    p.add_argument("--seconds", type=float, default=None, help="stop sampling after this wall time (at least one world)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the analysis as one JSON object")
    p.set_defaults(run=run)


def record_view(path: str, game_number: int, hand: int, move: int):
    """The view of the seat to place the ``move``-th tile of ``hand`` in the file's ``game_number``-th game."""
    from allfives_env.engine.record import replay_file, replay_positions

    count = 0
    for name, game in replay_file(path):
        count += 1
        if count == game_number:
            in_hand = [view for h, _, view, _ in replay_positions(game) if h == hand - 1]
            if 1 <= move <= len(in_hand):
                return in_hand[move - 1]
            if not in_hand:
                raise CLIError(f"{name}: --hand {hand}: the game has {len(game.hand_logs)} hands")
            raise CLIError(f"{name}: --move {move}: hand {hand} has {len(in_hand)} placements")
    raise CLIError(f"--game {game_number}: {path} holds {count} games")


def position_view(path: str):
    """The view of a JSON position, checked as the bot server checks a ``/move`` body."""
    from allfives.server.service import ApiError, check_request, request_view
    from allfives_env.engine import Rules

    try:
        with open(path, encoding="utf-8") as f:
            body = json.load(f)
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise CLIError(f"{path} is not valid JSON: {exc}") from None
    try:
        req = check_request(body)
        return request_view(req, Rules.from_dict(req["rules"]) if req["rules"] is not None else Rules.make())
    except ApiError as exc:
        raise CLIError(f"{path}: {exc.message}") from None
    except (TypeError, ValueError) as exc:  # the rules' own errors
        raise CLIError(f"{path}: {exc}") from None


def run(args) -> int:
    from allfives_agents.analysis import MAX_WORLDS, analyze, format_analysis
    from allfives_agents import AgentSpec
    from allfives_env.engine.errors import RecordError

    if not 1 <= args.worlds <= MAX_WORLDS:
        raise CLIError(f"--worlds must be in 1..{MAX_WORLDS}, got {args.worlds}")
    if args.seconds is not None and not args.seconds > 0:
        raise CLIError(f"--seconds must be > 0, got {args.seconds}")
    for flag in ("game", "hand", "move"):
        if getattr(args, flag) < 1:
            raise CLIError(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    try:
        policy = AgentSpec.parse(args.policy)
    except ValueError as exc:
        raise CLIError(f"--policy: {exc}") from None
    try:
        view = position_view(args.position) if args.position else record_view(args.record, args.game, args.hand, args.move)
    except RecordError as exc:
        print(f"invalid record: {exc}", file=sys.stderr)
        return 1
    try:
        result = analyze(view, policy, args.worlds, seed=args.seed, seconds=args.seconds, belief=args.belief)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.json:
        print_json_line(result)
    else:
        print(format_analysis(result))
    return 0
