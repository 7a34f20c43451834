"""Learning speed: learner steps/s of ``allfives train`` with the shipped 2-player recipe, beside
PettingZoo's SB3 action-masking tutorial pipeline on connect_four_v3, in the same run.

- **ours**: ``allfives_train.train.train`` on ``configs/ppo_2p.yaml`` (its network, PPO settings, opponent
  pool, ``n_envs`` and ``vec_env``) for ``--steps`` learner steps, with evaluations and
  checkpoints pushed past the end; steps/s over ``model.learn``, timed in the process to the microsecond (the run's card rounds its
  ``wall_seconds`` to 0.1 s, 2% of a 5-second run).
- **peer**: the tutorial's ``train_action_mask`` (``tutorials/SB3/connect_four/
  sb3_connect_four_action_mask.py``): ``SB3ActionMaskWrapper`` over ``connect_four_v3.env()``,
  ``ActionMasker``, ``MaskablePPO(MaskableActorCriticPolicy, env)`` with SB3's defaults, one env,
  self-play. Its wrapper is copied unchanged except that it also subclasses ``gymnasium.Env``,
  which today's ``ActionMasker`` requires; steps/s over ``model.learn``.

- **baselines** (``--baseline REF``, repeatable): ``allfives train`` of git revision ``REF``
  (``git archive``) on that revision's own recipe, for before/after figures in the same run.

Rounds alternate ours, each baseline and the peer, each in a fresh process with the threads the
recipe sets; the medians and the ratios to the peer are printed (``--json``: one line), the ratio of
the medians and the median of each round's own ratio (``paired``), and for
ours and each baseline where the time went: µs a learner step in the rollouts
(``MaskablePPO.collect_rollouts``: the games, the opponents, the policy's forward passes) and in
the updates (``MaskablePPO.train``), which move much less from round to round than the whole.
``--load N`` runs N busy processes beside both contenders (a user's other work on the same cores);
given more than once, every round measures each load in turn, so quiet and loaded figures come
from one run.

    python benchmarks/train_speed.py --steps 40960 --rounds 3 --baseline 82f1e16 --baseline 0a34e01
    python benchmarks/train_speed.py --steps 16384 --rounds 3 --load 0 --load 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from revision import export_revision  # noqa: E402

PEER = r'''
import sys, time
import gymnasium as gym
import pettingzoo.utils
import torch
from pettingzoo.classic import connect_four_v3
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

torch.set_num_threads(1)


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gym.Env):
    """Wrapper to allow PettingZoo environments to be used with SB3 illegal action masking."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (
            self.observe(next_agent),
            self._cumulative_rewards[current_agent],
            self.terminations[current_agent],
            self.truncations[current_agent],
            self.infos[current_agent],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


def mask_fn(env):
    return env.action_mask()


steps, seed = int(sys.argv[1]), int(sys.argv[2])
env = SB3ActionMaskWrapper(connect_four_v3.env())
env.reset(seed=seed)
env = ActionMasker(env, mask_fn)
model = MaskablePPO(MaskableActorCriticPolicy, env, verbose=0)
model.set_random_seed(seed)
start = time.perf_counter()
model.learn(total_timesteps=steps)
print(model.num_timesteps, time.perf_counter() - start)
'''

OURS = r'''
import sys, time
from sb3_contrib import MaskablePPO
from allfives_train.config import load_config
from allfives_train.train import train

parts = {"learn": 0.0, "rollout": 0.0, "update": 0.0}


def timed(name, method):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            parts[name] += time.perf_counter() - start
    return wrapper


MaskablePPO.learn = timed("learn", MaskablePPO.learn)
MaskablePPO.collect_rollouts = timed("rollout", MaskablePPO.collect_rollouts)
MaskablePPO.train = timed("update", MaskablePPO.train)

steps, seed, run_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
far = 10 * steps + 1
config = load_config(sys.argv[4], [f"total_steps={steps}", f"seed={seed}", f"checkpoint_every={far}",
                                   f"eval.every={far}", f"pool.snapshot_every={far}",
                                   "eval.final_games=2", "eval.opponents=[random]", "eval.best_against=random"])
