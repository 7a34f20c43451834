"""The one adapter RLlib needs: the AEC env with the observation keys of RLlib's action masking.

RLlib's action-masking module (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) reads
a ``Dict`` observation with the keys ``"observations"`` and ``"action_mask"`` (float, 1 = legal);
our env's keys are ``"observation"`` and ``"action_mask"`` (int8), as PettingZoo's classic games
use. ``rllib_env(**options)`` is ``env(**options)`` with the keys renamed and the mask as float32;
nothing else changes (rewards, infos, illegal-move handling). Wrap it in RLlib's own
``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``; this module does not import ray.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from allfives_env.engine.tiles import NUM_ACTIONS


class RLlibMaskedObservations(BaseWrapper):
    """``{"observation", "action_mask"}`` -> ``{"observations", "action_mask" (float32)}``."""

    def __init__(self, env) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])["observation"]
        self._space = spaces.Dict({"observations": inner, "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32)})

    def observation_space(self, agent):
        return self._space

    def observe(self, agent):
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def rllib_env(**options) -> RLlibMaskedObservations:
    """``allfives_env.env(**options)`` with RLlib's action-masking observation keys."""
    from allfives_env.aec import env

    return RLlibMaskedObservations(env(**options))
