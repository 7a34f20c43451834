"""``allfives simulate``: play complete games with uniformly random legal moves and summarise them."""

from __future__ import annotations

import random
import time

from allfives_env.progress import progress

from .common import CLIError, add_rules_args, print_json_line, rules_from_args


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="play random games; print games/s, moves/s and game statistics")
    add_rules_args(p)
    p.add_argument("--games", type=int, required=True, help="number of complete games")
    p.add_argument("--seed", type=int, required=True, help="base seed (game i is dealt from a seed derived from it)")
    p.add_argument("--records", metavar="FILE", help="write every game as an allfives-record/1 line (JSON Lines)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    p.set_defaults(run=run)


def simulate(rules, games: int, seed: int, keep_records: bool = False, show_progress: bool = True) -> dict:
    """Play ``games`` random games; return the summary (and the records under ``"records"``)."""
    from allfives_env.engine import PLAY, Game
    from allfives_env.engine.seeding import derive_seed

    moves = hands = play_points = 0
    records = []
    bar = progress(games, "simulate", enabled=show_progress)
    start = time.perf_counter()
    for i in range(games):
        game = Game(rules, derive_seed(seed, "game", i))
        choice = random.Random(derive_seed(seed, "moves", i)).choice
        step = game.step
        legal = game.legal_actions
        while not game.over:
            step(choice(legal()))
            moves += 1
        hands += len(game.hand_logs)
        play_points += sum(e[4] for log in game.hand_logs for e in log.events if e[0] == PLAY)
        if keep_records:
            records.append(game.to_record(["random"] * rules.num_players))
        bar.update()
    seconds = time.perf_counter() - start
    bar.close()
    summary = {
        "games": games,
        "hands": hands,
        "moves": moves,
        "seconds": round(seconds, 4),
        "games_per_s": round(games / seconds, 2) if seconds else None,
        "moves_per_s": round(moves / seconds, 1) if seconds else None,
        "mean_hands_per_game": round(hands / games, 3) if games else None,
        "mean_points_per_hand": round(play_points / hands, 3) if hands else None,
        "rules": rules.to_dict(),
        "seed": seed,
    }
    if keep_records:
        summary["records"] = records
    return summary


def run(args) -> int:
    rules = rules_from_args(args)
    if args.games < 1:
        raise CLIError("--games must be at least 1")
    summary = simulate(rules, args.games, args.seed, keep_records=bool(args.records))
    if args.records:
        from allfives_env.engine.record import write_records

        try:
            write_records(summary.pop("records"), args.records)
        except OSError as exc:
            raise CLIError(f"cannot write records to {args.records}: {exc}") from None
    print(
        f"{summary['games']} games, {summary['hands']} hands, {summary['moves']} moves in {summary['seconds']:.2f} s: "
        f"{summary['games_per_s']} games/s, {summary['moves_per_s']} moves/s"
    )
    print(
        f"mean hands per game {summary['mean_hands_per_game']}, mean points scored in play per hand "
        f"{summary['mean_points_per_hand']}"
    )
    if args.records:
        print(f"records written to {args.records}")
    if args.json:
        print_json_line(summary)
    return 0
