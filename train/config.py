"""Typed training configuration: dataclasses loaded from YAML (never evaluated), with overrides.

``load_config("configs/ppo_2p.yaml", ["ppo.learning_rate=1e-4", "total_steps=50000"])`` returns a
``TrainConfig``. Unknown keys, values of the wrong type and values out of range raise a one-line
``ConfigError`` naming the key (``pool.heuristics.greedy: expected a number, got 'lots'``,
``ppo.gamma: must be in (0, 1], got 1.5``), before anything is written. ``ppo`` takes the numeric
keyword arguments of MaskablePPO listed in ``PPO_VALUES``, each with its range; agent specs are
built once (``allfives_agents.make_agent``), so their own checks run too, and what the run would ask
of this machine is bounded (train/bounds.py). The YAML (a file or an override's value) is read by
the safe loader within ``MAX_YAML_VALUES`` values once its aliases are expanded, from a regular
file of at most ``MAX_CONFIG_BYTES``; a message shows at most ``MAX_SHOWN`` characters of a value.
``resume_changes`` lists what a resumed run may change of its saved config (``RESUMABLE``) and
refuses the rest.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import reprlib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union  # noqa: F401 (Union: annotations built at run time)

import yaml

from allfives_env.engine.rules import OPTION_NAMES, OPTIONS, Rules
from allfives_env.episode import EpisodeSpec
from allfives_env.observation import OBS_SIZES, OBS_VERSION

from .bounds import sb3_problem


#: the longest message of a ``ConfigError``, and the longest value one shows (a config's values may be
#: anything a YAML file or the command line holds)
MAX_MESSAGE = 1000
MAX_SHOWN = 200


class ConfigError(ValueError):
    """A configuration problem; the message names the key or the file (at most ``MAX_MESSAGE`` characters)."""

    def __init__(self, message: str) -> None:
        super().__init__(cut(message, MAX_MESSAGE))


def cut(text: str, limit: int = MAX_SHOWN) -> str:
    """``text``, or its first ``limit`` characters ending in an ellipsis."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = MAX_SHOWN
_REPR.maxlevel = 3


def shown(value) -> str:
    """``repr(value)`` for a message: at most ``MAX_SHOWN`` characters, never walking all of a huge value."""
    return cut(_REPR.repr(value))


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


#: ``net.critic``: what the value network reads
CRITICS = ("view", "privileged")


@dataclass
class NetConfig:
    """Sizes of the policy (``pi``) and value (``vf``) networks."""

    #: "scorer": the project's policy that scores every action with one shared network
    #: (train/network.py); "mlp": SB3's plain MLP policy
    policy: str = "scorer"
    pi: list[int] = field(default_factory=lambda: [256, 256])
    vf: list[int] = field(default_factory=lambda: [256, 256])
    scorer_width: int = 64
    activation: str = "tanh"
    #: the hidden layers' matrix products in training: "float32", or "bfloat16" (about 3x faster
    #: on CPUs with AVX-512 BF16; weights and exported policies stay float32); scorer policy only
    precision: str = "float32"
    #: the observation the policy reads: 2 (the environments' default: version 1 and the lookahead
    #: pieces), or 1 (see allfives_env.observation)
    obs_version: int = OBS_VERSION
    #: what the value network reads: "view" (the policy's observation) or "privileged" (also every
    #: hidden hand and the boneyard, ``allfives_env.privileged``, in training only; the policy still
    #: reads the view alone, and so does everything that plays); scorer policy only (docs/training.md)
    critic: str = "view"


