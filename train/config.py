"""Typed training configuration: dataclasses loaded from YAML (never evaluated), with overrides.

``load_config("configs/ppo_2p.yaml", ["ppo.learning_rate=1e-4", "total_steps=50000"])`` returns a
``TrainConfig``. Unknown keys and values of the wrong type raise ``ConfigError`` naming the key
(``pool.heuristics.greedy: expected a number, got 'lots'``). ``ppo`` takes MaskablePPO's own
keyword arguments; a key MaskablePPO does not have is refused the same way.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union  # noqa: F401 (Union: annotations built at run time)

import yaml

from allfives_env.engine.rules import OPTION_NAMES, OPTIONS, Rules
from allfives_env.episode import EpisodeSpec


class ConfigError(ValueError):
    """A configuration problem; the message names the key or the file."""


class _GameMethods:
    def rules_options(self) -> dict:
        """The rules options as ``Rules.make`` takes them."""
        return {name: getattr(self, name) for name in OPTION_NAMES}

    def rules(self) -> Rules:
        """The validated ``Rules`` (``ValueError`` naming a bad option)."""
        return Rules.make(**self.rules_options())

    def episode_spec(self) -> EpisodeSpec:
        """The validated ``EpisodeSpec`` (``ValueError`` naming a bad option)."""
        return EpisodeSpec(**{name: getattr(self, name) for name in EpisodeSpec.field_names()})


def _game_fields() -> list:
    """Every rules option (``engine.rules.OPTIONS``), every episode option (``EpisodeSpec``), ``reward_scale``."""
    out = [(o.name, Optional[o.given] if o.default is None else o.given, field(default=o.default)) for o in OPTIONS]
    hints = typing.get_type_hints(EpisodeSpec)
    out += [(f.name, hints[f.name], field(default=f.default)) for f in dataclasses.fields(EpisodeSpec)]
    out.append(("reward_scale", float, field(default=0.01)))
    return out


#: The game the learner plays: the rules options (docs/rules.md), the episode options
#: (``allfives_env.episode``) and ``reward_scale``, all under the names those modules give them.
GameConfig = dataclasses.make_dataclass("GameConfig", _game_fields(), bases=(_GameMethods,))
GameConfig.__module__ = __name__
GameConfig.__doc__ = "The game the learner plays: rules options, episode options and reward_scale."


@dataclass
class PoolConfig:
    """Who the learner plays against: heuristic agents and frozen snapshots of itself."""

    heuristics: dict[str, float] = field(default_factory=lambda: {"random": 0.05, "greedy": 0.55, "expert": 0.2})
    self_play: float = 0.2
    snapshot_every: int = 50_000
    max_snapshots: int = 8
    #: partnership games: "pool" (partner drawn like the opponents), "learner" (the learner plays
    #: both seats of its side) or an agent spec
    partner: str = "pool"


@dataclass
class NetConfig:
    """Sizes of the policy (``pi``) and value (``vf``) networks."""

    #: "scorer": the project's policy that scores every action with one shared network
    #: (agents/network.py); "mlp": SB3's plain MLP policy
    policy: str = "scorer"
    pi: list[int] = field(default_factory=lambda: [256, 256])
    vf: list[int] = field(default_factory=lambda: [256, 256])
    scorer_width: int = 64
    activation: str = "tanh"


@dataclass
class EvalConfig:
    """Evaluation against baselines (duplicate games through the tournament code)."""

    every: int = 50_000
    games: int = 100
    final_games: int = 400
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "expert"])
    best_against: str = "greedy"
    workers: int = 1


@dataclass
class TrainConfig:
    """Everything ``allfives train`` needs; see configs/*.yaml for commented examples."""

    name: str = "run"
    seed: int = 0
    total_steps: int = 200_000
    n_envs: int = 4
    vec_env: str = "subproc"
    device: str = "cpu"
    torch_threads: int = 1
    checkpoint_every: int = 50_000
    game: GameConfig = field(default_factory=GameConfig)
    pool: PoolConfig = field(default_factory=PoolConfig)
    net: NetConfig = field(default_factory=NetConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    ppo: dict[str, Any] = field(
        default_factory=lambda: {
            "learning_rate": 3e-4,
            "n_steps": 1024,
            "batch_size": 256,
            "n_epochs": 4,
            "gamma": 0.99,
            "gae_lambda": 0.95,
            "ent_coef": 0.01,
            "clip_range": 0.2,
        }
    )


#: MaskablePPO arguments that the trainer sets itself
RESERVED_PPO_KEYS = {"policy", "env", "policy_kwargs", "tensorboard_log", "seed", "device", "verbose", "_init_setup_model"}


def _type_name(tp) -> str:
    return getattr(tp, "__name__", str(tp)).replace("typing.", "")


def _number_or_text(value):
    """YAML 1.1 reads ``3e-4`` as text; take such strings as the numbers they spell."""
    if isinstance(value, str):
        try:
            return float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return value
    return value


def _convert(value, tp, key: str):
    """``value`` checked (and, for numbers, converted) against the annotation ``tp``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return _number_or_text(value)
    if origin is Union:
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(value, arg, key)
            except ConfigError:
                pass
        names = " or ".join(_type_name(a) for a in args if a is not type(None))
        raise ConfigError(f"{key}: expected {names}, got {value!r}")
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        return [_convert(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        return {str(k): _convert(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(f"{key}: expected an integer, got {value!r}")
    if tp is float:
        value = _number_or_text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{key}: expected a number, got {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key}: expected a string, got {value!r}")
    raise ConfigError(f"{key}: unsupported type {tp}")  # pragma: no cover


def from_dict(cls, data, prefix: str = ""):
    """Build dataclass ``cls`` from a mapping; unknown keys and wrong types are ``ConfigError``."""
    where = prefix or "config"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        key = f"{prefix}.{unknown[0]}" if prefix else str(unknown[0])
        raise ConfigError(f"unknown key {key!r}; known keys{' of ' + prefix if prefix else ''}: {', '.join(names)}")
    kwargs = {}
    for name in names:
        if name in data:
            kwargs[name] = _convert(data[name], hints[name], f"{prefix}.{name}" if prefix else name)
    return cls(**kwargs)


def _set_path(data: dict, dotted: str, value) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {dotted}: {part} is not a section")
    node[parts[-1]] = value


def parse_override(text: str) -> tuple[str, Any]:
    """``"ppo.learning_rate=1e-4"`` -> ``("ppo.learning_rate", 0.0001)`` (the value read as YAML)."""
    key, eq, raw = text.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"override {text!r} must be key=value (e.g. ppo.learning_rate=1e-4)")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: value is not valid YAML ({exc})") from None
    return key.strip(), value


def load_config(path=None, overrides: list[str] | tuple = ()) -> TrainConfig:
    """Read a YAML file (or start from defaults), apply ``key=value`` overrides, validate."""
    data: dict = {}
    if path is not None:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {p}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: the top level must be a mapping of keys")
    for text in overrides:
        key, value = parse_override(text)
        _set_path(data, key, value)
    config = from_dict(TrainConfig, data)
    if "ppo" in data:  # merge over the defaults, so a file may set a few PPO keys only
        config.ppo = {**TrainConfig().ppo, **config.ppo}
    validate(config)
    return config


def validate(config: TrainConfig) -> None:
    """Checks that need more than types: positive counts, known choices, real MaskablePPO keys."""
    try:
        rules = config.game.rules()
        config.game.episode_spec()
    except ValueError as exc:
        raise ConfigError(f"game: {exc}") from None
    checks = [
        (config.total_steps >= 1, "total_steps must be at least 1"),
        (config.n_envs >= 1, "n_envs must be at least 1"),
        (config.vec_env in ("subproc", "dummy"), "vec_env must be subproc or dummy"),
        (config.torch_threads >= 1, "torch_threads must be at least 1"),
        (config.checkpoint_every >= 1, "checkpoint_every must be at least 1"),
        (config.game.reward_scale > 0, "game.reward_scale must be positive"),
        (config.pool.self_play >= 0, "pool.self_play must be >= 0"),
        (all(w >= 0 for w in config.pool.heuristics.values()), "pool.heuristics weights must be >= 0"),
        (sum(config.pool.heuristics.values()) > 0, "pool.heuristics needs at least one agent with a positive weight"),
        (config.pool.snapshot_every >= 1, "pool.snapshot_every must be at least 1"),
        (config.pool.max_snapshots >= 0, "pool.max_snapshots must be >= 0"),
        (config.net.activation in ("tanh", "relu"), "net.activation must be tanh or relu"),
        (config.net.policy in ("scorer", "mlp"), "net.policy must be scorer or mlp"),
        (config.net.scorer_width >= 1, "net.scorer_width must be at least 1"),
        (all(n >= 1 for n in config.net.pi + config.net.vf), "net layer sizes must be positive"),
        (config.eval.every >= 1 and config.eval.games >= 2 and config.eval.final_games >= 2, "eval.every >= 1, eval.games and eval.final_games >= 2"),
        (config.eval.workers >= 1, "eval.workers must be at least 1"),
        (config.eval.best_against in config.eval.opponents, "eval.best_against must be one of eval.opponents"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    from agents import parse_spec

    for spec in list(config.pool.heuristics) + config.eval.opponents:
        try:
            parse_spec(spec)
        except ValueError as exc:
            raise ConfigError(f"agent {spec!r}: {exc}") from None
    if config.pool.partner not in ("pool", "learner"):
        if not rules.partnerships:
            raise ConfigError("pool.partner applies to partnership games only")
        try:
            parse_spec(config.pool.partner)
        except ValueError as exc:
            raise ConfigError(f"pool.partner: {exc}") from None
    if config.pool.partner == "learner" and not rules.partnerships:
        raise ConfigError("pool.partner=learner needs a partnership game")
    _check_ppo_keys(config.ppo)


def _check_ppo_keys(ppo: dict) -> None:
    from sb3_contrib import MaskablePPO

    params = inspect.signature(MaskablePPO.__init__).parameters
    allowed = sorted(k for k in params if k not in RESERVED_PPO_KEYS and k != "self")
    for key in ppo:
        if key in RESERVED_PPO_KEYS:
            raise ConfigError(f"ppo.{key} is set by the trainer; use the config's own keys (net, seed, device)")
        if key not in params:
            raise ConfigError(f"unknown key 'ppo.{key}': not a MaskablePPO argument; known: {', '.join(allowed)}")


def to_yaml(config: TrainConfig) -> str:
    """The resolved configuration as YAML (saved beside the model)."""
    return yaml.safe_dump(dataclasses.asdict(config), sort_keys=False)
