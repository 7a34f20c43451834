"""Agents for All Fives behind one interface (``Agent.act(view) -> action id``), and the registry by name."""

from .base import Agent, FunctionAgent
from .registry import AGENTS, available, make_agent, parse_spec, register_agent, resolve_spec

__all__ = ["AGENTS", "Agent", "FunctionAgent", "available", "make_agent", "parse_spec", "register_agent", "resolve_spec"]