card = train(config, run_dir, progress_bar=False)
print(card["steps"], parts["learn"], parts["rollout"], parts["update"])
'''


def run(code: str, *args, root: Path = ROOT, parts: dict | None = None) -> float:
    """Steps/s that ``code`` prints (``steps seconds`` on its last line), run in the tree ``root``;
    where it also prints the seconds of the rollouts and the updates, their µs a step are appended
    to ``parts["rollout"]`` and ``parts["update"]``."""
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=str(root)), timeout=3600)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    steps, seconds, *more = out.stdout.strip().splitlines()[-1].split()
    if parts is not None and more:
        for name, value in zip(("rollout", "update"), more):
            parts.setdefault(name, []).append(float(value) / int(steps) * 1e6)
    return int(steps) / float(seconds)


BUSY = "while True:\n    pass\n"


@contextlib.contextmanager
def busy(n: int):
    """``n`` CPU-bound processes beside whatever runs inside (the load of a user's other work)."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40_000, help="learner steps per contestant and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--config", default=str(ROOT / "configs" / "ppo_2p.yaml"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="REF", action="append", default=[],
                        help="also train with this git revision (its own configs/ppo_2p.yaml); repeatable")
    parser.add_argument("--load", metavar="N", type=int, action="append", default=[],
                        help="run N busy processes beside both contenders; repeatable (--load 0 --load 1: quiet and "
                             "loaded, interleaved in every round); default 0")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    loads = args.load or [0]
    if any(n < 0 for n in loads):
        parser.error("--load takes 0 or more processes")
    ours = {n: [] for n in loads}
    peer = {n: [] for n in loads}
    baselines = {n: {ref: [] for ref in args.baseline} for n in loads}
    parts = {n: {ref: {} for ref in [None, *args.baseline]} for n in loads}  # None: this checkout
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="allfives-train-speed-") as folder:
        trees = {ref: export_revision(ref, Path(folder) / f"baseline{k}") for k, ref in enumerate(args.baseline)}
        for r in range(args.rounds):
            for n in loads:
                with busy(n):
                    ours[n].append(run(OURS, args.steps, args.seed + r, Path(folder) / f"run{n}-{r}", args.config, parts=parts[n][None]))
                    for k, (ref, tree) in enumerate(trees.items()):
                        baselines[n][ref].append(run(OURS, args.steps, args.seed + r, Path(folder) / f"old{k}-{n}-{r}",
                                                     tree / "configs" / "ppo_2p.yaml", root=tree, parts=parts[n][ref]))
                    peer[n].append(run(PEER, args.steps, args.seed + r))
                if not args.json:
                    old = "".join(f", {ref} {speeds[-1]:,.0f} steps/s" for ref, speeds in baselines[n].items())
                    print(f"round {r + 1}, load {n}: allfives train {ours[n][-1]:,.0f} steps/s{old}, "
                          f"connect_four tutorial {peer[n][-1]:,.0f} steps/s", flush=True)
    report = {"rounds": args.rounds, "steps": args.steps, "config": Path(args.config).name, "loads": []}
    for n in loads:
        tutorial = statistics.median(peer[n])
        row = {
            "load": n,
            "allfives_steps_per_s": round(statistics.median(ours[n]), 1),
            "connect_four_tutorial_steps_per_s": round(tutorial, 1),
            "ratio": round(statistics.median(ours[n]) / tutorial, 2),
            "paired_ratio": paired(ours[n], peer[n]),
            **us_per_step(parts[n][None]),
        }
        if args.baseline:
            row["baselines"] = [{"ref": ref, "steps_per_s": round(statistics.median(speeds), 1),
                                 "ratio": round(statistics.median(speeds) / tutorial, 2), "paired_ratio": paired(speeds, peer[n]),
                                 **us_per_step(parts[n][ref])}
                                for ref, speeds in baselines[n].items()]
        report["loads"].append(row)
    quiet = next((row for row in report["loads"] if row["load"] == 0), None)
    for row in report["loads"]:
        if quiet is not None and row is not quiet:
            row["kept_of_quiet"] = round(row["allfives_steps_per_s"] / quiet["allfives_steps_per_s"], 2)
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report))
    else:
        for row in report["loads"]:
            old = "".join(f"; {b['ref']}: {b['steps_per_s']:,} steps/s, ratio {b['ratio']} (paired {b['paired_ratio']}){split(b)}"
                          for b in row.get("baselines", []))
            kept = f", {row['kept_of_quiet']:.0%} of quiet" if "kept_of_quiet" in row else ""
            print(f"load {row['load']}: median {row['allfives_steps_per_s']:,} vs {row['connect_four_tutorial_steps_per_s']:,} "
                  f"steps/s, ratio {row['ratio']} (paired {row['paired_ratio']}){split(row)}{kept}{old}")
    return report


def paired(speeds: list[float], peer: list[float]) -> float:
    """The median over the rounds of each round's own ratio to the tutorial: the two measured within
    the same minute or so, so it moves less than the ratio of the medians when the machine's speed
    drifts from minute to minute (on shared cores it does, by 20% and more)."""
    return round(statistics.median(a / b for a, b in zip(speeds, peer)), 2)


def us_per_step(parts: dict) -> dict:
    """The medians of a contender's µs a step in its rollouts and its updates (revisions whose
    training does not go through ``MaskablePPO`` have none)."""
    return {f"{name}_us_per_step": round(statistics.median(values), 1) for name, values in parts.items() if values}


def split(row: dict) -> str:
    if "update_us_per_step" not in row:
        return ""
    return f" (rollout {row['rollout_us_per_step']} + update {row['update_us_per_step']} µs a step)"


if __name__ == "__main__":
    main()
