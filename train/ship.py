"""Ship a trained run as ``models/NAME.zip`` + ``NAME.onnx`` + ``NAME.json`` (the model card).

    python -m allfives_train.ship runs/ppo_2p --name allfives_2p [--model final.zip] [--games 2000] [--workers 2]

The card holds the resolved config, steps and wall time of the run, the ONNX parity check, and a
fresh duplicate round robin of the policy, random, greedy and expert (``--games`` per pairing,
95% Wilson intervals), played with the ONNX file so the card describes what ships; the baselines'
games among themselves are kept in the card too, as the yardstick.

In cut-throat games of 3 or 4 players the pairings are played as separate matches of two agents
(``a b a``: the padded group of ``allfives tournament --agents a,b``) instead of one round robin:
a group of distinct agents keeps its cyclic order (docs/tournament.md, "Limits"), so in the group
``policy greedy expert`` the policy would always play right after expert, and expert right after
the weak greedy, which measures the seating as much as the players.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import yaml

from allfives_agents.tournament import run_tournament
from allfives_env.engine import Rules

from .export import ExportError, export_onnx
from .parity import check_parity


class ShipError(ValueError):
    """A run that cannot be shipped (not finished, or its files unreadable)."""


def ship(run_dir, name: str, model: str = "final.zip", games: int = 2000, workers: int = 1, seed: int = 20261130, out_dir="models") -> dict:
    """Copy, export and evaluate a run's model; write and return its card. Everything is made in a
    staging folder beside ``out_dir``'s files, which replace the shipped ones only once all three are
    made: a failed export, parity check or evaluation leaves the shipped model as it was."""
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = out_dir / f".{name}.shipping"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        card = _make(run_dir, name, model, games, workers, seed, out_dir, staging)
        for file in (card["files"]["model"], card["files"]["onnx"], f"{name}.json"):
            os.replace(staging / file, out_dir / file)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return card


def _make(run_dir: Path, name: str, model: str, games: int, workers: int, seed: int, out_dir: Path, staging: Path) -> dict:
    """The shipped files of ``ship``, made in ``staging``; returns the card."""
    for needed in ("card.json", "config.yaml", model):
        if not (run_dir / needed).is_file():
            raise ShipError(f"{run_dir} is not a finished run: it has no {needed}")
    try:
        run_card = json.loads((run_dir / "card.json").read_text())
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        run_card["rules"], run_card["obs_version"], run_card["steps"], run_card["wall_seconds"]
    except (ValueError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise ShipError(f"{run_dir}: unreadable card.json or config.yaml ({type(exc).__name__}: {exc})") from None
    zip_path, onnx_path = staging / f"{name}.zip", staging / f"{name}.onnx"
    export_onnx(run_dir / model, onnx_path)
    shutil.copyfile(run_dir / model, zip_path)
    parity = check_parity(zip_path, onnx_path, count=10_000)
    rules = Rules.from_dict(run_card["rules"])
    started = time.perf_counter()
    agents = [f"onnx:{onnx_path}", "random", "greedy", "expert"]
    pairwise = not rules.partnerships and rules.num_players > 2
    if pairwise:
        matches = {(a, b): run_tournament([a, b], rules, games=games, seed=seed + 7919 * i, workers=workers)
                   for i, (a, b) in enumerate((a, b) for j, a in enumerate(agents) for b in agents[j + 1 :])}

        def pairing(a, b):
            return matches[(a, b)].pairing(*matches[(a, b)].config["agents"])

        ratings = None
        games_per_pairing = matches[(agents[0], agents[1])].config["games_per_pairing"]
    else:
        result = run_tournament(agents, rules, games=games, seed=seed, workers=workers)
        label = dict(zip(agents, result.config["agents"]))  # the labels the tournament gave the specs

        def pairing(a, b):
            return result.pairing(label[a], label[b])

        shipped = f"onnx:{out_dir / onnx_path.name}"  # the ratings under the name the policy ships as
        ratings = {shipped if who == label[agents[0]] else who: r for who, r in result.ratings.items()}
        games_per_pairing = result.config["games_per_pairing"]
    evaluation = []
    for opponent in agents[1:]:
        p = pairing(agents[0], opponent)
        evaluation.append({k: p[k] for k in ("games", "a_wins", "draws", "a_win_rate", "ci_low", "ci_high", "mean_score_diff", "a_points_per_hand", "b_points_per_hand")})
        evaluation[-1]["opponent"] = opponent
    baselines = agents[1:]
    among_baselines = [
        dict({k: pairing(a, b)[k] for k in ("games", "a_wins", "draws", "a_win_rate", "ci_low", "ci_high", "mean_score_diff")}, a=a, b=b)
        for i, a in enumerate(baselines) for b in baselines[i + 1 :]
    ]
    card = {
        "name": name,
        "files": {"model": zip_path.name, "onnx": onnx_path.name},
        "rules": run_card["rules"],
        "obs_version": run_card["obs_version"],
        "trained_steps": run_card["steps"],
        "training_wall_seconds": run_card["wall_seconds"],
        "shipped_from": f"{run_dir.name}/{model}",
        "evaluation": {
            "games_per_opponent": games_per_pairing,
            "duplicate": True,
            "schedule": "separate two-agent matches (a b a), cut-throat" if pairwise else "round robin",
            "seed": seed,
            "played_as": f"onnx:{onnx_path.name}",
            "results": evaluation,
            "among_baselines": among_baselines,
            "ratings": ratings,
            "seconds": round(time.perf_counter() - started, 1),
        },
        "onnx_parity": parity,
        "config": config,
    }
    if "stages" in run_card:  # a recipe of several runs (train/stages.py): its command and each stage's figures
        card["recipe"], card["stages"] = run_card["recipe"], run_card["stages"]
    shipped_card = out_dir / f"{name}.json"
    if shipped_card.exists():  # keep the hand-written fields of a model card (intended use, limitations, ...)
        previous = json.loads(shipped_card.read_text())
        card.update({k: v for k, v in previous.items() if k not in card})
    (staging / f"{name}.json").write_text(json.dumps(card, indent=1) + "\n")
    return card


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("--name", required=True)
    parser.add_argument("--model", default="final.zip")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out-dir", default="models")
    args = parser.parse_args(argv)
    try:
        card = ship(args.run_dir, args.name, args.model, args.games, args.workers, out_dir=args.out_dir)
    except (ShipError, ExportError) as exc:
        parser.exit(2, f"ship: error: {exc}\n")
    rows = [(card["name"], row["opponent"], row) for row in card["evaluation"]["results"]]
    rows += [(row["a"], row["b"], row) for row in card["evaluation"]["among_baselines"]]
    for a, b, row in rows:
        print(f"{a} vs {b:<8} {row['a_wins']}/{row['games']} = {row['a_win_rate']:.3f} "
              f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}] score diff {row['mean_score_diff']:.1f}")
    print(f"onnx parity: {card['onnx_parity']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
