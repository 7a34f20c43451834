"""Agents by name: ``make_agent("greedy")``, ``make_agent("ismcts:iters=400,rollout=greedy")``, ``ppo:PATH``.

A spec is ``name`` or ``name:key=value,...``; for the policy agents (``ppo``, ``onnx``) everything
after the colon is a file path, or the name of a shipped model (``onnx:allfives_2p``,
``ppo:allfives_2p``; ``agents.models``) when no such file exists. Unknown names, unknown keys, a
key given twice and bad values (the wrong type, not finite, out of the option's range) raise
``ValueError`` listing what is available. Each option's type and range are in ``AGENTS``, the one
place that defines them; the agents check values given to their constructors against the same table
(``check_options``).
"""

from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass, field

from .base import Agent, FunctionAgent


@dataclass(frozen=True)
class Option:
    """An agent option's type and the values it takes: numbers are finite, at least ``min`` (or,
    with ``above``, strictly more than it); ``choices`` lists the values of a string option;
    ``policy`` marks a string that names a policy file (or a shipped model: ``option_file``)."""

    type: type
    min: float | None = None
    above: bool = False
    choices: tuple = ()
    policy: bool = False
    #: numbers: strictly less than this
    below: float | None = None

    def describe(self) -> str:
        """``int>=1``, ``float>0``, ``greedy|random``, ``float``: for ``available()``."""
        if self.choices:
            return "|".join(map(str, self.choices))
        if self.min is None:
            return self.type.__name__
        upper = "" if self.below is None else f"<{self.below:g}"
        return f"{self.type.__name__}{'>' if self.above else '>='}{self.min:g}{upper}"

    def check(self, value, key: str, agent: str):
        """``value`` if the option takes it, else ``ValueError`` naming the agent, the option and the rule."""
        if self.choices:
            if value not in self.choices:
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be one of {', '.join(map(str, self.choices))}")
            return value
        if self.type in (int, float):
            if isinstance(value, bool) or not isinstance(value, int if self.type is int else (int, float)):
                what = "an int" if self.type is int else "a number"
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be {what}")
            if not math.isfinite(value):
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be a finite number")
            if self.min is not None and (value <= self.min if self.above else value < self.min):
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be {'>' if self.above else '>='} {self.min:g}")
            if self.below is not None and value >= self.below:
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be < {self.below:g}")
        return value


@dataclass(frozen=True)
class AgentType:
    """How to build one kind of agent: ``module:Class``, a summary, its options (name -> ``Option``,
    or a plain type for an option with no range) and whether it takes a file path instead."""

    target: str
    summary: str
    options: dict[str, Option] = field(default_factory=dict)
    takes_path: bool = False

    def __post_init__(self) -> None:
        options = {k: v if isinstance(v, Option) else Option(v) for k, v in self.options.items()}
        object.__setattr__(self, "options", options)


AGENTS: dict[str, AgentType] = {
    "random": AgentType("agents.random_agent:RandomAgent", "uniformly random legal move"),
    "greedy": AgentType("agents.greedy:GreedyAgent", "most points now, heaviest tile on ties"),
    "expert": AgentType(
        "agents.expert:ExpertAgent",
        "hand-written heuristic: points, the reply it allows, hand shape",
        # the weights of the terms; any finite number (a negative weight reverses a term)
        {name: Option(float) for name in ("points", "threat", "partner", "domino", "heavy", "variety", "mobility", "double")},
    ),
    "ismcts": AgentType(
        "agents.ismcts:ISMCTSAgent",
        "information-set Monte Carlo tree search over sampled hidden hands",
        {
            "iters": Option(int, min=1),
            "seconds": Option(float, min=0, above=True),  # a time budget instead of iters (default: none)
            "rollout": Option(str, choices=("greedy", "random", "expert")),
            "c": Option(float, min=0),
            "policy": Option(str, policy=True),  # its move probabilities are the root's prior
            "cpuct": Option(float, min=0),
            "temp": Option(float, min=0, above=True),
            "guide": Option(str, choices=("root", "tree")),
            "belief": Option(str, choices=("uniform", "policy", "expert")),
            "worlds": Option(int, min=1),  # belief=policy: the pool of worlds weighted (default: iters)
            "bpolicy": Option(str, policy=True),  # belief=policy: the network modelling the other seats' play (default: policy)
            "bweights": Option(str, policy=True),  # belief=expert: a play model file (agents.play_fit) for expert's weights
            "bpartner": Option(str, policy=True),  # belief=expert: a fitted play model file weighing a partner's choices too
            "btemp": Option(float, min=0, above=True),  # belief=policy: the model's softmax temperature
            "beps": Option(float, min=0, above=True, below=1),  # belief=policy: the chance kept for any move
            "stop": Option(str, choices=("early", "full")),  # early: once no other move can be visited most
            "value": Option(str, choices=("points", "equity")),  # what a rollout's end is worth (agents.equity)
            "select": Option(str, choices=("puct", "bias")),  # how the root uses the prior (policy=)
            "opp": Option(str, choices=("search", "model", "all")),  # model: the other sides play the belief's model of play; all: a partner too
        },
    ),
    "ppo": AgentType("agents.policy:PPOAgent", "a trained policy (SB3 MaskablePPO zip or exported .npz)", takes_path=True),
    "onnx": AgentType("agents.onnx_agent:OnnxAgent", "an exported ONNX policy (numpy + onnxruntime only)", takes_path=True),
}


def register_agent(name: str, agent_type: AgentType) -> None:
    """Add an agent kind to the registry (for plugins and tests)."""
    AGENTS[name] = agent_type


