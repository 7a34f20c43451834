"""Self-play training of MaskablePPO on All Fives, from a typed config. Reads top to bottom.

0. checks that need no writing: the device, and for a resume the run's saved config (a resume
may change only ``config.RESUMABLE``) and the checkpoint it continues from, with its pool snapshots
and evaluations (a run stopped in its warm start, before any checkpoint, takes it up from
``RUN/imitation``; one stopped before its first checkpoint starts again);  1. the run directory,
the resolved config, the evaluations taken back to the checkpoint (train/history.py);
2. the environments (the learner's seat against agents drawn from the opponent
pool);  3. the model, new or resumed from the latest checkpoint (a new one with a teacher is warm
started first: train/imitate.py);  4. callbacks: snapshots into the
pool, evaluation, checkpoints;  5. learning;  6. the final evaluation against the baselines,
``final.zip``, ``best.zip`` and ``card.json``.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from allfives_env.observation import OBS_SIZES
from allfives_env.privileged import PRIVILEGED_SIZE

from . import curve, history
from .checkpoint import CHECKPOINT_DIR, LATEST, CheckpointError, atomic_write, check_model, load_model, load_state, resume_point, save_checkpoint, set_rng_state
from .config import CONFIG_NAME, ConfigError, TrainConfig, load_config, resume_changes, resumed_run_config, saved_run_config, to_yaml
from .envs import make_env_fn
from .evaluate import card_rows, final_evaluation
from .pool import OpponentPool, check_snapshots

#: the resolved config, saved in the run directory; a resume continues with it
#: the warm start's report per round (train/imitate.py), when the config has a teacher
IMITATION_NAME = "imitation.json"
#: the warm start's work while it runs (train/imitate.py), for a resume if it is stopped
IMITATION_CACHE = "imitation"


def train(cfg: TrainConfig, run_dir, resume: bool = False, progress_bar: bool = True) -> dict:
    """Train (or resume) a run; return its card (config, steps, wall time, final evaluation)."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from .progress import Progress, is_terminal
    from .callbacks import CheckpointCallback, EvalCallback, SelfPlayCallback, ThreadsCallback, learner_agent, save_model
    from .vec_env import BatchedVecEnv

    # 0. checks before anything is written --------------------------------------------------------
    run_dir = Path(run_dir)
    check_device(cfg.device)
    cache = run_dir / IMITATION_CACHE
    stopped, checkpoint = False, None
    if resume:
        resume_changes(saved_config(run_dir), cfg)
        stopped = warm_start_stopped(run_dir)
        if stopped:  # stopped before the first checkpoint: the warm start goes on from its cache
            print(f"resuming the warm start of {run_dir} from {cache}")
        else:
            checkpoint, state = checked_resume_point(run_dir)
        resume = checkpoint is not None
    elif run_dir.is_dir() and any(run_dir.iterdir()):
        check_run_dir(run_dir, resume=False)  # another run's folder is refused; one that has nothing to lose is not
        print(f"{run_dir} holds no complete checkpoint (it was stopped before its first): starting it again")

    # 1. run directory, resolved config, evaluations back to the checkpoint, seeds ----------------
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(run_dir / CONFIG_NAME, to_yaml(cfg).encode())
    tracker = {"best": -1.0, "best_steps": None, "evals": 0, "wall_seconds": 0.0}
    if resume:
        tracker.update(state["tracker"])
    history.rewind(run_dir, checkpoint.steps if resume else 0, tracker)
    torch.set_num_threads(cfg.torch_threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    rules = cfg.game.rules()
    obs_version = cfg.net.obs_version
    metadata = {"obs_version": obs_version, "obs_size": OBS_SIZES[obs_version], "rules": rules.to_dict(), "config_name": cfg.name}
    if cfg.net.critic != "view":  # the models play on obs_size values; their critic read more in training
        metadata["critic"] = cfg.net.critic

    # 2. opponent pool and environments ----------------------------------------------------------
    pool = OpponentPool(cfg.pool.heuristics, cfg.pool.self_play, cfg.pool.max_snapshots, run_dir / "pool")
    if resume:
        pool.restore(state["pool"])
    specs, weights = pool.entries()
    fns = [make_env_fn(cfg, rank, specs, weights) for rank in range(cfg.n_envs)]
    if cfg.vec_env == "batched":
        vec = BatchedVecEnv(fns, cfg.env_workers)
    else:
        vec = SubprocVecEnv(fns) if cfg.vec_env == "subproc" and cfg.n_envs > 1 else DummyVecEnv(fns)
    env = VecMonitor(vec)

    try:
        # 3. model: new, or the latest checkpoint ----------------------------------------------------
        if resume:
            policy_class, policy_kwargs = policy_spec(cfg)
            model = load_model(checkpoint.model, env, cfg.device, policy_class, policy_kwargs, ppo_arguments(cfg), state["episodes"], tensorboard_log=str(run_dir / "tb"))
            set_rng_state(state["rng"])
            print(f"resuming {run_dir} from step {model.num_timesteps}")
        else:
            model = new_model(cfg, env, run_dir / "tb")
            if cfg.init_from:
                init_weights(model, cfg.init_from)
            if cfg.imitate.teacher and cfg.imitate.rounds:
                from .imitate import open_cache, warm_start

                if cache.exists() and not stopped:
                    shutil.rmtree(cache)  # a new run does not take up an old one's warm start
                reports = warm_start(model, cfg, metadata, cache=open_cache(cache, cfg))
                atomic_write(run_dir / IMITATION_NAME, (json.dumps(reports, indent=1) + "\n").encode())
                save_checkpoint(run_dir, model, {"pool": pool.state(), "tracker": dict(tracker)})  # nothing evaluated yet
                shutil.rmtree(cache)  # the checkpoint holds the warm start now

        # 4. callbacks -----------------------------------------------------------------------------
        started = time.time()
        wall_before = tracker["wall_seconds"]

        def clock() -> float:
            return wall_before + time.time() - started

        def save() -> None:
            tracker["wall_seconds"] = clock()
            save_checkpoint(run_dir, model, {"pool": pool.state(), "tracker": dict(tracker)})
            history.commit_best(run_dir)  # the checkpoint holds the evaluation that found it

        evaluations = EvalCallback(cfg, rules, run_dir, metadata, tracker, clock)
        callbacks = [
            SelfPlayCallback(pool, cfg.pool.snapshot_every, metadata),
            evaluations,
            CheckpointCallback(cfg.checkpoint_every, save),
            ThreadsCallback(cfg.torch_threads, cfg.update_threads or cfg.torch_threads),
        ]
        if cfg.imitate.anchor:
            from .anchor import AnchorCallback
            from .imitate import teacher_positions

            imitate = cfg.imitate
            callbacks.append(AnchorCallback(teacher_positions(cfg), imitate.anchor, imitate.batch_size, imitate.anchor_coef, cfg.seed))
        if progress_bar:  # a bar on a terminal, else a line every LOG_EVERY_S seconds (a file, a pipe)
            callbacks.append(Progress(cfg.total_steps, lambda: evaluations.last, bar=is_terminal(sys.stderr)))

        # 5. learn ---------------------------------------------------------------------------------
        remaining = cfg.total_steps - model.num_timesteps
        if remaining > 0:
            try:
                # numpy's BLAS (the rollouts' scorer, the pool's snapshots) as many threads as torch's:
                # its default, one per core, waits spinning and loses to any other work on the cores
                with threadpool_limits(cfg.torch_threads, user_api="blas"):
                    model.learn(
                        total_timesteps=remaining,
                        callback=callbacks,
                        reset_num_timesteps=not resume,
                        tb_log_name="ppo",
                        progress_bar=False,  # Progress: SB3's bar counts past the total and logs nothing to a file
                    )
            except KeyboardInterrupt:
                save()
                print(f"\ninterrupted at step {model.num_timesteps}: checkpoint saved; continue with --resume")
                raise
    finally:
        env.close()
    save()
    wall = tracker["wall_seconds"]

    # 6. final model, evaluation, card -------------------------------------------------------------
    final_meta = dict(metadata, steps=int(model.num_timesteps), wall_seconds=round(wall, 1))
    save_model(model, run_dir / "final.zip", final_meta)
    if not (run_dir / "best.zip").exists():
        shutil.copyfile(run_dir / "final.zip", run_dir / "best.zip")
    final_agent = learner_agent(model, metadata)
    rows = final_evaluation(final_agent, cfg, rules, run_dir, run_dir / "final.zip")
    card = {
        "name": cfg.name,
        "model": "final.zip",
        "steps": int(model.num_timesteps),
        "wall_seconds": round(wall, 1),
        "obs_version": obs_version,
        "rules": rules.to_dict(),
        "best": {"win_rate": tracker["best"], "steps": tracker["best_steps"], "against": cfg.eval.best_against},
        "imitation": imitation_reports(run_dir),
        "final_evaluation": card_rows(rows),
        "learning_curve": curve.write(run_dir, title=f"{cfg.name}: win rate by steps and time"),
        "config": dataclasses.asdict(cfg),
    }
    atomic_write(run_dir / "card.json", (json.dumps(card, indent=1) + "\n").encode())
    return card


def imitation_reports(run_dir: Path) -> list | None:
    """The warm start's reports (``RUN/imitation.json``) for the card; ``None`` when the run had no
    warm start, or (with a warning naming the file) when the file is not readable JSON: a damaged
    report must not cost the finished run its card."""
    path = run_dir / IMITATION_NAME
    if not path.is_file():
        return None
    try:
        reports = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"warning: {path} is not readable JSON ({exc}); the card leaves the warm start's reports out")
        return None
    return reports if isinstance(reports, list) else None


