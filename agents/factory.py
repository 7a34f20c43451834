"""``make_agent``: an agent from a spec (text or ``AgentSpec``), an ``Agent``, or a function.

A named bot (``strong``) is built for the game it plays: with ``rules`` at once, without them on
its first move, from the game's rules in the view (``BotAgent``), each game size once.
"""

from __future__ import annotations

import importlib

from .base import Agent, FunctionAgent
from .nets.policy import check_policy_players
from .registry import AGENTS
from .spec import AgentSpec


def make_agent(spec, seed: int | None = None, rules=None) -> Agent:
    """An agent from a spec string or ``AgentSpec``, an ``Agent`` (returned as is) or a function
    ``f(view) -> action``. ``rules``: the game's, which a named bot needs to pick its setting
    (without them it picks at its first move) and against which every network the agent reads is
    checked; ``ValueError`` for a bot with no setting for them, ``PolicyPlayersError`` for a network
    trained for another number of players or partnerships (``check_policy_players``)."""
    if isinstance(spec, Agent):
        return spec
    if callable(spec) and not isinstance(spec, (str, AgentSpec)):
        return FunctionAgent(spec)
    spec = AgentSpec.parse(spec)
    if spec.is_bot:
        if rules is None:
            return BotAgent(spec, seed)
        spec = spec.for_game(rules.num_players, rules.partnerships)
    module_name, _, class_name = AGENTS[spec.kind].target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    agent = cls(spec.path, seed=seed) if spec.path else cls(seed=seed, **spec.option_dict())
    agent.name = str(spec)
    agent.spec = spec
    if rules is not None:
        check_policy_players(agent, rules)
    return agent


class BotAgent(Agent):
    """A named bot not yet told its game: it builds its setting for the rules of the first view it
    is asked to move in (``ValueError`` where it has none), once per game size."""

    def __init__(self, spec: AgentSpec, seed: int | None = None) -> None:
        super().__init__(seed)
        self.spec = spec
        self.name = str(spec)
        self._seed = seed
        self._built: dict[tuple[int, bool], Agent] = {}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._seed = seed
        for agent in self._built.values():
            agent.reset(seed)

    def for_rules(self, rules) -> Agent:
        """The bot's agent for a game of ``rules``."""
        key = (rules.num_players, rules.partnerships)
        agent = self._built.get(key)
        if agent is None:
            agent = self._built[key] = make_agent(self.spec, self._seed, rules)
        return agent

    def act(self, view) -> int:
        return self.for_rules(view.rules).act(view)
