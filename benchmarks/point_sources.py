"""Where an agent's points come from: per hand, its seats' and the other seats' play points, draws,
passes, hand-end penalties and bonuses, and who went out, from tournament records.

A win rate says who is stronger, not how: two agents that beat ``expert`` by the same margin may
score more themselves or hold ``expert`` to less, win on the plays or on the count at the end of a
hand. This replays each run's records through the engine (``allfives_env.engine.record``: a record
that does not replay is refused with the line that broke) and sums every hand's events by whose
seat made them. Figures are per hand and per seat, so 3-player groups with two seats of one agent
compare with 2- and 4-player tables. A side's final score is its play points plus its bonuses less
its penalties over the game's hands, and the totals are checked against the records' final scores.

    python benchmarks/point_sources.py runs/net_4p runs/strong_4p --agent 'ppo:models/allfives_4p.zip' --agent strong
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allfives_env.engine.events import DRAW, PLAY  # noqa: E402
from allfives_env.engine.record import RecordError, read_records, replay_record  # noqa: E402

#: the figures per hand and seat, in the report's order: (key, label)
FIGURES = (
    ("play", "play points"),
    ("scoring", "scoring plays"),
    ("plays", "plays"),
    ("draws", "draws"),
    ("passes", "passes"),
    ("penalty", "hand-end penalties"),
    ("bonus", "hand-end bonuses"),
    ("out", "went out"),
    ("net", "net points"),
)


class SourcesError(ValueError):
    """A run that cannot be read; the message names the file and the problem."""


def sources(run: Path, agent: str) -> dict:
    """The totals of ``run``'s records (``RUN/games.jsonl`` or a records file) for ``agent``'s seats
    (``ours``) and every other seat (``theirs``), with the seat-hands each total is over."""
    path = Path(run)
    if path.is_dir():
        path = path / "games.jsonl"
    if not path.exists():
        raise SourcesError(f"{path}: no such file (run the tournament with --out)")
    totals = {"ours": Counter(), "theirs": Counter()}
    games = hands = blocked = 0
    try:
        for where, record in read_records(path):
            game = replay_record(record, name=where)
            seats = [s for s, name in enumerate(record.get("players") or []) if name == agent]
            if not seats:
                continue
            games += 1
            rules = game.rules
            whose = ["ours" if s in seats else "theirs" for s in range(rules.num_players)]
            mine = {rules.side_of[s] for s in seats}
            side_whose = ["ours" if side in mine else "theirs" for side in range(rules.num_sides)]
            for log in game.hand_logs:
                hands += 1
                for who in whose:
                    totals[who]["seat_hands"] += 1
                for event in log.events:
                    t = totals[whose[event[1]]]
                    if event[0] == PLAY:
                        t["play"] += event[4]
                        t["plays"] += 1
                        t["scoring"] += event[4] > 0
                    elif event[0] == DRAW:
                        t["draws"] += 1
                    else:
                        t["passes"] += 1
                result = log.result or {}
                for s, penalty in enumerate(result.get("penalties", ())):
                    totals[whose[s]]["penalty"] += penalty
                for side, bonus in enumerate(result.get("bonus", ())):
                    totals[side_whose[side]]["bonus"] += bonus
                if result.get("outcome") == "domino":
                    totals[whose[result["went_out"]]]["out"] += 1
                elif result.get("outcome") == "blocked":
                    blocked += 1
            for side, (score, initial) in enumerate(zip(game.scores, game.initial_scores)):
                totals[side_whose[side]]["final"] += score - initial
    except RecordError as exc:
        raise SourcesError(str(exc)) from None  # it names the file and line
    if not games:
        raise SourcesError(f"{path}: no game of {agent!r}")
    for who, t in totals.items():
        t["net"] = t["play"] + t["bonus"] - t["penalty"]
        if t["net"] != t["final"]:
            raise SourcesError(f"{path}: the {who} seats' points ({t['net']}) do not add up to their final scores ({t['final']})")
    return {"run": str(run), "agent": agent, "games": games, "hands": hands, "blocked": blocked, "totals": totals}


def per_hand(report: dict) -> dict:
    """Each figure (``FIGURES``, the net points among them) per hand and seat, for ``ours`` and ``theirs``."""
    out = {}
    for who, t in report["totals"].items():
        n = max(t["seat_hands"], 1)
        out[who] = {key: t[key] / n for key, _ in FIGURES}
    out["blocked"] = report["blocked"] / max(report["hands"], 1)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="tournament --out directories (or records files)")
    parser.add_argument("--agent", action="append", required=True,
                        help="the agent whose seats are 'ours', as the records name it; once, or once per run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    agents = args.agent * len(args.runs) if len(args.agent) == 1 else args.agent
    if len(agents) != len(args.runs):
        parser.error(f"give --agent once or once per run ({len(args.runs)} runs, {len(args.agent)} agents)")
    try:
        reports = [sources(run, agent) for run, agent in zip(args.runs, agents)]
    except SourcesError as exc:
        print(f"point_sources: {exc}", file=sys.stderr)
        return 2
    figures = [per_hand(r) for r in reports]
    if args.json:
        print(json.dumps([{**{k: r[k] for k in ("run", "agent", "games", "hands", "blocked", "totals")}, "per_hand": f}
                          for r, f in zip(reports, figures)], indent=2))
        return 0
    for r, f in zip(reports, figures):
        print(f"{r['run']}: {r['agent']}, {r['games']} games, {r['hands']} hands ({f['blocked']:.1%} blocked); per hand and seat")
        print(f"  {'':28s} {'ours':>8s} {'theirs':>8s} {'ours - theirs':>14s}")
        for key, label in FIGURES:
            a, b = f["ours"][key], f["theirs"][key]
            print(f"  {label:28s} {a:8.2f} {b:8.2f} {a - b:+14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
