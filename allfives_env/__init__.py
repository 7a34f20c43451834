"""All Fives for reinforcement learning: rules engine, PettingZoo environment, observation spec.

Importing this package is cheap: ``allfives_env.engine`` needs only the standard library, and the
environment classes (which need numpy, gymnasium and pettingzoo) load on first use::

    import allfives_env
    env = allfives_env.env(num_players=4)                  # PettingZoo AEC, standard wrappers
    gym_env = allfives_env.SingleAgentEnv()                # the learner against random opponents

This is the bottom layer of the project: it imports nothing from ``agents``, ``train`` or the
applications (``allfives``), so the environments take their opponents as agent objects.

The environments are registered as ``pettingzoo.make("aec", "allfives/all_fives-v0")`` and
``gymnasium.make("AllFives-v0")`` (also ``"allfives/AllFives-v0"``; the variants
``AllFives-3p-v0``, ``AllFives-4p-v0``, ``AllFives-4p-cutthroat-v0``, ``AllFives-hand-v0``),
whichever of the two libraries is imported first or later (see ``allfives_env.registration``).
"""

from importlib import import_module

from . import registration as _registration
from .engine import view as _engine_view

__version__ = "0.1.0"

_LAZY = {
    "env": "allfives_env.aec",
    "raw_env": "allfives_env.aec",
    "SingleAgentEnv": "allfives_env.single_agent",
    "AllFivesVectorEnv": "allfives_env.gym_vector",
    "rllib_env": "allfives_env.rllib_adapter",
    "OBS_VERSION": "allfives_env.observation",
    "OBS_SIZE": "allfives_env.observation",
    "encode": "allfives_env.observation",
    "action_mask": "allfives_env.observation",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'allfives_env' has no attribute {name!r}")


_registration.install()


def _svg(view) -> str:
    from .picture import svg  # numpy and the drawing code load on the first picture only

    return svg(view)


# notebooks show a PlayerView as its picture (``engine.view.svg_renderer``; the engine imports no drawing)
_engine_view.svg_renderer = _svg
