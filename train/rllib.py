"""RLlib PPO on All Fives from a ``trainer: rllib`` config (``allfives train``). Reads top to bottom.

0. checks that need no writing (a resume: its saved config, which it may change only in
``rllib_config.RESUMABLE``, its latest checkpoint and the pool's snapshots; one stopped before
its first checkpoint starts again);  1. Ray (local, or a cluster: ``ray``),
with this project's code shipped to its workers, and enough CPUs for the runners;  2. the run
directory and the resolved config;  3. the opponent pool and the algorithm: PPO with RLlib's
``ActionMaskingTorchRLModule`` as the one ``learner`` module, ``num_env_runners`` Ray workers
collecting in ``PoolMultiAgentEnv`` (the learner against the opponent pool of the SB3 trainer),
restored from the latest checkpoint on a resume;  4. learning, with a snapshot of the learner
(ONNX) into the pool every ``pool.snapshot_every`` steps when ``pool.self_play`` is on, and a
checkpoint every ``checkpoint_every`` steps;  5. the final checkpoint, ``final.onnx`` (the ONNX
contract of docs/frontends.md), its evaluation against the baselines and ``card.json``.

A checkpoint is a folder ``RUN/checkpoints/step_N`` (RLlib's files, then ``allfives.json``: the
step, the wall time and the pool's snapshots); ``RUN/checkpoints/latest.json`` names the newest
complete one, with the same state, and is replaced last. A run killed while it wrote its first
latest.json resumes from the newest folder with its ``allfives.json``. Ray is given every path
absolute (it reads a relative one as a URI without a scheme).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path

import allfives_env
import allfives_agents

from .checkpoint import CheckpointError, atomic_write
from .config import CONFIG_NAME, ConfigError, resume_changes, resumed_run_config, saved_run_config, to_yaml
from .evaluate import card_rows, final_evaluation
from .pool import OpponentPool, check_snapshots
from .rllib_config import RESUMABLE, RLlibConfig, load_rllib_config
from .rllib_export import METADATA_NAME, export_rllib

CHECKPOINTS = "checkpoints"
LATEST = "latest.json"
#: the id of the one module every learner seat maps to
MODULE = "learner"
#: checkpoints kept (the newest)
KEEP = 2


def train_rllib(cfg: RLlibConfig, run_dir, resume: bool = False, progress: bool = True) -> dict:
    """Train (or resume) a run; return its card (config, steps, wall time, final evaluation)."""
    import allfives_train

    from allfives_agents.tournament.cluster import ClusterError, cluster_cpus, connect

    # 0. checks before anything is written ------------------------------------------------------
    run_dir = Path(run_dir)
    if resume:
        resume_changes(saved_config(run_dir), cfg, RESUMABLE)
        checkpoint, state = checked_resume_point(run_dir)
        resume = checkpoint is not None
    elif run_dir.is_dir() and any(run_dir.iterdir()):
        check_run_dir(run_dir, resume=False)  # another run's folder is refused; one that has nothing to lose is not
        print(f"{run_dir} holds no complete checkpoint (it was stopped before its first): starting it again")

    # 1. Ray: local, or a cluster, with this project's code shipped to its workers --------------
    try:
        ray, started = connect(cfg.ray, num_cpus=cfg.num_cpus or None, modules=(allfives_env, allfives_agents, allfives_train))
    except ClusterError as exc:
        raise ConfigError(f"ray: {exc}") from None
    try:
        if cluster_cpus(ray) < cfg.num_env_runners:  # Ray would wait for the missing CPUs for ever
            raise ConfigError(f"num_env_runners: {cfg.num_env_runners} runners need as many CPUs; the Ray cluster has "
                              f"{cluster_cpus(ray)} (a local Ray: raise num_cpus, or use fewer runners)")

        # 2. run directory and resolved config ----------------------------------------------------
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(run_dir / CONFIG_NAME, to_yaml(cfg).encode())
        rules = cfg.game.rules()
        steps, wall_before = (state["steps"], state["wall_seconds"]) if resume else (0, 0.0)

        # 3. the opponent pool; the algorithm, new or restored ---------------------------------------
        pool = OpponentPool(cfg.pool.heuristics, cfg.pool.self_play, cfg.pool.max_snapshots, run_dir.resolve() / "pool")
        if resume:
            pool.restore(state["pool"])
        algo = build_algorithm(cfg, pool)
        if resume:
            algo.restore_from_path(str(checkpoint.resolve()))
            print(f"resuming {run_dir} from step {steps}")
        metadata = {"obs_version": cfg.net.obs_version, "rules": rules.to_dict(), "config_name": cfg.name, "module": MODULE}
        snapshot = Snapshot(algo, metadata)

        # 4. learn ----------------------------------------------------------------------------------
        started_at, session_start = time.time(), steps
        next_checkpoint = (steps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        next_snapshot = (steps // cfg.pool.snapshot_every + 1) * cfg.pool.snapshot_every

        def checkpoint() -> Path:
            return save(algo, run_dir, steps, wall_before + time.time() - started_at, metadata, pool.state())

        try:
            while steps < cfg.total_steps:
                result = algo.train()
                steps += int(result["env_runners"]["num_env_steps_sampled"])
                if progress:
                    ret = result["env_runners"].get("episode_return_mean")
                    print(f"step {steps:>9}  episode return {ret if ret is None else round(ret, 3)}  "
                          f"{(steps - session_start) / max(time.time() - started_at, 1e-9):.0f} steps/s", flush=True)
                if steps >= next_snapshot and pool.add_snapshot(snapshot, steps, ".onnx"):
                    send_pool(algo, pool)
                next_snapshot = (steps // cfg.pool.snapshot_every + 1) * cfg.pool.snapshot_every
                if next_checkpoint <= steps < cfg.total_steps:
                    checkpoint()
                    next_checkpoint = (steps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        except KeyboardInterrupt:
            checkpoint()
            print(f"\ninterrupted at step {steps}: checkpoint saved; continue with --resume")
            raise
        final = checkpoint()
        wall = wall_before + time.time() - started_at
        algo.stop()
    finally:
        if started:
            ray.shutdown()

    # 5. the exported policy, its evaluation, the card ------------------------------------------
    onnx_path = run_dir / "final.onnx"
    export_rllib(final, onnx_path)
    rows = final_evaluation(f"onnx:{onnx_path}", cfg, rules, run_dir, onnx_path)
    card = {
        "name": cfg.name,
        "trainer": "rllib",
        "model": "final.onnx",
        "checkpoint": str(final.relative_to(run_dir)),
        "steps": steps,
        "wall_seconds": round(wall, 1),
        "obs_version": cfg.net.obs_version,
        "rules": rules.to_dict(),
        "final_evaluation": card_rows(rows),
        "config": dataclasses.asdict(cfg),
    }
    atomic_write(run_dir / "card.json", (json.dumps(card, indent=1) + "\n").encode())
    return card


def build_algorithm(cfg: RLlibConfig, pool: OpponentPool):
    """The PPO algorithm of ``cfg``: one shared ``learner`` module with action masking, PoolMultiAgentEnv
    against ``pool``'s agents."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from gymnasium import spaces

    from allfives_env.engine.tiles import NUM_ACTIONS

    from .rllib_env import PoolMultiAgentEnv, observation_space

    specs, weights = pool.entries()
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        observation_space=observation_space(cfg.net.obs_version),
        action_space=spaces.Discrete(NUM_ACTIONS),
        # separate policy and value MLPs of net.hidden, as the SB3 trainer's net.pi and net.vf
        model_config={"fcnet_hiddens": list(cfg.net.hidden), "fcnet_activation": cfg.net.activation, "head_fcnet_hiddens": [], "vf_share_layers": False},
    )
    config = (
        PPOConfig()
        # RLlib's env check steps random actions, which are mostly illegal here
        .environment(PoolMultiAgentEnv, env_config={"config": cfg, "opponents": specs, "weights": weights}, disable_env_checking=True)
        .env_runners(num_env_runners=cfg.num_env_runners)
        .multi_agent(policies={MODULE}, policy_mapping_fn=_to_learner)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE: module}))
        .training(**cfg.ppo)
        .reporting(min_sample_timesteps_per_iteration=0)
        .debugging(seed=cfg.seed)
    )
    return config.build_algo()


