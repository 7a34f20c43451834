"""Agents for All Fives behind one interface (``Agent.act(view) -> action id``).

Rooms: the baselines (``random_agent``, ``greedy``, ``expert``) beside the interface (``base``),
the kinds (``registry``), the named bots (``bots``), specs (``spec``) and ``make_agent``
(``factory``), the move analysis (``analysis``); ``nets/`` runs trained networks (numpy, ONNX);
``search/`` is the search and what it infers; ``tournament/`` plays and rates agents.
"""

from .base import Agent, FunctionAgent
from .bots import BOTS
from .factory import make_agent
from .registry import AGENTS, available, register_agent
from .spec import AgentSpec, parse_specs, resolve_spec

__all__ = ["AGENTS", "BOTS", "Agent", "AgentSpec", "FunctionAgent", "available", "make_agent", "parse_specs", "register_agent", "resolve_spec"]
