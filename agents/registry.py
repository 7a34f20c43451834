"""The kinds of agent by name: ``random``, ``greedy``, ``expert``, ``ismcts``, ``ppo:PATH``, ``onnx:PATH``.

``AGENTS`` maps a kind to how to build it (``module:Class``), a summary and its options
(``allfives_agents.options.Option``). The options of ``ismcts`` are those of its one home,
``allfives_agents.search.options.SearchOptions``; ``expert``'s are its weights. A spec string names a kind
and its options (``allfives_agents.spec``); the named bots (``allfives_agents.bots``) are settings of these kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .expert import OPTIONS as EXPERT_OPTIONS
from .options import Option
from .search.options import OPTIONS as SEARCH_OPTIONS


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
    "random": AgentType("allfives_agents.random_agent:RandomAgent", "uniformly random legal move"),
    "greedy": AgentType("allfives_agents.greedy:GreedyAgent", "most points now, heaviest tile on ties"),
    "expert": AgentType(
        "allfives_agents.expert:ExpertAgent",
        "hand-written heuristic: points, the reply it allows, hand shape",
        EXPERT_OPTIONS,
    ),
    "ismcts": AgentType(
        "allfives_agents.search.ismcts:ISMCTSAgent",
        "information-set Monte Carlo tree search over sampled hidden hands",
        SEARCH_OPTIONS,
    ),
    "ppo": AgentType("allfives_agents.nets.policy:PPOAgent", "a trained policy (SB3 MaskablePPO zip or exported .npz)", takes_path=True),
    "onnx": AgentType("allfives_agents.nets.onnx_agent:OnnxAgent", "an exported ONNX policy (numpy + onnxruntime only)", takes_path=True),
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