def _to_learner(agent_id, episode, **kwargs) -> str:
    return MODULE


class Snapshot:
    """The learner's actor as the pool saves it: ``save(path)`` exports the current module to ONNX."""

    def __init__(self, algo, metadata: dict) -> None:
        self.algo, self.metadata = algo, metadata

    def save(self, path) -> None:
        from allfives_env.observation import OBS_SIZES

        from .export import write_onnx
        from .rllib_export import actor_module

        about = {"obs_version": self.metadata["obs_version"], "rules": self.metadata["rules"], "source": "rllib learner"}
        actor = actor_module(self.algo.get_module(MODULE))
        write_onnx(actor, OBS_SIZES[self.metadata["obs_version"]], about, path, producer="allfives train (rllib snapshot)")


def send_pool(algo, pool: OpponentPool) -> None:
    """Hand the pool's agents to every environment of every runner (they take them at their next reset).
    The snapshot files must be where the runners are: a local Ray, or a run folder on shared storage."""
    specs, weights = pool.entries()

    def update(runner):
        for env in getattr(getattr(runner, "env", None), "envs", []):
            env.unwrapped.set_pool(specs, weights)

    algo.env_runner_group.foreach_env_runner(update, local_env_runner=True)


def save(algo, run_dir: Path, steps: int, wall: float, metadata: dict, pool_state: dict) -> Path:
    """Checkpoint ``algo`` into ``RUN/checkpoints/step_N``, then name it in latest.json; keep the newest ``KEEP``."""
    folder = run_dir / CHECKPOINTS
    path = folder / f"step_{steps:010d}"
    if path.exists():
        shutil.rmtree(path)
    algo.save_to_path(str(path.resolve()))
    state = {"steps": steps, "wall_seconds": round(wall, 3), "pool": pool_state}
    atomic_write(path / METADATA_NAME, (json.dumps(dict(metadata, **state), indent=1) + "\n").encode())
    atomic_write(folder / LATEST, json.dumps({"checkpoint": path.name, **state}).encode())
    for old in sorted(p for p in folder.glob("step_*") if p.is_dir())[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)
    return path


