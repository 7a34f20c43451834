"""``allfives play``: a person plays All Fives against the bots in the terminal.

The game loop and input parsing are in ``allfives.play``, the drawing in ``allfives.tui``.
"""

from __future__ import annotations

import os
import random
import sys

from .common import CLIError, add_rules_args, rules_from_args


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="play against the bots in the terminal")
    add_rules_args(p)
    p.add_argument(
        "--opponent",
        default="expert",
        help="the bots' agent spec, or a policy file (.zip/.npz -> ppo:PATH, .onnx -> onnx:PATH) (default %(default)s)",
    )
    p.add_argument("--partner", help="your partner's agent spec in a 4-player partnership game (default: as --opponent)")
    p.add_argument("--hint-bot", help="agent whose preference 'hint' shows (default: as --opponent)")
    p.add_argument("--seat", type=int, default=0, help="your seat, 0 to players-1 (default 0)")
    p.add_argument("--seed", type=int, default=None, help="deals and bot choices (default: a random seed, printed)")
    p.add_argument("--save", metavar="FILE", help="write the game record (allfives-record/1) to FILE when the game stops")
    p.add_argument("--no-color", action="store_true", help="plain text, no colour")
    p.set_defaults(run=run)


def _agent(spec: str, seed: int, flag: str, rules):
    from agents import make_agent, resolve_spec
    from agents.policy import check_policy_players

    try:
        agent = make_agent(resolve_spec(spec), seed=seed)
        check_policy_players(agent, rules)
    except ValueError as exc:  # unknown agents and options, missing or unreadable policy files, other players
        raise CLIError(f"{flag}: {exc}") from None
    return agent


def run(args) -> int:
    try:
        from allfives import tui
    except ImportError as exc:
        raise CLIError(f"allfives play needs rich (pip install 'allfives[play]'): {exc}") from None
    from allfives_env.engine import Game
    from allfives_env.engine.seeding import derive_seed
    from agents import resolve_spec
    from agents.policy import check_policy_players
    from allfives.play import PlaySession, hint_agent, line_reader

    rules = rules_from_args(args)
    n = rules.num_players
    if not 0 <= args.seat < n:
        raise CLIError(f"--seat must be 0 to {n - 1} with {n} players, got {args.seat}")
    if args.partner is not None and not rules.partnerships:
        raise CLIError("--partner needs a 4-player partnership game (--players 4)")
    if args.save:
        folder = os.path.dirname(os.path.abspath(args.save))
        if not os.path.isdir(folder):
            raise CLIError(f"--save: no such folder: {folder}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    partner = rules.partner_of(args.seat)
    agents = {}
    for s in range(n):
        if s == args.seat:
            continue
        spec, flag = (args.partner, "--partner") if s == partner and args.partner is not None else (args.opponent, "--opponent")
        agents[s] = _agent(spec, derive_seed(seed, "play", "seat", s), flag, rules)
    try:
        hinter = hint_agent(resolve_spec(args.hint_bot or args.opponent), agents, derive_seed(seed, "play", "hint"))
        check_policy_players(hinter, rules)
    except ValueError as exc:
        raise CLIError(f"--hint-bot: {exc}") from None
    players = ["human" if s == args.seat else agents[s].name for s in range(n)]

    color = not args.no_color and sys.stdout.isatty()
    console = tui.make_console(color)
    screen = tui.Screen(console, rules, args.seat)
    game = Game(rules, seed)
    screen.intro(seed, players)
    session = PlaySession(game, args.seat, agents, screen, line_reader(console), hinter)
    stopped = session.run()
    if stopped == "interrupted":
        console.print()
    screen.final(game, stopped)
    if args.save:
        from allfives_env.engine.record import write_records

        try:
            write_records([game.to_record(players)], args.save)
        except OSError as exc:
            print(f"error: cannot write the game record to {args.save}: {exc}", file=sys.stderr)
            return 2
        screen.note(f"game record written to {args.save} (check it with: allfives replay {args.save})")
    elif stopped != "finished":
        screen.note("to keep the game record next time, start with --save FILE")
    return 0
