"""Self-play training of MaskablePPO on All Fives, from a typed config. Reads top to bottom.

1. the run directory and the resolved config;  2. the environments (the learner's seat against
agents drawn from the opponent pool);  3. the model, new or resumed from the latest checkpoint;
4. callbacks: snapshots into the pool, evaluation, checkpoints;  5. learning;  6. the final
evaluation against the baselines, ``final.zip``, ``best.zip`` and ``card.json``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import time
from pathlib import Path

import numpy as np

from allfives_env.observation import OBS_SIZE, OBS_VERSION

from .checkpoint import CheckpointError, latest_checkpoint, load_model, load_state, save_checkpoint, set_rng_state
from .config import TrainConfig, to_yaml
from .envs import make_env_fn
from .evaluate import evaluate, format_table
from .pool import OpponentPool


def train(cfg: TrainConfig, run_dir, resume: bool = False, progress_bar: bool = True) -> dict:
    """Train (or resume) a run; return its card (config, steps, wall time, final evaluation)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from .callbacks import CheckpointCallback, EvalCallback, SelfPlayCallback, learner_agent, save_model

    # 1. run directory, resolved config, seeds ---------------------------------------------------
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(to_yaml(cfg), encoding="utf-8")
    torch.set_num_threads(cfg.torch_threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    rules = cfg.game.rules()
    metadata = {"obs_version": OBS_VERSION, "obs_size": OBS_SIZE, "rules": rules.to_dict(), "config_name": cfg.name}

    # 2. opponent pool and environments ----------------------------------------------------------
    pool = OpponentPool(cfg.pool.heuristics, cfg.pool.self_play, cfg.pool.max_snapshots, run_dir / "pool")
    tracker = {"best": -1.0, "best_steps": None, "evals": 0, "wall_seconds": 0.0}
    state = None
    if resume:
        model_path, state_path, steps = latest_checkpoint(run_dir)
        state = load_state(state_path)
        pool.restore(state.get("pool", {}))
        tracker.update(state.get("tracker", {}))
    specs, weights = pool.entries()
    fns = [make_env_fn(cfg, rank, specs, weights) for rank in range(cfg.n_envs)]
    vec = SubprocVecEnv(fns) if cfg.vec_env == "subproc" and cfg.n_envs > 1 else DummyVecEnv(fns)
    env = VecMonitor(vec)

    try:
        # 3. model: new, or the latest checkpoint ----------------------------------------------------
        if resume:
            model = load_model(model_path, env=env, device=cfg.device, tensorboard_log=str(run_dir / "tb"))
            set_rng_state(state["rng"])
            print(f"resuming {run_dir} from step {model.num_timesteps}")
        else:
            from agents.network import AllFivesPolicy

            activation = torch.nn.Tanh if cfg.net.activation == "tanh" else torch.nn.ReLU
            policy_kwargs = {"net_arch": {"pi": list(cfg.net.pi), "vf": list(cfg.net.vf)}, "activation_fn": activation}
            if cfg.net.policy == "scorer":
                policy_kwargs["scorer_width"] = cfg.net.scorer_width
            model = MaskablePPO(
                AllFivesPolicy if cfg.net.policy == "scorer" else "MlpPolicy",
                env,
                policy_kwargs=policy_kwargs,
                tensorboard_log=str(run_dir / "tb"),
                seed=cfg.seed,
                device=cfg.device,
                verbose=0,
                **cfg.ppo,
            )

        # 4. callbacks -----------------------------------------------------------------------------
        started = time.time()
        wall_before = tracker["wall_seconds"]

        def checkpoint_state() -> dict:
            tracker["wall_seconds"] = wall_before + time.time() - started
            return {"pool": pool.state(), "tracker": dict(tracker)}

        callbacks = [
            SelfPlayCallback(pool, cfg.pool.snapshot_every, metadata),
            EvalCallback(cfg, rules, run_dir, metadata, tracker),
            CheckpointCallback(run_dir, cfg.checkpoint_every, checkpoint_state),
        ]

        # 5. learn ---------------------------------------------------------------------------------
        remaining = cfg.total_steps - model.num_timesteps
        if remaining > 0:
            try:
                model.learn(
                    total_timesteps=remaining,
                    callback=callbacks,
                    reset_num_timesteps=not resume,
                    tb_log_name="ppo",
                    progress_bar=progress_bar,
                )
            except KeyboardInterrupt:
                save_checkpoint(run_dir, model, checkpoint_state())
                print(f"\ninterrupted at step {model.num_timesteps}: checkpoint saved; continue with --resume")
                raise
    finally:
        env.close()
    save_checkpoint(run_dir, model, checkpoint_state())
    wall = tracker["wall_seconds"]

    # 6. final model, evaluation, card -------------------------------------------------------------
    final_meta = dict(metadata, steps=int(model.num_timesteps), wall_seconds=round(wall, 1))
    save_model(model, run_dir / "final.zip", final_meta)
    if not (run_dir / "best.zip").exists():
        shutil.copyfile(run_dir / "final.zip", run_dir / "best.zip")
    final_agent = learner_agent(model, metadata)
    rows = evaluate(final_agent, cfg.eval.opponents, rules, cfg.eval.final_games, seed=cfg.seed + 424242, workers=cfg.eval.workers)
    table = format_table(rows, f"final evaluation of {run_dir / 'final.zip'} ({cfg.eval.final_games} duplicate games each)")
    print(table)
    (run_dir / "eval.txt").write_text(table + "\n", encoding="utf-8")
    card = {
        "name": cfg.name,
        "model": "final.zip",
        "steps": int(model.num_timesteps),
        "wall_seconds": round(wall, 1),
        "obs_version": OBS_VERSION,
        "rules": rules.to_dict(),
        "best": {"win_rate": tracker["best"], "steps": tracker["best_steps"], "against": cfg.eval.best_against},
        "final_evaluation": [{k: r[k] for k in ("opponent", "games", "a_wins", "a_win_rate", "ci_low", "ci_high", "mean_score_diff")} for r in rows],
        "config": dataclasses.asdict(cfg),
    }
    (run_dir / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return card


def check_run_dir(run_dir, resume: bool) -> None:
    """A fresh run must not overwrite another; a resume needs a checkpoint."""
    run_dir = Path(run_dir)
    if resume:
        latest_checkpoint(run_dir)
    elif run_dir.exists() and any(run_dir.iterdir()):
        raise CheckpointError(f"run directory {run_dir} is not empty: pass --resume to continue it, or another --run-dir")

