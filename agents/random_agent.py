"""``random``: a uniformly random legal move."""

from __future__ import annotations

from .base import Agent


class RandomAgent(Agent):
    """Picks uniformly among the legal moves, from its own seeded generator."""

    name = "random"

    def act(self, view) -> int:
        legal = view.legal_actions
        return legal[self.rng.randrange(len(legal))]
