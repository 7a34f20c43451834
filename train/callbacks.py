"""The SB3 callbacks of a training run: self-play snapshots, evaluation, checkpoints, torch threads."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from stable_baselines3.common.callbacks import BaseCallback

from allfives_agents.nets.policy import METADATA_NAME, NumpyPolicy, PPOAgent

from . import history
from .checkpoint import atomic_write
from .evaluate import evaluate
from .pool import OpponentPool


def save_model(model, path: Path, metadata: dict) -> None:
    """Save an SB3 model atomically, with the project's metadata (``allfives.json``) inside."""
    buffer = io.BytesIO()
    model.save(buffer)
    with zipfile.ZipFile(buffer, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(METADATA_NAME, json.dumps(metadata, indent=1))
    atomic_write(path, buffer.getvalue())


def learner_agent(model, metadata: dict) -> PPOAgent:
    """The model being trained as an agent named ``learner`` (numpy inference, for evaluations)."""
    agent = PPOAgent(NumpyPolicy.from_sb3(model.policy, metadata))
    agent.name = "learner"
    return agent


class _Every(BaseCallback):
    """Runs ``fire()`` each time the step count passes a multiple of ``every``."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = every
        self.next_at = None

    def _on_training_start(self) -> None:
        self.next_at = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_at:
            self.next_at = (self.num_timesteps // self.every + 1) * self.every
            self.fire()
        return True

    def fire(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class SelfPlayCallback(_Every):
    """Adds a frozen snapshot of the learner to the pool and sends the new pool to every environment."""

    def __init__(self, pool: OpponentPool, every: int, metadata: dict) -> None:
        super().__init__(every)
        self.pool = pool
        self.metadata = metadata

    def _on_training_start(self) -> None:
        super()._on_training_start()
        self.push()

    def fire(self) -> None:
        self.pool.add_snapshot(NumpyPolicy.from_sb3(self.model.policy, self.metadata), self.num_timesteps)
        self.push()

    def push(self) -> None:
        specs, weights = self.pool.entries()
        self.training_env.env_method("set_pool", specs, weights)
        self.logger.record("pool/size", len(specs))
        self.logger.record("pool/snapshots", len(self.pool.snapshots))


class EvalCallback(_Every):
    """Evaluates against the baselines, logs win rates and score differences, appends a row to
    ``evals.jsonl`` and keeps a new best model for ``best.zip`` (train/history.py)."""

    def __init__(self, config, rules, run_dir: Path, metadata: dict, tracker: dict, clock=None) -> None:
        super().__init__(config.eval.every)
        #: the run's learning time so far in seconds (resumed parts included), for each row
        self.clock = clock
        self.config = config
        self.rules = rules
        self.run_dir = Path(run_dir)
        self.metadata = metadata
        self.tracker = tracker  # {"best": float, "evals": int}, saved in checkpoints
        #: the last evaluation in words, for the progress lines (``None`` before the first)
        self.last: str | None = None

    def fire(self) -> None:
        cfg = self.config.eval
        agent = learner_agent(self.model, self.metadata)
        rows = evaluate(agent, cfg.opponents, self.rules, cfg.games, seed=self.config.seed + 1_000_003 * (self.tracker["evals"] + 1), workers=cfg.workers)
        self.tracker["evals"] += 1
        for row in rows:
            self.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["a_win_rate"])
            self.logger.record(f"eval/score_diff_vs_{row['opponent']}", row["mean_score_diff"])
        score = next(r["a_win_rate"] for r in rows if r["opponent"] == cfg.best_against)
        entry = {"steps": self.num_timesteps, **({"wall_seconds": round(self.clock(), 1)} if self.clock else {}), "results": {r["opponent"]: {k: r[k] for k in ("games", "a_wins", "a_win_rate", "ci_low", "ci_high", "mean_score_diff")} for r in rows}}
        history.append_row(self.run_dir, entry)
        if score > self.tracker["best"]:
            self.tracker["best"] = score
            self.tracker["best_steps"] = self.num_timesteps
            save_model(self.model, history.pending_best(self.run_dir), dict(self.metadata, steps=self.num_timesteps, best_win_rate=score, best_against=cfg.best_against))
        self.logger.record(f"eval/best_win_rate_vs_{cfg.best_against}", self.tracker["best"])
        self.logger.dump(self.num_timesteps)
        self.last = f"{score:.1%} vs {cfg.best_against} at step {self.num_timesteps:,}"


class CheckpointCallback(_Every):
    """Saves a checkpoint (model, optimizer, pool, RNG, step) every ``every`` steps."""

    def __init__(self, every: int, save) -> None:
        super().__init__(every)
        self.save = save  # a function that saves the run's checkpoint

    def fire(self) -> None:
        self.save()


class ThreadsCallback(BaseCallback):
    """torch's threads: ``rollout`` while the environments play, ``update`` for the PPO update
    (the environments' processes wait then, so the learner may use their cores)."""

    def __init__(self, rollout: int, update: int) -> None:
        super().__init__()
        self.rollout, self.update = rollout, update

    def _on_rollout_start(self) -> None:
        self._threads(self.rollout)

    def _on_rollout_end(self) -> None:
        self._threads(self.update)

    def _threads(self, n: int) -> None:
        if self.update != self.rollout:
            import torch

            torch.set_num_threads(n)

    def _on_step(self) -> bool:
        return True
