"""Two tournament runs on the same deals, compared deal by deal: the paired difference of a win rate.

Two ``allfives tournament ... --seed S --out DIR`` runs with the same seed play the same deals
(``allfives_agents.tournament.run``: a game is a pure function of the seed, its deal and the seating). When one
agent changed between them (``ismcts:...`` against ``ismcts:...,belief=policy``, both against
``expert``), the difference of its win rates is measured far more sharply per deal than by the
two runs' own intervals, since the luck of each deal cancels. This reads both runs' records
(``games.jsonl``), matches games by deal seed and the agent's seats, and prints both rates and the
mean paired difference with a 95% interval over deals (a normal interval of the per-deal
differences; a deal is the unit, as its seat-swapped games share its luck).

Several pairs of runs (each pair on its own deal set: other seeds, other tournaments) pool into one
difference over all their deals: ``A1 B1 A2 B2 ...``. ``--against NAME`` keeps only the games the
agent played against that agent (one pairing of a round robin).

    python benchmarks/paired_runs.py runs/new runs/old --agent-a "ismcts:iters=100,policy=allfives_2p,belief=policy" --agent-b "ismcts:iters=100,policy=allfives_2p"
    python benchmarks/paired_runs.py new_s43 old_s43 new_s18 old_s18 --agent-a ppo:NEW.zip --agent-b ppo:OLD.zip --against expert
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allfives_env.engine.rules import Rules  # noqa: E402
from allfives_agents.tournament.stats import meeting_share  # noqa: E402


class RunError(ValueError):
    """A run that cannot be compared; the message names the file and the problem."""


def shares(run: Path, agent: str, against: str | None = None) -> dict[tuple, float]:
    """Per game (the other agents, the deal seed, the agent's seats): the agent's share of its meetings with the other
    agents' sides (``meeting_share``, as the tournament counts them: 1 ahead, 0 behind, 0.5 level),
    the mean over them where it meets more than one (3 players; a repeated agent, once per seat)."""
    path = Path(run) / "games.jsonl"
    if not path.exists():
        raise RunError(f"{path}: no such file (run the tournament with --out)")
    out: dict[tuple[int, int], float] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                record = json.loads(line)
                players, seed, winner = record["players"], record["seed"], record["winner"]
                rules = Rules.from_dict(record["rules"])
                scores = record["final_scores"]
                seats = [s for s, name in enumerate(players) if name == agent]
                opponents = tuple(sorted({name for name in players if name != agent}))
                if against is not None and opponents != (against,):
                    continue
                mine = {rules.side_of[s] for s in seats}
                others = {rules.side_of[s] for s, name in enumerate(players) if name != agent} - mine
                meetings = [meeting_share(winner, scores, u, v) for u in mine for v in others]
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise RunError(f"{path}, line {number}: not a game record: {exc}") from None
            if meetings:  # a round robin plays each deal once per pairing: the opponents are in the key
                out[(opponents, seed, tuple(seats))] = sum(meetings) / len(meetings)
    if not out:
        raise RunError(f"{path}: no game of {agent!r}" + (f" against {against!r}" if against is not None else ""))
    return out


def compare(a: dict, b: dict) -> dict:
    """Both rates over the games the two runs share, and the paired difference (in points of rate)."""
    keys = sorted(set(a) & set(b))
    if not keys:
        raise RunError("the runs share no game: were they played with the same --seed?")
    per_deal: dict[tuple, list[float]] = defaultdict(list)
    for key in keys:
        per_deal[key[:-1]].append(a[key] - b[key])  # all but the seats: the deal
    diffs = [sum(d) / len(d) for d in per_deal.values()]
    n = len(diffs)
    mean = sum(diffs) / n
    half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1) / n) if n > 1 else 0.0
    return dict(games=len(keys), deals=n, a_rate=round(sum(a[k] for k in keys) / len(keys), 4),
                b_rate=round(sum(b[k] for k in keys) / len(keys), 4), difference=round(mean, 4),
                ci_low=round(mean - half, 4), ci_high=round(mean + half, 4))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", metavar="RUN_A RUN_B", help="the --out folders of a pair of runs on the same --seed; more pairs pool their deals")
    parser.add_argument("--agent-a", required=True, help="the agent's label in the first run")
    parser.add_argument("--agent-b", required=True, help="the agent's label in the second run")
    parser.add_argument("--against", help="only the games against this agent (its label in the runs)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if len(args.runs) % 2:
        parser.error(f"runs come in pairs (RUN_A RUN_B ...), got {len(args.runs)}")
    try:
        a, b = {}, {}
        for i in range(0, len(args.runs), 2):
            pair = i // 2
            a.update({(pair, *k): v for k, v in shares(Path(args.runs[i]), args.agent_a, args.against).items()})
            b.update({(pair, *k): v for k, v in shares(Path(args.runs[i + 1]), args.agent_b, args.against).items()})
        report = compare(a, b)
    except RunError as exc:
        print(f"paired_runs: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{report['games']} games on {report['deals']} deals: {100 * report['a_rate']:.2f}% against "
              f"{100 * report['b_rate']:.2f}%, paired difference {100 * report['difference']:+.2f} points "
              f"[{100 * report['ci_low']:+.2f}, {100 * report['ci_high']:+.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
