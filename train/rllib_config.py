"""The typed config of the RLlib trainer (``trainer: rllib``; train/rllib.py), with train/config.py's rules.

``load_rllib_config("configs/rllib_2p.yaml", ["ppo.lr=1e-4"])`` returns an ``RLlibConfig``. It reads
like the SB3 trainer's config, with the same ``game`` and ``pool`` sections (and their checks),
and with RLlib's own names where RLlib's PPO differs: ``ppo`` takes the ``PPOConfig.training``
arguments of ``PPO_VALUES``, ``num_env_runners`` spreads the collection over Ray workers
(0: collect in the driver). Unknown keys, wrong types and values out of range are one-line
``ConfigError``s naming the key, before anything is written; a resume may change ``RESUMABLE``
only (``config.resume_changes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from allfives_env.observation import OBS_SIZES, OBS_VERSION

from .bounds import rllib_problem
from .config import (
    ConfigError, GameConfig, PoolConfig, _check_agent, _number_or_text, check_game_and_pool, check_run_name, checked_value, from_dict,
    shown,
    read_data,
    trainer_of,
)


@dataclass
class RLlibNetConfig:
    """The policy and value networks: RLlib's default MLP encoder (``hidden``) with its heads."""

    hidden: list[int] = field(default_factory=lambda: [256, 256])
    activation: str = "tanh"
    #: the observation the policy reads (allfives_env.observation)
    obs_version: int = OBS_VERSION


@dataclass
class RLlibEvalConfig:
    """The final evaluation of the exported policy against baselines (duplicate games)."""

    final_games: int = 400
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    workers: int = 1


@dataclass
class RLlibConfig:
    """Everything ``allfives train`` needs for a ``trainer: rllib`` config; see configs/rllib_2p.yaml."""

    trainer: str = "rllib"
    name: str = "rllib_run"
    seed: int = 0
    total_steps: int = 200_000
    #: Ray workers that collect experience (0: the driver collects)
    num_env_runners: int = 0
    #: where Ray runs: "local" (start one here), "auto" (the cluster of RAY_ADDRESS) or HOST:PORT
    ray: str = "local"
    #: CPUs of a local Ray (0: every core)
    num_cpus: int = 0
    checkpoint_every: int = 50_000
    game: GameConfig = field(default_factory=GameConfig)
    pool: PoolConfig = field(default_factory=lambda: PoolConfig(self_play=0.0))
    net: RLlibNetConfig = field(default_factory=RLlibNetConfig)
    eval: RLlibEvalConfig = field(default_factory=RLlibEvalConfig)
    ppo: dict[str, Any] = field(
        default_factory=lambda: {
            "lr": 3e-4,
            "train_batch_size_per_learner": 4000,
            "minibatch_size": 256,
            "num_epochs": 4,
            "gamma": 0.99,
            "lambda_": 0.95,
            "entropy_coeff": 0.01,
            "clip_param": 0.2,
        }
    )


#: every PPOConfig.training argument a config may set: its kind, its range and the range in words
PPO_VALUES: dict[str, tuple[type, Any, str]] = {
    "lr": (float, lambda v: v > 0, "a finite number > 0"),
    "train_batch_size_per_learner": (int, lambda v: v >= 2, "an integer >= 2"),
    "minibatch_size": (int, lambda v: v >= 1, "an integer >= 1"),
    "num_epochs": (int, lambda v: v >= 1, "an integer >= 1"),
    "gamma": (float, lambda v: 0 < v <= 1, "in (0, 1]"),
    "lambda_": (float, lambda v: 0 < v <= 1, "in (0, 1]"),
    "clip_param": (float, lambda v: v > 0, "a finite number > 0"),
    "vf_clip_param": (float, lambda v: v > 0, "a finite number > 0"),
    "entropy_coeff": (float, lambda v: v >= 0, "a finite number >= 0"),
    "vf_loss_coeff": (float, lambda v: v >= 0, "a finite number >= 0"),
    "kl_coeff": (float, lambda v: v >= 0, "a finite number >= 0"),
    "grad_clip": (float, lambda v: v > 0, "a finite number > 0"),
}

#: what a resumed run may change of its saved config
RESUMABLE = ("total_steps", "checkpoint_every", "num_env_runners", "ray", "num_cpus", "eval",
             "pool.heuristics", "pool.self_play", "pool.snapshot_every", "pool.max_snapshots")


def load_rllib_config(path=None, overrides: list[str] | tuple = ()) -> RLlibConfig:
    """Read a YAML file (or start from defaults), apply ``key=value`` overrides, validate."""
    data = read_data(path, overrides)
    data.setdefault("trainer", "rllib")
    if trainer_of(data) != "rllib":
        raise ConfigError(f"{path or 'config'} is a config of the {data['trainer']} trainer, not rllib")
    config = from_dict(RLlibConfig, data)
    if "ppo" in data:  # merged over the defaults, so a file may set a few PPO keys only
        config.ppo = {**RLlibConfig().ppo, **config.ppo}
    validate(config)
    return config


def validate(config: RLlibConfig) -> None:
    """Ranges, known choices, agent specs, PPO values and what the run would ask of this machine
    (train/bounds.py); ``config.ppo`` is normalised in place."""
    from allfives_agents.tournament.cluster import ClusterError, check_address

    check_game_and_pool(config.game, config.pool)
    check_run_name(config.name)
    try:
        check_address(config.ray)
    except ClusterError as exc:
        raise ConfigError(f"ray: {exc}") from None
    checks = [
        (0 <= config.seed < 2**32, f"seed: must be an integer in [0, 2**32), got {shown(config.seed)}"),
        (config.total_steps >= 1, "total_steps must be at least 1"),
        (config.num_env_runners >= 0, "num_env_runners must be 0 (the driver collects) or more"),
        (config.num_cpus >= 0, "num_cpus must be 0 (every core) or more"),
        (config.checkpoint_every >= 1, "checkpoint_every must be at least 1"),
        (config.pool.partner != "learner", "pool.partner=learner: the rllib trainer plays one seat per game"),
        (config.net.activation in ("tanh", "relu"), "net.activation must be tanh or relu"),
        (bool(config.net.hidden) and all(n >= 1 for n in config.net.hidden), "net.hidden must be a list of positive layer sizes"),
        (config.net.obs_version in OBS_SIZES, f"net.obs_version must be one of {', '.join(map(str, OBS_SIZES))}"),
        (config.eval.final_games >= 2 and config.eval.workers >= 1, "eval.final_games must be at least 2, eval.workers at least 1"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    for spec in config.eval.opponents:
        _check_agent(spec, "eval.opponents")
    config.ppo = {key: _ppo_value(key, value) for key, value in config.ppo.items()}
    if config.ppo["minibatch_size"] > config.ppo["train_batch_size_per_learner"]:
        raise ConfigError(
            f"ppo.minibatch_size ({config.ppo['minibatch_size']}) must not exceed ppo.train_batch_size_per_learner "
            f"({config.ppo['train_batch_size_per_learner']})"
        )
    problem = rllib_problem(config)
    if problem:
        raise ConfigError(problem)


def _ppo_value(key: str, value):
    if key not in PPO_VALUES:
        raise ConfigError(f"unknown key 'ppo.{key}'; the PPOConfig.training arguments a config may set: {', '.join(PPO_VALUES)}")
    return checked_value(f"ppo.{key}", _number_or_text(value), *PPO_VALUES[key])