def available() -> str:
    """The registered agents and their options, for error messages and ``--help``."""
    parts = []
    for name, kind in AGENTS.items():
        if kind.takes_path:
            parts.append(f"{name}:PATH")
        elif kind.options:
            parts.append(f"{name}[:{','.join(f'{k}=' + o.describe() for k, o in kind.options.items())}]")
        else:
            parts.append(name)
    return ", ".join(parts)


def _convert(value: str, option: Option, key: str, name: str):
    kind = option.type
    try:
        if kind is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        converted = kind(value)
    except ValueError:
        raise ValueError(f"agent {name!r}: option {key}={value!r} is not a valid {kind.__name__}") from None
    if isinstance(converted, float) and not math.isfinite(converted):  # named as written in the spec
        raise ValueError(f"agent {name!r}: option {key}={value!r} must be a finite number")
    return option.check(converted, key, name)


def check_options(name: str, options: dict) -> dict:
    """``options`` (key -> value) if agent ``name`` has every key and takes every value (see ``Option``);
    else ``ValueError`` naming the option. For the agents' constructors, so that values given
    without a spec meet the same rules."""
    for key, value in options.items():
        _option(name, key).check(value, key, name)
    return options


def _option(name: str, key: str) -> Option:
    """Option ``key`` of agent ``name``; ``ValueError`` listing its options if it has no such one."""
    options = AGENTS[name].options
    if key not in options:
        raise ValueError(f"agent {name!r} has no option {key!r}; its options: {', '.join(options) or 'none'}")
    return options[key]


def parse_spec(spec: str) -> tuple[str, dict | str]:
    """``(name, options)`` of a spec; for path agents ``options`` is the path (a shipped model's file
    for a model name such as ``onnx:allfives_2p``: ``policy_file``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}; available: {available()}")
    name, _, rest = spec.strip().partition(":")
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; available: {available()}")
    kind = AGENTS[name]
    if kind.takes_path:
        if not rest:
            raise ValueError(f"agent {name!r} needs a file: {name}:PATH")
        return name, policy_file(name, rest)
    options = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"agent {name!r}: option {item!r} must be key=value")
        option = _option(name, key)
        if key in options:
            raise ValueError(f"agent {name!r}: option {key!r} is given twice in {spec.strip()!r}")
        options[key] = _convert(value.strip(), option, key, name)
    return name, options


def resolve_spec(text: str) -> str:
    """An agent spec from a spec or a policy file: ``.onnx`` -> ``onnx:PATH``, ``.zip``/``.npz`` ->
    ``ppo:PATH``; anything else is taken as an agent spec (``greedy``, ``ismcts:iters=100``,
    ``onnx:PATH``). An existing file of another kind is a ``ValueError``."""
    text = text.strip()
    if text.partition(":")[0] in AGENTS:
        return text
    lower = text.lower()
    if lower.endswith(".onnx"):
        return f"onnx:{text}"
    if lower.endswith((".zip", ".npz")):
        return f"ppo:{text}"
    if os.path.isfile(text):
        raise ValueError(f"policy file {text}: unknown kind; expected .onnx, .zip or .npz, or an agent spec")
    return text


def policy_file(name: str, path: str) -> str:
    """The file a path agent ``name`` (``ppo``, ``onnx``) opens for ``path``: ``path`` itself when it is
    a file or looks like a path, else the shipped model of that name (``agents.models.model_path``)."""
    from .models import is_model_name, model_path

    kind = {"ppo": "zip", "onnx": "onnx"}.get(name)
    if kind is None or os.path.exists(path) or not is_model_name(path):
        return path
    try:
        return str(model_path(path, kind))
    except FileNotFoundError:
        return path  # the agent reports the missing file as before


def option_file(value: str) -> str:
    """The file a policy option (``Option.policy``) opens: an ``.onnx`` path, else a ``.zip``/``.npz``
    path or a shipped model's zip (``policy_file``)."""
    return policy_file("onnx" if value.lower().endswith(".onnx") else "ppo", value)


def spec_files(spec: str) -> dict[str, str]:
    """The files agent ``spec`` opens, by the option naming each: a path agent's file (as ``policy``),
    the files its file options name (``policy``, ``bpolicy``, ``bweights``, ``bpartner``)."""
    name, options = parse_spec(spec)
    if AGENTS[name].takes_path:
        return {"policy": options}
    kinds = AGENTS[name].options
    return {k: option_file(v) for k, v in options.items() if kinds[k].policy and v}


def with_absolute_files(spec: str) -> str:
    """``spec`` with every policy file it opens as an absolute path (for workers in other folders)."""
    name, options = parse_spec(spec)
    files = spec_files(spec)
    if AGENTS[name].takes_path:
        return f"{name}:{os.path.abspath(files['policy'])}"
    if not files:
        return spec
    items = [f"{k}={os.path.abspath(files[k]) if k in files else v}" for k, v in options.items()]
    return f"{name}:{','.join(items)}"


def make_agent(spec, seed: int | None = None) -> Agent:
    """An agent from a spec string, an ``Agent`` (returned as is) or a function ``f(view) -> action``."""
    if isinstance(spec, Agent):
        return spec
    if callable(spec) and not isinstance(spec, str):
        return FunctionAgent(spec)
    name, options = parse_spec(spec)
    module_name, _, class_name = AGENTS[name].target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if AGENTS[name].takes_path:
        agent = cls(options, seed=seed)
    else:
        agent = cls(seed=seed, **options)
    agent.name = spec.strip()
    return agent