def latest_checkpoint(run_dir) -> tuple[Path, dict]:
    """The newest complete checkpoint folder and its state (``steps``, ``wall_seconds``, ``pool``); ``CheckpointError`` otherwise."""
    latest = Path(run_dir) / CHECKPOINTS / LATEST
    try:
        state = json.loads(latest.read_text(encoding="utf-8"))
        path = latest.parent / state["checkpoint"]
        steps, wall, pool = int(state["steps"]), float(state["wall_seconds"]), dict(state.get("pool", {}))
    except FileNotFoundError:
        raise CheckpointError(f"cannot resume {run_dir}: no checkpoint ({latest} is missing)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"cannot resume {run_dir}: {latest} is not a readable checkpoint list ({exc})") from None
    if "/" in state["checkpoint"] or not (path / METADATA_NAME).is_file():
        raise CheckpointError(f"cannot resume {run_dir}: the checkpoint {path} that {latest} names is missing or incomplete")
    own = checkpoint_state(path)["steps"]
    if own != steps:
        raise CheckpointError(f"cannot resume {run_dir}: {path / METADATA_NAME} says steps {own}, but {latest} says {steps}: "
                              "the checkpoint's files disagree, refused")
    return path, {"steps": steps, "wall_seconds": wall, "pool": pool}


def checkpoint_state(path: Path) -> dict:
    """``steps``, ``wall_seconds`` and ``pool`` of a checkpoint folder, from its ``allfives.json``
    (folders of older versions hold the steps only); ``CheckpointError`` if it is unreadable."""
    try:
        meta = json.loads((path / METADATA_NAME).read_text(encoding="utf-8"))
        steps, wall, pool = meta["steps"], float(meta.get("wall_seconds", 0.0)), dict(meta.get("pool", {}))
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"checkpoint {path / METADATA_NAME} is not readable ({type(exc).__name__}: {exc})") from None
    return {"steps": steps, "wall_seconds": wall, "pool": pool}


