"""``random``: a uniformly random legal move."""

from __future__ import annotations

from allfives_env.opponents import RandomOpponent

from .base import Agent


class RandomAgent(RandomOpponent, Agent):
    """Picks uniformly among the legal moves, from its own seeded generator: the environments'
    default opponent (``allfives_env.opponents.RandomOpponent``) as an ``Agent``."""

    name = "random"
