"""Registers the environments with gymnasium and PettingZoo without importing either one.

The engine must stay importable without numpy or RL libraries, yet ``gymnasium.make("AllFives-v0")``
should work after ``import allfives_env`` in any import order. So: if gymnasium / pettingzoo is
already imported, register now (entry points are strings, nothing heavy is loaded); otherwise a
small import hook registers right after that library finishes importing.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

#: the learner's decisions in one hand are bounded by the rules: each places a tile the learner
#: (or its side) holds, and as a hand ends when a seat has placed its last tile, every other seat
#: (at least one outside the learner's side) keeps a tile: at most ``NUM_TILES - 1`` = 27 for every
#: variant and hand size, so the limit never cuts a hand episode short
HAND_EPISODE_STEPS = 27

#: the common variants: name -> (options, ``max_episode_steps``); every id also exists under the
#: ``allfives/`` namespace. The registered ids default to ``illegal_action="lose"`` (an illegal
#: action ends the episode with ``illegal_reward``, as PettingZoo's ``TerminateIllegalWrapper``
#: does), so gymnasium's and SB3's ``check_env`` pass with sampled actions; give
#: ``illegal_action="raise"`` to ``gymnasium.make`` for the engine's ``IllegalMoveError`` instead.
#: ``gymnasium.make_vec(id, n)`` builds ``allfives_env.gym_vector.AllFivesVectorEnv`` (the ids'
#: ``vector_entry_point``); ``vectorization_mode="sync"`` / ``"async"`` gymnasium's own.
GYM_VARIANTS = {
    "AllFives-v0": ({"num_players": 2}, None),
    "AllFives-3p-v0": ({"num_players": 3}, None),
    "AllFives-4p-v0": ({"num_players": 4, "partnerships": True}, None),
    "AllFives-4p-cutthroat-v0": ({"num_players": 4, "partnerships": False}, None),
    "AllFives-hand-v0": ({"num_players": 2, "episode": "hand"}, HAND_EPISODE_STEPS),
}
REGISTERED_DEFAULTS = {"illegal_action": "lose"}
GYM_IDS = tuple(name for base in GYM_VARIANTS for name in (base, f"allfives/{base}"))
PETTINGZOO_ID = "allfives/all_fives-v0"
_done: set[str] = set()


def register_gymnasium() -> None:
    import gymnasium

    for base, (options, max_steps) in GYM_VARIANTS.items():
        for env_id in (base, f"allfives/{base}"):
            if env_id not in gymnasium.registry:
                gymnasium.register(
                    id=env_id,
                    entry_point="allfives_env.single_agent:SingleAgentEnv",
                    vector_entry_point="allfives_env.gym_vector:AllFivesVectorEnv",
                    max_episode_steps=max_steps,
                    kwargs={**REGISTERED_DEFAULTS, **options},
                )
    _done.add("gymnasium")


def register_pettingzoo() -> None:
    import pettingzoo

    register = getattr(pettingzoo, "register", None)
    if register is not None and PETTINGZOO_ID not in getattr(pettingzoo, "aec_registry", {}):
        register("aec", PETTINGZOO_ID, entry_point="allfives_env.aec:env")
    _done.add("pettingzoo")


_REGISTER = {"gymnasium": register_gymnasium, "pettingzoo": register_pettingzoo}


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _REGISTER[self._name]()


class _Hook(importlib.abc.MetaPathFinder):
    """Finds gymnasium / pettingzoo with the other finders and registers after they load."""

    def find_spec(self, name, path, target=None):
        if name not in _REGISTER or name in _done:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and not isinstance(spec.loader, _Loader):
                    spec.loader = _Loader(spec.loader, name)
                return spec
        return None


def install() -> None:
    """Register now with the libraries already imported; hook the others."""
    for name, register in _REGISTER.items():
        if name in sys.modules and name not in _done:
            try:
                register()
            except Exception:  # a broken optional install must not break the engine
                pass
    if not all(name in _done for name in _REGISTER) and not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
