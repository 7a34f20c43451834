"""The seats a single-agent environment plays itself, as the caller hands them in.

An opponent is any object with ``act(view) -> action id`` and, optionally, ``reset(seed)`` (every
``agents.Agent``), or a plain function ``f(view) -> action id``. An opponent may also have
``act_game(game, seat) -> action id``, the move ``act(game.view(seat))`` would make, chosen from the
engine's ``Game`` without building the view; the environments call it where it exists (``expert``
and ``greedy`` have it: ``allfives_env.game_moves``). The environments never build agents by name:
that is the ``agents`` layer's job (``allfives_agents.make_agent("greedy")``), so this package
imports nothing above it. ``RandomOpponent`` is the default.
"""

from __future__ import annotations

import random


class RandomOpponent:
    """A uniformly random legal move from its own seeded generator (the same choices as ``agents``' ``random``)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng.seed(seed)

    def act(self, view) -> int:
        legal = view.legal_actions
        return legal[self.rng.randrange(len(legal))]


class FunctionOpponent:
    """A function ``f(view) -> action`` as an opponent (it has no randomness of its own to reset)."""

    def __init__(self, fn) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "function")

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, view) -> int:
        return self.fn(view)


def as_opponent(value, what: str = "opponent"):
    """``value`` as an object with ``act`` and ``reset``; ``TypeError`` naming ``what`` otherwise."""
    if callable(getattr(value, "act", None)):
        if not callable(getattr(value, "reset", None)):
            raise TypeError(f"{what} {value!r} has act() but no reset(seed); give it one (agents.Agent has both)")
        return value
    if callable(value) and not isinstance(value, str):
        return FunctionOpponent(value)
    if isinstance(value, str):
        raise TypeError(
            f"{what} {value!r} is a name, not an agent: the environment takes agent objects; "
            f"build one with allfives_agents.make_agent({value!r})"
        )
    raise TypeError(f"{what} must be an agent (an object with act(view)) or a function f(view) -> action, got {value!r}")


def as_opponents(value, what: str = "opponents") -> list:
    """One opponent or a list of them, each checked by :func:`as_opponent`; at least one."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items:
        raise ValueError(f"{what} must hold at least one agent")
    return [as_opponent(item, what) for item in items]