def policy_spec(cfg: TrainConfig) -> tuple[type, dict]:
    """The policy class and its keyword arguments, from ``cfg.net``."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from allfives_train.network import AllFivesPolicy

    activation = torch.nn.Tanh if cfg.net.activation == "tanh" else torch.nn.ReLU
    policy_kwargs = {"net_arch": {"pi": list(cfg.net.pi), "vf": list(cfg.net.vf)}, "activation_fn": activation}
    if cfg.net.policy == "scorer":
        policy_kwargs["scorer_width"] = cfg.net.scorer_width
        policy_kwargs["precision"] = cfg.net.precision
        if cfg.net.critic == "privileged":
            policy_kwargs["privileged_size"] = PRIVILEGED_SIZE
        return AllFivesPolicy, policy_kwargs
    return MaskableActorCriticPolicy, policy_kwargs


def new_model(cfg: TrainConfig, env, tensorboard_dir):
    """A fresh MaskablePPO for ``cfg`` on ``env``."""
    from sb3_contrib import MaskablePPO

    policy_class, policy_kwargs = policy_spec(cfg)
    return MaskablePPO(
        policy_class,
        env,
        policy_kwargs=policy_kwargs,
        tensorboard_log=str(tensorboard_dir),
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
        **ppo_arguments(cfg),
    )


class LinearDecay:
    """SB3 learning-rate schedule of ``lr_decay: linear``: ``start`` times the share of the run left."""

    def __init__(self, start: float) -> None:
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


def ppo_arguments(cfg: TrainConfig) -> dict:
    """``cfg.ppo`` as MaskablePPO takes it: the learning rate a schedule under ``lr_decay: linear``
    (SB3 counts the progress over the whole run, so a resumed run goes on down the same line), and
    the rollout buffer ``allfives_train.buffer.MinibatchBuffer``."""
    from .buffer import MinibatchBuffer

    arguments = {**cfg.ppo, "rollout_buffer_class": MinibatchBuffer}
    if cfg.lr_decay == "linear":
        arguments["learning_rate"] = LinearDecay(cfg.ppo["learning_rate"])
    return arguments


def init_weights(model, path) -> None:
    """Start ``model`` from the policy weights of the model zip ``path`` (``init_from``);
    ``ConfigError`` naming the file when it is not a model or its network is another one."""
    import torch
    from stable_baselines3.common.save_util import load_from_zip_file

    try:
        check_model(Path(path))
        # the weights alone (torch's weights-only load): none of the zip's pickled objects is read
        source = load_from_zip_file(path, load_data=False, device="cpu")[1]["policy"]
    except (CheckpointError, OSError, ValueError, KeyError, RuntimeError) as exc:
        raise ConfigError(f"init_from: {path} is not a readable model zip: {str(exc)[:300]}") from None
    target = model.policy.state_dict()
    wrong = [k for k in target if k not in source or source[k].shape != target[k].shape]
    if wrong or set(source) - set(target):
        raise ConfigError(f"init_from: {path} holds another network than this config's "
                          f"(first difference: {(wrong or sorted(set(source) - set(target)))[0]}); "
                          "net.* and net.obs_version must be those it was trained with")
    with torch.no_grad():
        model.policy.load_state_dict({k: v.to(target[k].device) for k, v in source.items()})


def check_device(device: str) -> None:
    """``ConfigError`` for a device this machine lacks (SB3 itself falls back from cuda to cpu)."""
    import torch

    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device: mps is not available on this machine")
    if device.startswith("cuda:") and torch.cuda.is_available() and int(device[5:]) >= torch.cuda.device_count():
        raise ConfigError(f"device: {device} does not exist; this machine has {torch.cuda.device_count()} CUDA device(s)")


def saved_config(run_dir) -> TrainConfig:
    """The config a run was started with (``RUN/config.yaml``); ``ConfigError`` if it is missing."""
    return saved_run_config(run_dir, load_config)


def resume_config(run_dir, config_path=None, overrides=()) -> TrainConfig:
    """The config of a resumed run: its saved config, or ``config_path``, with ``overrides``;
    ``ConfigError`` if that changes anything but ``config.RESUMABLE`` of the saved config."""
    return resumed_run_config(run_dir, load_config, config_path, overrides)


def checked_resume_point(run_dir) -> tuple:
    """The checkpoint a resume continues from and its state, every file read back and checked (the
    state, the model, the pool's snapshots, evals.jsonl); ``(None, None)`` when there is none yet."""
    checkpoint = resume_point(run_dir)
    if checkpoint is None:
        print(f"{run_dir} has no complete checkpoint (it was stopped before its first): starting it again from step 0")
        return None, None
    state = load_state(checkpoint, run_dir)
    check_model(checkpoint.model, checkpoint)
    check_snapshots(state["pool"]["snapshots"])
    history.check_rows(run_dir)
    if checkpoint.index is None:
        print(f"{run_dir / CHECKPOINT_DIR / LATEST} is missing (the run was stopped while it wrote it): "
              f"resuming from the newest complete checkpoint, {checkpoint.state.name.split('.')[0]}")
    return checkpoint, state


def warm_start_stopped(run_dir) -> bool:
    """Whether the run was stopped in its warm start: its cache is there and no checkpoint yet."""
    return (Path(run_dir) / IMITATION_CACHE).is_dir() and resume_point(run_dir) is None


def check_run_dir(run_dir, resume: bool) -> None:
    """A fresh run must not overwrite another, but may take the folder of one stopped before its first
    checkpoint (``restartable``); a resume needs a readable checkpoint, or a run to start again."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise CheckpointError(f"run directory {run_dir} exists and is not a directory: pass another --run-dir")
    if resume:
        checkpoint = None if warm_start_stopped(run_dir) else resume_point(run_dir)
        if checkpoint is not None:
            load_state(checkpoint, run_dir)
        elif not (run_dir / CONFIG_NAME).is_file():
            raise CheckpointError(f"nothing to resume: no checkpoint in {run_dir / CHECKPOINT_DIR} and no saved config in {run_dir}")
    elif run_dir.exists() and any(run_dir.iterdir()) and not restartable(run_dir):
        raise CheckpointError(f"run directory {run_dir} is not empty: pass --resume to continue it, or another --run-dir")


def restartable(run_dir: Path) -> bool:
    """Whether ``run_dir`` is a run stopped before its first checkpoint (and not in a warm start, which
    ``--resume`` goes on with): its saved config and no complete checkpoint. A new run loses nothing there."""
    try:
        return (run_dir / CONFIG_NAME).is_file() and not (run_dir / IMITATION_CACHE).is_dir() and resume_point(run_dir) is None
    except CheckpointError:  # a damaged latest.json: a run, not to be replaced
        return False

