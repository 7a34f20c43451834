"""What users hand the environments, checked: actions and seeds.

An action is an action id as an int: a Python int or a numpy integer, never a bool, a float or a
string (whether it is in range and legal is the engine's to say). A seed follows gymnasium's rules:
``None`` or a non-negative int. Both environments use these, so the two accept the same things.
"""

from __future__ import annotations

import numpy as np
from gymnasium import error

from allfives_env.engine.tiles import NUM_ACTIONS


def as_action(action) -> int:
    """``action`` as a Python int if it is one (a Python int or a numpy integer, not a bool); else a
    ``TypeError`` naming it. Whether the id is in range and legal is the engine's to say."""
    if type(action) is int:
        return action
    if isinstance(action, np.integer) or (isinstance(action, int) and not isinstance(action, bool)):
        return int(action)
    raise TypeError(
        f"an action must be an int action id 0..{NUM_ACTIONS - 1} (a Python int or a numpy integer), "
        f"not {action!r} ({type(action).__name__})"
    )


def as_seed(seed) -> int | None:
    """``seed`` as gymnasium takes it (``None`` or a non-negative Python int; numpy integers are
    converted); otherwise gymnasium's own ``gymnasium.error.Error``. A bool is not a seed."""
    if seed is None:
        return None
    if isinstance(seed, np.integer):
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise error.Error(f"Seed must be a python integer, actual type: {type(seed)}")
    if seed < 0:
        raise error.Error(f"Seed must be greater or equal to zero, actual value: {seed}")
    return seed
