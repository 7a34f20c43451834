"""The one adapter RLlib needs: the AEC env with the observation keys of RLlib's action masking.

RLlib's action-masking module (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) reads
a ``Dict`` observation with the keys ``"observations"`` and ``"action_mask"`` (1 = legal; it takes
the mask's log, which torch computes in float for an int8 mask too); our env's keys are
``"observation"`` and ``"action_mask"``, as PettingZoo's classic games use. ``rllib_env(**options)``
is ``env(**options)`` with the keys renamed; the mask stays int8, the one dtype of every env's mask
(gymnasium's ``sample(mask=...)`` takes it); nothing else changes (rewards, infos, illegal-move handling). Wrap it in RLlib's own
``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``; this module does not import ray.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from allfives_env.engine.tiles import NUM_ACTIONS


class RLlibMaskedObservations(BaseWrapper):
    """``{"observation", "action_mask"}`` -> ``{"observations", "action_mask"}``."""

    def __init__(self, env) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])["observation"]
        self._space = spaces.Dict({"observations": inner, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def rllib_env(**options) -> RLlibMaskedObservations:
    """``allfives_env.env(**options)`` with RLlib's action-masking observation keys."""
    from allfives_env.aec import env

    return RLlibMaskedObservations(env(**options))
