"""Agents by name: ``make_agent("greedy")``, ``make_agent("ismcts:iters=400,rollout=greedy")``, ``ppo:PATH``.

A spec is ``name`` or ``name:key=value,...``; for the policy agents (``ppo``, ``onnx``) everything
after the colon is a file path. Unknown names, unknown keys and bad values raise ``ValueError``
listing what is available.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field

from .base import Agent, FunctionAgent


@dataclass(frozen=True)
class AgentType:
    """How to build one kind of agent: ``module:Class``, its options and their types, a summary."""

    target: str
    summary: str
    options: dict[str, type] = field(default_factory=dict)
    takes_path: bool = False


AGENTS: dict[str, AgentType] = {
    "random": AgentType("agents.random_agent:RandomAgent", "uniformly random legal move"),
    "greedy": AgentType("agents.greedy:GreedyAgent", "most points now, heaviest tile on ties"),
    "expert": AgentType(
        "agents.expert:ExpertAgent",
        "hand-written heuristic: points, the reply it allows, hand shape",
        {name: float for name in ("points", "threat", "partner", "domino", "heavy", "variety", "mobility", "double")},
    ),
    "ismcts": AgentType(
        "agents.ismcts:ISMCTSAgent",
        "information-set Monte Carlo tree search over sampled hidden hands",
        {"iters": int, "seconds": float, "rollout": str, "c": float},
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
            parts.append(f"{name}[:{','.join(f'{k}=' + t.__name__ for k, t in kind.options.items())}]")
        else:
            parts.append(name)
    return ", ".join(parts)


def _convert(value: str, kind: type, key: str, name: str):
    try:
        if kind is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        return kind(value)
    except ValueError:
        raise ValueError(f"agent {name!r}: option {key}={value!r} is not a valid {kind.__name__}") from None


def parse_spec(spec: str) -> tuple[str, dict | str]:
    """``(name, options)`` of a spec; for path agents ``options`` is the path."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}; available: {available()}")
    name, _, rest = spec.strip().partition(":")
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; available: {available()}")
    kind = AGENTS[name]
    if kind.takes_path:
        if not rest:
            raise ValueError(f"agent {name!r} needs a file: {name}:PATH")
        return name, rest
    options = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"agent {name!r}: option {item!r} must be key=value")
        if key not in kind.options:
            known = ", ".join(kind.options) or "none"
            raise ValueError(f"agent {name!r} has no option {key!r}; its options: {known}")
        options[key] = _convert(value.strip(), kind.options[key], key, name)
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
