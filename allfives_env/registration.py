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

GYM_IDS = ("AllFives-v0", "allfives/AllFives-v0")
PETTINGZOO_ID = "allfives/all_fives-v0"
_done: set[str] = set()


def register_gymnasium() -> None:
    import gymnasium

    for env_id in GYM_IDS:
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="allfives_env.single_agent:SingleAgentEnv")
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
