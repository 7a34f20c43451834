"""The cost curve of training: how steps/s, memory and time to a target win rate against ``expert``
grow with the games stepped together (``n_envs``), the network's width and the player count.

Each row is a recipe (``configs/ppo_2p.yaml``, ``ppo_3p.yaml``, ``ppo_4p.yaml``) with overrides, run
by ``allfives_train.train.train`` in a fresh process:

- ``--steps N`` (speed): N learner steps with evaluations, checkpoints and snapshots pushed past the
  end; steps/s over ``model.learn`` and the process's peak resident memory. Rows are interleaved
  over ``--rounds`` and the medians printed.
- ``--learn N`` (time to target): one run of up to N steps, evaluated every ``--eval-every`` steps
  with ``--eval-games`` duplicate games against ``expert``; the first evaluation at or above
  ``--target`` gives the steps and the run's wall time (learning and evaluations) to reach it.

    python benchmarks/train_cost.py --steps 32768 --rounds 2
    python benchmarks/train_cost.py --learn 1000000 --eval-every 125000 --eval-games 200 --row 2p --row 2p_envs16
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"

#: name -> (recipe, overrides, what changes)
ROWS = {
    "2p": ("ppo_2p.yaml", [], "2 players, 64 games, hidden 128, minibatches of 2048 (the recipe)"),
    "2p_envs16": ("ppo_2p.yaml", ["n_envs=16", "ppo.n_steps=256"], "16 games (n_steps 256: the same 4096 steps per update)"),
    "2p_envs256": ("ppo_2p.yaml", ["n_envs=256", "ppo.n_steps=16"], "256 games (n_steps 16: the same 4096 steps per update)"),
    "2p_width64": ("ppo_2p.yaml", ["net.pi=[64,64]", "net.vf=[64,64]", "net.scorer_width=32"], "hidden 64, scorer 32"),
    "2p_width256": ("ppo_2p.yaml", ["net.pi=[256,256]", "net.vf=[256,256]", "net.scorer_width=128"], "hidden 256, scorer 128"),
    "2p_batch512": ("ppo_2p.yaml", ["ppo.batch_size=512", "ppo.learning_rate=3e-4"], "minibatches of 512 at 3e-4 (32 gradient steps per update, not 8; the recipe before stop 56)"),
    "2p_epochs2": ("ppo_2p.yaml", ["ppo.n_epochs=2"], "2 epochs per update (4 gradient steps, not 8)"),
    "3p": ("ppo_3p.yaml", [], "3 players (the recipe)"),
    "4p": ("ppo_4p.yaml", [], "4 players in partnerships (the recipe)"),
}

CHILD = r'''
import json, resource, sys
from allfives_train.config import load_config
from allfives_train.train import train

config_path, run_dir, overrides = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
card = train(load_config(config_path, overrides), run_dir, progress_bar=False)
peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"steps": card["steps"], "wall_seconds": card["wall_seconds"], "peak_mib": round(peak_mib, 1)}))
'''


def run_row(name: str, run_dir: Path, extra: list[str]) -> dict:
    recipe, overrides, _ = ROWS[name]
    out = subprocess.run([sys.executable, "-c", CHILD, str(CONFIGS / recipe), str(run_dir), json.dumps(overrides + extra)],
                         capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=6 * 3600)
    if out.returncode != 0:
        raise SystemExit(f"row {name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def speed(rows: list[str], steps: int, rounds: int, seed: int, folder: Path) -> list[dict]:
    far = 10 * steps + 1
    extra = [f"total_steps={steps}", f"checkpoint_every={far}", f"eval.every={far}", f"pool.snapshot_every={far}",
             "eval.final_games=2", "eval.opponents=[random]", "eval.best_against=random"]
    got = {name: [] for name in rows}
    for r in range(rounds):
        for name in rows:
            result = run_row(name, folder / f"{name}-{r}", extra + [f"seed={seed + r}"])
            result["steps_per_s"] = result["steps"] / result["wall_seconds"]
            got[name].append(result)
            print(f"round {r + 1} {name}: {result['steps_per_s']:,.0f} steps/s, peak {result['peak_mib']:,.0f} MiB", flush=True)
    return [{"row": name, "what": ROWS[name][2],
             "steps_per_s": round(statistics.median(x["steps_per_s"] for x in got[name]), 1),
             "peak_mib": round(max(x["peak_mib"] for x in got[name]), 1)} for name in rows]


def learn(rows: list[str], steps: int, every: int, games: int, target: float, seed: int, folder: Path) -> list[dict]:
    extra = [f"total_steps={steps}", f"seed={seed}", f"eval.every={every}", f"eval.games={games}", "eval.opponents=[expert]",
             "eval.best_against=expert", "eval.final_games=2", f"checkpoint_every={every}"]
    out = []
    for name in rows:
        run_dir = folder / name
        result = run_row(name, run_dir, extra)
        evals = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines() if line.strip()]
        curve = [(e["steps"], e.get("wall_seconds"), e["results"]["expert"]["a_win_rate"]) for e in evals]
        hit = next(((s, w, x) for s, w, x in curve if x >= target), None)
        row = {"row": name, "what": ROWS[name][2], "steps": result["steps"], "wall_seconds": result["wall_seconds"],
               "curve": curve, "target": target, "steps_to_target": hit and hit[0], "seconds_to_target": hit and hit[1],
               "best": max((x for _, _, x in curve), default=None)}
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", action="append", choices=sorted(ROWS), help="rows to run (default: all); repeatable")
    parser.add_argument("--steps", type=int, default=32_768, help="speed: learner steps per row and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--learn", type=int, default=0, metavar="N", help="time to target: train each row up to N steps")
    parser.add_argument("--eval-every", type=int, default=125_000)
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--target", type=float, default=0.6, help="win rate against expert to reach")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = args.row or list(ROWS)
    for flag in ("steps", "rounds", "eval_every", "eval_games"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1")
    if not 0 < args.target <= 1:
        parser.error("--target is a win rate in (0, 1]")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="allfives-train-cost-") as folder:
        if args.learn:
            report = {"mode": "learn", "rows": learn(rows, args.learn, args.eval_every, args.eval_games, args.target, args.seed, Path(folder))}
        else:
            report = {"mode": "speed", "steps": args.steps, "rounds": args.rounds, "rows": speed(rows, args.steps, args.rounds, args.seed, Path(folder))}
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report))
    elif report["mode"] == "speed":
        for row in report["rows"]:
            print(f"{row['row']:<12} {row['steps_per_s']:>9,.0f} steps/s {row['peak_mib']:>7,.0f} MiB  {row['what']}")
    else:
        for row in report["rows"]:
            reached = (f"{row['target']:.0%} at {row['steps_to_target']:,} steps, {row['seconds_to_target']:,.0f} s"
                       if row["steps_to_target"] else f"not {row['target']:.0%} in {row['steps']:,} steps (best {row['best']:.1%})")
            print(f"{row['row']:<12} {reached}  {row['what']}")
    return report


if __name__ == "__main__":
    main()
