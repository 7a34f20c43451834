"""Decision time of agents (search bots above all) on the same positions: median, 95th percentile, mean.

The positions are the decisions with two or more legal moves of games that ``expert`` plays
against itself from seeded deals. Every agent decides every position, the agents taking turns
position by position (so machine noise hits all alike), each reseeded per position; for search
agents also the mean of the iterations run (fewer than ``iters`` with ``stop=early``). Use it to
calibrate iteration budgets to equal time (``ismcts:iters=N`` against
``ismcts:iters=M,policy=allfives_2p``) and to report the time a budget costs.

    python benchmarks/search_time.py --agents ismcts:iters=100 ismcts:iters=100,policy=allfives_2p --positions 300
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allfives_agents import make_agent  # noqa: E402
from allfives_env.engine import Game  # noqa: E402
from allfives_env.engine.rules import Rules  # noqa: E402


def positions(rules: Rules, count: int, seed: int) -> list:
    """``count`` views with two or more legal moves, from expert self-play games of seeded deals."""
    expert = make_agent("expert")
    found = []
    game_seed = seed
    while len(found) < count * 4:
        game = Game(rules, seed=game_seed)
        game_seed += 1
        while not game.over:
            view = game.view(game.current_player)
            if len(view.legal_actions) > 1:
                found.append(view)
            game.step(expert.act(view))
    return random.Random(seed).sample(found, count)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=["ismcts:iters=100", "ismcts:iters=100,policy=allfives_2p"])
    parser.add_argument("--players", type=int, default=2, help="2-4 (4: partnerships)")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    rules = Rules.make(num_players=args.players)
    views = positions(rules, args.positions, args.seed)
    agents = [make_agent(spec) for spec in args.agents]
    times: list[list[float]] = [[] for _ in agents]
    iterations: list[list[int]] = [[] for _ in agents]  # of search agents (``agent.iterations``)
    for i, view in enumerate(views):
        for k in range(len(agents)):
            j = (i + k) % len(agents)
            agents[j].reset(args.seed + i)
            start = time.perf_counter()
            agents[j].act(view)
            times[j].append(time.perf_counter() - start)
            if hasattr(agents[j], "iterations"):
                iterations[j].append(agents[j].iterations)
    report = {"positions": len(views), "players": args.players, "agents": []}
    for spec, ts, its in zip(args.agents, times, iterations):
        report["agents"].append({
            "agent": spec,
            "median_ms": round(statistics.median(ts) * 1e3, 3),
            "p95_ms": round(percentile(ts, 0.95) * 1e3, 3),
            "mean_ms": round(statistics.fmean(ts) * 1e3, 3),
            "mean_iterations": round(statistics.fmean(its), 1) if its else None,
        })
    base = report["agents"][0]["mean_ms"]
    for row in report["agents"]:
        row["mean_ratio"] = round(row["mean_ms"] / base, 3) if base > 0 else None
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{len(views)} positions, {args.players} players")
        for row in report["agents"]:
            iters = f"  iterations {row['mean_iterations']:.0f}" if row["mean_iterations"] is not None else ""
            print(f"{row['agent']:<50} median {row['median_ms']:8.2f} ms  p95 {row['p95_ms']:8.2f} ms  "
                  f"mean {row['mean_ms']:8.2f} ms  x{row['mean_ratio']}{iters}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
