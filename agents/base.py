"""The one interface every agent implements: a seat's ``PlayerView`` in, a legal action id out."""

from __future__ import annotations

import random
from typing import Callable


class Agent:
    """Base class of all agents (heuristic, search, neural, human).

    ``act(view)`` returns one of ``view.legal_actions``; it sees only what the seat can see.
    ``reset(seed)`` is called before each game (or episode) so that the agent's own random choices
    are reproducible. ``name`` is the spec that rebuilds the agent (``greedy``,
    ``ismcts:iters=400``, ``ppo:models/allfives_2p.zip``).
    """

    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseed the agent's own randomness."""
        self.rng.seed(seed)

    def act(self, view) -> int:
        raise NotImplementedError

    def networks(self) -> dict:
        """The trained networks this agent reads, by the option naming each (``policy``...): the
        ones checked against a game's players (``allfives_agents.nets.policy.check_policy_players``)."""
        policy = getattr(self, "policy", None)
        return {} if policy is None else {"policy": policy}

    def __call__(self, view) -> int:
        return self.act(view)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class FunctionAgent(Agent):
    """Wraps a plain function ``f(view) -> action`` as an agent."""

    def __init__(self, fn: Callable, name: str | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    def act(self, view) -> int:
        return int(self.fn(view))