def resume_point(run_dir) -> tuple[Path, dict] | None:
    """The checkpoint a resume continues from and its state: the one latest.json names or, without
    latest.json (a run stopped while it wrote its first), the newest complete folder; ``None`` if none."""
    folder = Path(run_dir) / CHECKPOINTS
    if (folder / LATEST).exists():
        return latest_checkpoint(run_dir)
    for path in sorted((p for p in folder.glob("step_*") if (p / METADATA_NAME).is_file()), reverse=True):
        state = checkpoint_state(path)
        if path.name != f"step_{state['steps']:010d}":
            raise CheckpointError(f"cannot resume {run_dir}: {path / METADATA_NAME} says steps {state['steps']}, but the folder is {path.name}: refused")
        return path, state
    return None


def checked_resume_point(run_dir) -> tuple:
    """``resume_point`` with the pool's snapshots loaded once, or ``(None, None)`` (with a note) when
    the run has no complete checkpoint yet: it starts again."""
    found = resume_point(run_dir)
    if found is None:
        print(f"{run_dir} has no complete checkpoint (it was stopped before its first): starting it again from step 0")
        return None, None
    path, state = found
    check_snapshots(state["pool"].get("snapshots", []))
    if not (path.parent / LATEST).exists():
        print(f"{path.parent / LATEST} is missing (the run was stopped while it wrote it): resuming from the newest complete checkpoint, {path.name}")
    return path, state


def saved_config(run_dir) -> RLlibConfig:
    """The config a run was started with (``RUN/config.yaml``); ``ConfigError`` if it is missing."""
    return saved_run_config(run_dir, load_rllib_config)


def resume_config(run_dir, config_path=None, overrides=()) -> RLlibConfig:
    """The config of a resumed run: its saved config (or ``config_path``) with ``overrides``, checked."""
    return resumed_run_config(run_dir, load_rllib_config, config_path, overrides, RESUMABLE)


def check_run_dir(run_dir, resume: bool) -> None:
    """A fresh run must not overwrite another, but may take the folder of one stopped before its first
    checkpoint; a resume needs a complete checkpoint, or a run to start again (its saved config)."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise CheckpointError(f"run directory {run_dir} exists and is not a directory: pass another --run-dir")
    if resume:
        if resume_point(run_dir) is None and not (run_dir / CONFIG_NAME).is_file():
            raise CheckpointError(f"nothing to resume: no checkpoint in {run_dir / CHECKPOINTS} and no saved config in {run_dir}")
    elif run_dir.exists() and any(run_dir.iterdir()) and not restartable(run_dir):
        raise CheckpointError(f"run directory {run_dir} is not empty: pass --resume to continue it, or another --run-dir")


def restartable(run_dir: Path) -> bool:
    """Whether ``run_dir`` is a run stopped before its first checkpoint: its saved config and no complete checkpoint."""
    try:
        return (run_dir / CONFIG_NAME).is_file() and resume_point(run_dir) is None
    except CheckpointError:  # a damaged latest.json: a run, not to be replaced
        return False
