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
        help="the bots: a named bot (allfives bots), an agent spec, or a policy file (.zip/.npz -> ppo:PATH, "
        ".onnx -> onnx:PATH) (default: the named bot 'strong' where it has a setting for the game, else expert)",
    )
    p.add_argument("--partner", help="your partner's agent spec in a 4-player partnership game (default: as --opponent)")
    p.add_argument("--hint-bot", help="agent whose preference 'hint' shows (default: as --opponent)")
    p.add_argument("--seat", type=int, default=0, help="your seat, 0 to players-1 (default 0)")
    p.add_argument("--seed", type=int, default=None, help="deals and bot choices (default: a random seed, printed)")
    p.add_argument("--save", metavar="FILE", help="write the game record (allfives-record/1) to FILE when the game stops")
    p.add_argument("--no-color", action="store_true", help="plain text, no colour")
    p.set_defaults(run=run)


def _agent(spec, seed: int, flag: str, rules):
    from allfives_agents import make_agent

    try:
        agent = make_agent(spec, seed=seed, rules=rules)  # a network trained for another game is refused
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
    from allfives_agents import AgentSpec
    from allfives_agents.bots import default_bot
    from allfives.play import PlaySession, hint_agent, line_reader

    rules = rules_from_args(args)
    if args.opponent is None:
        args.opponent = default_bot(rules.num_players, rules.partnerships)
    specs = {}
    for flag, text in (("--opponent", args.opponent), ("--partner", args.partner), ("--hint-bot", args.hint_bot)):
        try:  # parsed once, here; a named bot picks its setting for the rules
            specs[flag] = AgentSpec.parse(text) if text is not None else None
        except ValueError as exc:
            raise CLIError(f"{flag}: {exc}") from None
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
        flag = "--partner" if s == partner and args.partner is not None else "--opponent"
        spec = specs[flag]
        agents[s] = _agent(spec, derive_seed(seed, "play", "seat", s), flag, rules)
    try:
        # a copy of a seated bot, or one built for these rules: its networks are checked either way
        hinter = hint_agent(specs["--hint-bot"] or specs["--opponent"], agents, derive_seed(seed, "play", "hint"), rules)
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
