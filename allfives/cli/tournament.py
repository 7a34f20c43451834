"""``allfives tournament``: a round robin between agents, with duplicate deals, win-rate intervals and Elo ratings."""

from __future__ import annotations

import argparse

from allfives_env.episode import DEFAULT_MAX_HANDS

from .common import CLIError, add_rules_args, print_json_line, rules_from_args


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(
        name,
        help="round robin between agents: win rates with 95%% intervals, Elo ratings (docs/tournament.md)",
        description="Play every pairing of agents (every group in 3-4 player cut-throat games) and rate them.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: allfives tournament --players 2 --agents random,greedy,ismcts:iters=200,rollout=greedy "
        "--games 1000 --seed 1 --workers 4 --out results/\n"
        "         allfives tournament --agents greedy,ismcts:iters=100 --games 2000 --seed 1 --ray auto --out results/",
    )
    add_rules_args(p)
    p.add_argument(
        "--agents",
        action="append",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="named bots (fast, strong, strongest: allfives bots) or agent specs, comma- or space-separated, "
        "e.g. strong,expert or random,greedy,ismcts:iters=200,rollout=greedy",
    )
    p.add_argument("--games", type=int, required=True, help="games per pairing (per group in 3-4p cut-throat)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0, written in the results); every deal and agent seed derives from it")
    p.add_argument(
        "--duplicate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replay every deal with the seats rotated, so the luck of the deal cancels (default on)",
    )
    p.add_argument("--workers", type=int, help="processes that play games (default 1); with --ray: chunks of games in flight "
                   "(default: the cluster's CPUs; for a local Ray, also its CPUs)")
    p.add_argument(
        "--ray", nargs="?", const="local", metavar="ADDRESS",
        help="play the games as Ray tasks (docs/scale.md): no ADDRESS starts a local Ray, 'auto' joins the cluster "
        "of RAY_ADDRESS, HOST:PORT that one; the results are the same as without (needs .[scale])",
    )
    p.add_argument(
        "--max-hands", type=int, default=DEFAULT_MAX_HANDS,
        help="stop a game still undecided after this many hands and rank it by the scores (default %(default)s)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="write results.json, pairings.csv, ratings.csv, games.jsonl and winrates.png there"
    )
    p.add_argument(
        "--resume", action="store_true",
        help="keep the games already in --out's games.jsonl (from an interrupted run with the same arguments, "
        "or fewer --games of one pairing) and play only the rest",
    )
    p.add_argument("--force", action="store_true", help="replace the results of an earlier run in --out (without it, an --out "
                   "that holds games is refused unless --resume)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object on the last line")
    p.set_defaults(run=run)


def _check_policies(specs, rules) -> None:
    """Load each agent that reads a network once (a policy, a search's prior or model of play), so
    that one trained for another number of players is refused (``CLIError``) before anything is written."""
    from allfives_agents import make_agent

    for spec in specs:
        if not spec.files():
            continue
        try:
            make_agent(spec, rules=rules)
        except ValueError as exc:  # PolicyFileError (unreadable file, bad metadata), PolicyPlayersError
            raise CLIError(str(exc)) from None


def _refuse_earlier_run(out: str) -> None:
    """``CLIError`` if folder ``out`` holds the games of an earlier run (they would be replaced)."""
    from pathlib import Path

    records = Path(out) / "games.jsonl"
    if records.is_file() and records.stat().st_size > 0:
        with open(records, "rb") as f:
            games = sum(1 for line in f if line.strip())
        raise CLIError(f"--out {out} holds an earlier run ({games} games in games.jsonl): --resume to go on with it, "
                       "--force to replace it, or another --out")


def _resume_hint(args, records) -> str:
    """What goes on with a tournament Ray failed under: ``--resume`` and the same ``--out``, which keep its games."""
    if records is None:
        return "no game was kept (without --out); with --out DIR a stopped tournament goes on with --resume"
    again = "the same command" if args.resume else "the same command with --resume"
    return f"the games played are kept in {records}: {again} (the same --out) goes on with the rest"


def run(args) -> int:
    from allfives_agents import available, parse_specs
    from allfives_agents.bots import BOTS
    from allfives_agents.tournament import TournamentError, check_specs, run_tournament
    from allfives_agents.tournament.cluster import ClusterError, check_address, import_ray
    from allfives_agents.tournament.on_ray import RayLost

    rules = rules_from_args(args)
    try:  # the command line's text, parsed once; the tournament and its workers get the parsed specs
        specs = [spec.for_game(rules.num_players, rules.partnerships) for spec in parse_specs(v for group in args.agents for v in group)]
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if len(specs) < 2:
        raise CLIError(f"a tournament needs at least 2 agents, got {len(specs)} ({', '.join(map(str, specs)) or 'none'}); "
                       f"available: the bots {', '.join(BOTS)}; {available()}")
    if args.games < 1:
        raise CLIError("--games must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise CLIError("--workers must be at least 1")
    try:
        check_specs(specs)
        if args.ray is not None:
            check_address(args.ray)
            import_ray()
    except (TournamentError, ClusterError) as exc:
        raise CLIError(str(exc)) from None
    _check_policies(specs, rules)
    if args.resume and not args.out:
        raise CLIError("--resume needs --out DIR: the folder of the run to resume (its games.jsonl)")
    if args.resume and args.force:
        raise CLIError("--resume keeps the games of --out and --force replaces them: give one")
    if args.out and not args.resume and not args.force:
        _refuse_earlier_run(args.out)

    records = None
    if args.out:
        from allfives_agents.tournament.report import prepare_out_dir

        try:
            out = prepare_out_dir(args.out)
        except OSError as exc:
            raise CLIError(f"cannot use --out {args.out}: {exc}") from None
        records = out / "games.jsonl"

    try:
        result = run_tournament(
            specs,
            rules,
            games=args.games,
            seed=args.seed,
            duplicate=args.duplicate,
            workers=args.workers,
            ray=args.ray,
            max_hands=args.max_hands,
            progress=True,
            records=records,
            resume=args.resume,
        )
    except RayLost as exc:
        raise CLIError(f"{exc}; {_resume_hint(args, records)}") from None
    except TournamentError as exc:
        raise CLIError(str(exc)) from None

    from allfives_agents.tournament.report import PLOT_INSTALL, can_plot, format_report, write_outputs

    print(format_report(result))
    if args.out:
        try:
            paths = write_outputs(result, out)
        except OSError as exc:
            raise CLIError(f"cannot write to --out {args.out}: {exc}") from None
        print(f"\nwrote {', '.join(p.name for p in [records, *paths])} to {out}")
        if not can_plot():
            print(f"(no winrates.png: the plot needs matplotlib, {PLOT_INSTALL})")
    if args.json:
        print_json_line(result.to_dict())
    return 0
