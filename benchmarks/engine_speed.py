"""Engine speed: random-playout moves/s of the All Fives engine beside OpenSpiel's python_block_dominoes.

Both play complete games with uniformly random legal moves on one core, for the same number of
seconds, interleaved in rounds so that machine noise hits both alike. A move is a decision of a
player (OpenSpiel's chance nodes, the deal, are not counted; our forced draws and passes happen
inside a move). Prints each figure and the ratio; ``--json`` adds one JSON line.

    python benchmarks/engine_speed.py --seconds 10
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time


def allfives_moves(seconds: float, players: int, seed: int) -> tuple[int, float]:
    from allfives_env.engine import Game, Rules

    rules = Rules.make(num_players=players)
    rng = random.Random(seed)
    choice = rng.choice
    moves = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game = Game(rules, seed + games)
        step, legal = game.step, game.legal_actions
        while not game.over:
            step(choice(legal()))
            moves += 1
        games += 1
    return moves, time.perf_counter() - start


def openspiel_moves(seconds: float, seed: int, game_name: str = "python_block_dominoes") -> tuple[int, float]:
    import pyspiel
    from open_spiel.python.games import block_dominoes  # noqa: F401  (registers the python games)

    game = pyspiel.load_game(game_name)
    rng = random.Random(seed)
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                moves += 1
    return moves, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per contestant in all (default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--players", type=int, default=2, help="All Fives players (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        parser.exit(2, "OpenSpiel is not installed: pip install open_spiel (the [bench] extra)\n")
    per_round = args.seconds / args.rounds
    ours, theirs = [], []
    for r in range(args.rounds):
        m, s = allfives_moves(per_round, args.players, args.seed + r)
        ours.append(m / s)
        m, s = openspiel_moves(per_round, args.seed + r)
        theirs.append(m / s)
    ratios = [a / b for a, b in zip(ours, theirs)]
    result = {
        "allfives_moves_per_s": round(statistics.median(ours)),
        "openspiel_block_dominoes_moves_per_s": round(statistics.median(theirs)),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratio_min": round(min(ratios), 2),
        "rounds": args.rounds,
        "seconds_per_round": per_round,
        "players": args.players,
    }
    print(f"All Fives engine ({args.players}p):   {result['allfives_moves_per_s']:>10,} moves/s (median of {args.rounds})")
    print(f"OpenSpiel python_block_dominoes: {result['openspiel_block_dominoes_moves_per_s']:>10,} moves/s")
    print(f"ratio: {result['ratio_median']}x (lowest round {result['ratio_min']}x)")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