@dataclass
class ImitateConfig:
    """The warm start before PPO: behaviour cloning of ``teacher``, DAgger-style (train/imitate.py)."""

    #: an agent spec (``expert``, ``ismcts:iters=200``); empty: no warm start
    teacher: str = ""
    #: round 1: ``first`` plays the learner's seats; later rounds: the student does; 0 (with
    #: ``anchor``): no warm start, the teacher's games only anchor PPO
    rounds: int = 2
    #: who plays round 1: ``teacher``, or ``student`` (the network warm-started, ``init_from``: DAgger
    #: from the first round, the teacher labelling the positions the student reaches)
    first: str = "teacher"
    #: games per round
    games: int = 400
    #: share of the learner's moves played at random while gathering
    explore: float = 0.1
    epochs: int = 4
    batch_size: int = 512
    learning_rate: float = 1e-3
    vf_coef: float = 0.5
    #: processes that play the games
    workers: int = 1
    #: what the student learns from: ``move`` (the teacher's move) or ``visits`` (a search teacher's
    #: share of root visits per move, AlphaZero's soft target; the teacher must be a search)
    target: str = "move"
    #: a folder that keeps the teacher's games of round 1 (``first: teacher``) across runs: a run
    #: reads the chunks it holds and writes there the ones it plays, so another student (other widths,
    #: epochs, rates or start) fits the same positions without the teacher playing them again
    #: (train/imitate.py, ``TeacherGames``); empty: kept only while the run's warm start lasts
    dataset: str = ""
    #: minibatches of the teacher's positions in ``dataset`` fitted before each PPO update, so PPO
    #: improves the policy while it keeps the teacher's choices (train/anchor.py); 0: none
    anchor: int = 0
    #: the weight of the anchor's cross-entropy, stepped by PPO's optimizer at PPO's learning rate
    anchor_coef: float = 1.0


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
    #: "subproc": SB3's SubprocVecEnv, one process per game; "dummy": all in the learner's process;
    #: "batched": ``allfives_train.vec_env.BatchedVecEnv``, the games split over ``env_workers`` processes
    #: (0: the learner's), the pool's network opponents asked once for all the games waiting on them
    vec_env: str = "subproc"
    env_workers: int = 2
    device: str = "cpu"
    torch_threads: int = 1
    #: torch threads for the PPO update, while the environments wait (0: ``torch_threads``)
    update_threads: int = 0
    checkpoint_every: int = 50_000
    #: the learning rate over the run: "constant" (``ppo.learning_rate`` throughout) or "linear"
    #: (from ``ppo.learning_rate`` at step 0 to 0 at ``total_steps``)
    lr_decay: str = "constant"
    #: a model zip (a run's ``final.zip``, a shipped ``models/NAME.zip``) whose policy weights start
    #: the run instead of random ones; its network and observation must be this config's
    init_from: str = ""
    game: GameConfig = field(default_factory=GameConfig)
    pool: PoolConfig = field(default_factory=PoolConfig)
    net: NetConfig = field(default_factory=NetConfig)
    imitate: ImitateConfig = field(default_factory=ImitateConfig)
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
        raise ConfigError(f"{key}: expected {names}, got {shown(value)}")
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {shown(value)}")
        return [_convert(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a mapping, got {shown(value)}")
        return {str(k): _convert(v, args[1], f"{key}.{cut(str(k))}") for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: expected true or false, got {shown(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ConfigError(f"{key}: expected an integer, got {shown(value)}")
    if tp is float:
        value = _number_or_text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{key}: expected a number, got {shown(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key}: expected a string, got {shown(value)}")
    raise ConfigError(f"{key}: unsupported type {tp}")  # pragma: no cover


def from_dict(cls, data, prefix: str = ""):
    """Build dataclass ``cls`` from a mapping; unknown keys and wrong types are ``ConfigError``."""
    where = prefix or "config"
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {shown(data)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        key = f"{prefix}.{unknown[0]}" if prefix else str(unknown[0])
        raise ConfigError(f"unknown key {shown(key)}; known keys{' of ' + prefix if prefix else ''}: {', '.join(names)}")
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
            raise ConfigError(f"override {cut(dotted)}: {cut(part)} is not a section")
    node[parts[-1]] = value


def parse_override(text: str) -> tuple[str, Any]:
    """``"ppo.learning_rate=1e-4"`` -> ``("ppo.learning_rate", 0.0001)`` (the value read as YAML)."""
    key, eq, raw = text.partition("=")
    if not eq or not key.strip():
        raise ConfigError(f"override {shown(text)} must be key=value (e.g. ppo.learning_rate=1e-4)")
    try:
        value = load_yaml(raw) if raw.strip() else ""
    except ConfigError as exc:
        raise ConfigError(f"override {shown(text)}: value {exc}") from None
    return key.strip(), value


#: the largest config file read, and the most values a YAML text may hold once its aliases are
#: expanded: far above any real config (about a hundred values), far below a "billion laughs"
MAX_CONFIG_BYTES = 1 << 20
MAX_YAML_VALUES = 100_000


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document whose aliases expand past ``MAX_YAML_VALUES`` values
    before anything is built from it: a few lines of nested aliases can stand for billions."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None and _expanded_values(node, {}) > MAX_YAML_VALUES:
            raise ConfigError(f"is refused: its aliases expand to more than {MAX_YAML_VALUES} values (a config has about a hundred)")
        return node


def _expanded_values(node, memo: dict) -> int:
    """The values ``node`` stands for with every alias expanded (each shared node counted once in time)."""
    if id(node) not in memo:
        memo[id(node)] = 0  # a node that contains itself counts once
        children = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        memo[id(node)] = 1 + sum(_expanded_values(child, memo) for child in children)
    return memo[id(node)]


def load_yaml(text: str):
    """The value of a YAML text, built by the safe loader within ``MAX_YAML_VALUES``; otherwise
    ``ConfigError`` ("is not valid YAML: ...", "is refused: ...") for the caller to name the text."""
    try:
        return yaml.load(text, Loader=_BoundedLoader)
    except ConfigError:
        raise
    except RecursionError:
        raise ConfigError("is not valid YAML: nested too deeply") from None
    except (yaml.YAMLError, ValueError, OverflowError) as exc:  # ValueError: a bad date, an integer of 5000 digits
        raise ConfigError(f"is not valid YAML: {cut(' '.join(str(exc).split()))}") from None


def _read_yaml(p: Path) -> dict:
    """The top-level mapping of a YAML file; ``ConfigError`` for anything that is not one."""
    from allfives_env.engine.files import refusal

    why = None if p.is_dir() else refusal(p, MAX_CONFIG_BYTES)
    if why:
        raise ConfigError(f"config {p}: {why}")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except IsADirectoryError:
        raise ConfigError(f"config {p} is a directory, not a YAML file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {p} is not a text file (not UTF-8 at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"config {p} cannot be read ({exc.strerror or exc})") from None
    try:
        data = load_yaml(text)
    except ConfigError as exc:
        raise ConfigError(f"{p} {exc}") from None
    if data is None:
        raise ConfigError(f"config {p} is empty")
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the top level must be a mapping of keys")
    return data


#: the ``trainer`` key of a config: which trainer reads it (absent: ``sb3``, this module's TrainConfig;
#: ``rllib``: train/rllib_config.py)
TRAINERS = ("sb3", "rllib")


def read_data(path=None, overrides: list[str] | tuple = ()) -> dict:
    """The mapping of a YAML file (or an empty one) with ``key=value`` overrides applied, unchecked."""
    data: dict = {} if path is None else _read_yaml(Path(path))
    for text in overrides:
        key, value = parse_override(text)
        _set_path(data, key, value)
    return data


def trainer_of(data: dict) -> str:
    """The config's ``trainer`` (``sb3`` when absent); ``ConfigError`` for an unknown one."""
    trainer = data.get("trainer", "sb3")
    if trainer not in TRAINERS:
        raise ConfigError(f"trainer: must be one of {', '.join(TRAINERS)}, got {shown(trainer)}")
    return trainer


def load_config(path=None, overrides: list[str] | tuple = ()) -> TrainConfig:
    """Read a YAML file (or start from defaults), apply ``key=value`` overrides, validate."""
    data = read_data(path, overrides)
    if "stages" in data:
        raise ConfigError(f"{path or 'config'} is a recipe of several runs (its stages: train/stages.py), not one run's config")
    return config_from_data(data, path or "config")


def config_from_data(data: dict, where: str = "config") -> TrainConfig:
    """The validated ``TrainConfig`` of a config's mapping (``read_data``'s), ``where`` naming it in errors."""
    if trainer_of(data) != "sb3":
        raise ConfigError(f"{where} is a config of the {data['trainer']} trainer (train/rllib_config.py)")
    data = dict(data)
    data.pop("trainer", None)
    config = from_dict(TrainConfig, data)
    if "ppo" in data:  # merge over the defaults, so a file may set a few PPO keys only
        config.ppo = {**TrainConfig().ppo, **config.ppo}
    validate(config)
    return config


def check_run_name(name: str) -> None:
    """``ConfigError`` unless ``name`` is a plain name: it names the run's folder under ``runs/``."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", name) or ".." in name:
        raise ConfigError(f"name: must be a plain name (letters, digits, '_', '-', '.'; no folders, at most 100 characters), "
                          f"as it names the run's folder under runs/; got {shown(name)}")


def validate(config: TrainConfig) -> None:
    """Checks that need more than types: ranges, known choices, agent specs, MaskablePPO values, and
    what the run would ask of this machine (train/bounds.py: memory, threads, processes).

    ``config.ppo`` is normalised in place (``n_steps: 128.0`` -> 128, ``"3e-4"`` -> 0.0003)."""
    from allfives_train.network import PRECISIONS  # torch, which training needs anyway

    check_game_and_pool(config.game, config.pool)
    if not (0 <= config.seed < 2**32):
        raise ConfigError(f"seed: must be an integer in [0, 2**32), got {shown(config.seed)}")
    check_run_name(config.name)
    if not re.fullmatch(r"cpu|cuda|cuda:\d+|mps|auto", config.device):
        raise ConfigError(f"device: must be cpu, cuda, cuda:N, mps or auto, got {shown(config.device)}")
    checks = [
        (config.total_steps >= 1 or (config.total_steps == 0 and bool(config.imitate.teacher)), "total_steps must be at least 1 (0 only with imitate.teacher: behaviour cloning alone)"),
        (config.n_envs >= 1, "n_envs must be at least 1"),
        (config.vec_env in ("subproc", "dummy", "batched"), "vec_env must be subproc, dummy or batched"),
        (config.env_workers >= 0, "env_workers must be 0 (the learner's process) or more"),
        (config.torch_threads >= 1, "torch_threads must be at least 1"),
        (config.update_threads >= 0, "update_threads must be 0 (as torch_threads) or more"),
        (config.checkpoint_every >= 1, "checkpoint_every must be at least 1"),
        (config.lr_decay in LR_DECAYS, f"lr_decay must be one of {', '.join(LR_DECAYS)}"),
        (not config.init_from or Path(config.init_from).is_file(), f"init_from: file not found: {cut(str(config.init_from))}"),
        (config.net.activation in ("tanh", "relu"), "net.activation must be tanh or relu"),
        (config.net.policy in ("scorer", "mlp"), "net.policy must be scorer or mlp"),
        (config.net.scorer_width >= 1, "net.scorer_width must be at least 1"),
        (config.net.precision in PRECISIONS, f"net.precision must be one of {', '.join(PRECISIONS)}"),
        (config.net.precision == "float32" or config.net.policy == "scorer", "net.precision bfloat16 needs net.policy scorer"),
        (config.net.obs_version in OBS_SIZES, f"net.obs_version must be one of {', '.join(map(str, OBS_SIZES))}"),
        (config.net.critic in CRITICS, f"net.critic must be one of {', '.join(CRITICS)}"),
        (config.net.critic == "view" or config.net.policy == "scorer", "net.critic privileged needs net.policy scorer (its actor reads the view alone)"),
        (all(n >= 1 for n in config.net.pi + config.net.vf), "net layer sizes must be positive"),
        (config.eval.every >= 1 and config.eval.games >= 2 and config.eval.final_games >= 2, "eval.every >= 1, eval.games and eval.final_games >= 2"),
        (config.eval.workers >= 1, "eval.workers must be at least 1"),
        (config.imitate.games >= 1 and config.imitate.epochs >= 1, "imitate.games and imitate.epochs must be at least 1"),
        (config.imitate.rounds >= 1 or (config.imitate.rounds == 0 and config.imitate.anchor >= 1),
         "imitate.rounds must be at least 1 (0 only with imitate.anchor: the teacher's games anchor PPO, no warm start)"),
        (config.imitate.anchor >= 0, "imitate.anchor must be 0 (none) or more minibatches per PPO update"),
        (not config.imitate.anchor or (config.imitate.dataset and config.total_steps >= 1),
         "imitate.anchor fits the teacher's games kept in imitate.dataset during PPO: it needs imitate.dataset and total_steps of at least 1"),
        (math.isfinite(config.imitate.anchor_coef) and config.imitate.anchor_coef > 0, "imitate.anchor_coef must be a finite number > 0"),
        (0.0 <= config.imitate.explore <= 1.0, "imitate.explore must be in [0, 1]"),
        (config.imitate.batch_size >= 1 and config.imitate.workers >= 1, "imitate.batch_size and imitate.workers must be at least 1"),
        (math.isfinite(config.imitate.learning_rate) and config.imitate.learning_rate > 0, "imitate.learning_rate must be a finite number > 0"),
        (math.isfinite(config.imitate.vf_coef) and config.imitate.vf_coef >= 0, "imitate.vf_coef must be a finite number >= 0"),
        (config.imitate.target in IMITATE_TARGETS, f"imitate.target must be one of {', '.join(IMITATE_TARGETS)}"),
        (config.imitate.first in IMITATE_FIRST, f"imitate.first must be one of {', '.join(IMITATE_FIRST)}"),
        (not config.imitate.dataset or (config.imitate.teacher and config.imitate.first == "teacher"),
         "imitate.dataset keeps the teacher's games of round 1: it needs imitate.teacher and imitate.first: teacher"),
        (not config.imitate.dataset or not Path(config.imitate.dataset).exists() or Path(config.imitate.dataset).is_dir(),
         f"imitate.dataset: {cut(str(config.imitate.dataset))} exists and is not a folder"),
        (config.eval.best_against in config.eval.opponents, "eval.best_against must be one of eval.opponents"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    for spec in config.eval.opponents:
        _check_agent(spec, "eval.opponents")
    if config.imitate.teacher:
        _check_agent(config.imitate.teacher, "imitate.teacher")
        if config.imitate.target == "visits":
            _check_search_teacher(config)
    config.ppo = _check_ppo(config.ppo, config.n_envs)
    problem = sb3_problem(config)
    if problem:
        raise ConfigError(problem)


def check_game_and_pool(game, pool: PoolConfig) -> None:
    """The checks of ``game`` and ``pool`` that need more than types (both trainers' configs have them)."""
    try:
        rules = game.rules()
        game.episode_spec()
    except ValueError as exc:
        raise ConfigError(f"game: {exc}") from None
    weights = list(pool.heuristics.values())
    checks = [
        (math.isfinite(game.reward_scale) and game.reward_scale > 0, "game.reward_scale must be a finite number > 0"),
        (math.isfinite(pool.self_play) and pool.self_play >= 0, "pool.self_play must be a finite number >= 0"),
        (all(math.isfinite(w) and w >= 0 for w in weights), "pool.heuristics weights must be finite numbers >= 0"),
        (sum(weights) > 0, "pool.heuristics needs at least one agent with a positive weight"),
        (pool.snapshot_every >= 1, "pool.snapshot_every must be at least 1"),
        (pool.max_snapshots >= 0, "pool.max_snapshots must be >= 0"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    for spec in pool.heuristics:
        _check_agent(spec, "pool.heuristics")
    if pool.partner not in ("pool", "learner"):
        if not rules.partnerships:
            raise ConfigError("pool.partner applies to partnership games only")
        _check_agent(pool.partner, "pool.partner")
    if pool.partner == "learner" and not rules.partnerships:
        raise ConfigError("pool.partner=learner needs a partnership game")


def _check_agent(spec, key: str) -> None:
    """Parse the spec and build the agent (a file agent: check that its file exists), so that an
    agent's own value checks fail now rather than in the middle of a run."""
    from allfives_agents import AgentSpec, make_agent

    try:
        parsed = AgentSpec.parse(spec)
        if parsed.path:
            if not Path(parsed.path).is_file():
                raise ValueError(f"file not found: {parsed.path}")
        else:
            make_agent(parsed)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{key}: agent {shown(spec)}: {cut(str(exc))}") from None


def _check_search_teacher(config) -> None:
    """``imitate.target: visits`` reads the root visits of a search: refuse another teacher now."""
    from allfives_agents import make_agent
    from allfives_agents.factory import BotAgent

    teacher = make_agent(config.imitate.teacher, rules=config.game.rules())
    if isinstance(teacher, BotAgent):
        teacher = teacher.for_rules(config.game.rules())
    if not hasattr(teacher, "search"):
        raise ConfigError(f"imitate.target visits needs a search teacher (ismcts, strong), not {shown(config.imitate.teacher)}")


#: ``imitate.target``: the student's target at each position
IMITATE_TARGETS = ("move", "visits")
#: ``imitate.first``: who plays the learner's seats in the first round
IMITATE_FIRST = ("teacher", "student")

#: ``lr_decay``: how the learning rate goes from ``ppo.learning_rate`` over the run
LR_DECAYS = ("constant", "linear")


#: every MaskablePPO argument a config may set: its kind (``float | None``: null allowed), its range
#: and the range in words
PPO_VALUES: dict[str, tuple[Any, Any, str]] = {
    "learning_rate": (float, lambda v: v > 0, "a finite number > 0"),
    "n_steps": (int, lambda v: v >= 1, "an integer >= 1"),
    "batch_size": (int, lambda v: v >= 1, "an integer >= 1"),
    "n_epochs": (int, lambda v: v >= 1, "an integer >= 1"),
    "gamma": (float, lambda v: 0 < v <= 1, "in (0, 1]"),
    "gae_lambda": (float, lambda v: 0 < v <= 1, "in (0, 1]"),
    "clip_range": (float, lambda v: v > 0, "a finite number > 0"),
    "clip_range_vf": (float | None, lambda v: v > 0, "a finite number > 0 or null"),
    "normalize_advantage": (bool, None, "true or false"),
    "ent_coef": (float, lambda v: v >= 0, "a finite number >= 0"),
    "vf_coef": (float, lambda v: v >= 0, "a finite number >= 0"),
    "max_grad_norm": (float, lambda v: v > 0, "a finite number > 0"),
    "target_kl": (float | None, lambda v: v > 0, "a finite number > 0 or null"),
    "stats_window_size": (int, lambda v: v >= 1, "an integer >= 1"),
}


def _ppo_value(key: str, value):
    return checked_value(f"ppo.{key}", value, *PPO_VALUES[key])


def checked_value(name: str, value, kind, in_range, wanted: str):
    """``value`` as a ``kind`` (``int``, ``float``, ``bool`` or ``float | None``) if ``in_range``
    takes it, else ``ConfigError`` "NAME: must be WANTED, got VALUE"; numbers may be YAML text."""
    error = ConfigError(f"{name}: must be {wanted}, got {shown(value)}")
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise error
    if value is None and kind == float | None:
        return None
    value = _number_or_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise error
        value = int(value)
    else:
        value = float(value)
    if not in_range(value):
        raise error
    return value


def _check_ppo(ppo: dict, n_envs: int) -> dict:
    """The ppo values converted and checked against ``PPO_VALUES``; unknown keys are refused."""
    from sb3_contrib import MaskablePPO

    params = inspect.signature(MaskablePPO.__init__).parameters
    out = {}
    for key, value in ppo.items():
        if key in RESERVED_PPO_KEYS:
            raise ConfigError(f"ppo.{key} is set by the trainer; use the config's own keys (net, seed, device)")
        if key not in params:
            raise ConfigError(f"unknown key 'ppo.{key}': not a MaskablePPO argument; known: {', '.join(PPO_VALUES)}")
        if key not in PPO_VALUES:
            raise ConfigError(f"ppo.{key} cannot be set from a config; the keys that can: {', '.join(PPO_VALUES)}")
        out[key] = _ppo_value(key, value)
    if out.get("normalize_advantage", True):
        if out.get("batch_size", params["batch_size"].default) < 2:
            raise ConfigError(f"ppo.batch_size: must be at least 2 when ppo.normalize_advantage is true (advantages are normalised per batch), got {out['batch_size']}")
        if out.get("n_steps", params["n_steps"].default) * n_envs < 2:
            raise ConfigError(f"ppo.n_steps * n_envs must be at least 2 when ppo.normalize_advantage is true, got {out.get('n_steps')} * {n_envs}")
    return out


#: what a resumed run may change of its saved config: these keys and everything under these sections
RESUMABLE = ("total_steps", "checkpoint_every", "n_envs", "vec_env", "env_workers", "device", "torch_threads", "update_threads", "eval",
             "pool.heuristics", "pool.self_play", "pool.snapshot_every", "pool.max_snapshots")


def _flatten(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


#: a run's config as it was started, in the run directory (a resume continues with it)
CONFIG_NAME = "config.yaml"


def saved_run_config(run_dir, load):
    """The config a run was started with, read by ``load`` (the trainer's loader) from
    ``RUN/config.yaml``; ``ConfigError`` if it is missing."""
    path = Path(run_dir) / CONFIG_NAME
    if not path.is_file():
        raise ConfigError(f"cannot resume {run_dir}: its saved config {path} is missing (a resumed run continues with the config it was started with)")
    return load(path)


def resumed_run_config(run_dir, load, config_path=None, overrides=(), resumable: tuple[str, ...] = RESUMABLE):
    """The config of a resumed run: its saved config, or ``config_path``, with ``overrides``, read by
    ``load``; ``ConfigError`` if that changes anything but ``resumable`` of the saved config."""
    saved = saved_run_config(run_dir, load)
    config = load(config_path if config_path is not None else Path(run_dir) / CONFIG_NAME, overrides)
    resume_changes(saved, config, resumable)
    return config


def resume_changes(saved, new, resumable: tuple[str, ...] = RESUMABLE) -> list[str]:
    """The keys ``new`` changes of ``saved`` (configs of one trainer); ``ConfigError`` if one may not
    change on resume (the game, the network, the PPO settings, the seed, the name, pool.partner)."""
    before, after = _flatten(dataclasses.asdict(saved)), _flatten(dataclasses.asdict(new))
    changed = [k for k in dict.fromkeys([*before, *after]) if before.get(k, "<unset>") != after.get(k, "<unset>")]
    refused = [k for k in changed if not any(k == r or k.startswith(r + ".") for r in resumable)]
    if refused:
        changes = ", ".join(f"{k} ({shown(before.get(k, '<unset>'))} -> {shown(after.get(k, '<unset>'))})" for k in refused)
        raise ConfigError(
            f"{changes} cannot change on resume: a resumed run keeps its game, network, ppo settings, seed and name; "
            f"only {', '.join(k + ('.*' if k == 'eval' else '') for k in resumable)} may change"
        )
    return changed


def to_yaml(config) -> str:
    """The resolved configuration as YAML (saved beside the model)."""
    return yaml.safe_dump(dataclasses.asdict(config), sort_keys=False)
