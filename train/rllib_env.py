"""The RLlib trainer's environment: the SB3 trainer's ``PoolEnv`` as an RLlib ``MultiAgentEnv``.

The learner's seat is the one RLlib agent (``LEARNER``; every seat it takes, episode by episode,
maps to one shared module); every other seat is played inside the environment by agents drawn from
the opponent pool, by the same code as the SB3 trainer's (``allfives_train.envs.make_env_fn``), so both
trainers learn the same game against the same opponents with the same rewards. Observations are
``{"observations", "action_mask" (int8)}``, the keys of RLlib's ``ActionMaskingTorchRLModule``
(as ``allfives_env.rllib_env``), so a masked-out action is never sampled.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_SIZES

from .envs import make_env_fn

LEARNER = "learner"


def observation_space(obs_version: int) -> spaces.Dict:
    """The learner's observation: the vector of ``obs_version`` and the legal actions as floats."""
    return spaces.Dict({
        "observations": spaces.Box(-1.0, 1.0, (OBS_SIZES[obs_version],), np.float32),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
    })


class PoolMultiAgentEnv(MultiAgentEnv):
    """``env_config``: ``{"config": RLlibConfig, "opponents": [spec, ...], "weights": [...]}``; RLlib adds the
    runner's ``worker_index`` and ``vector_index``, which set the environment's seed with the config's."""

    def __init__(self, env_config) -> None:
        super().__init__()
        cfg = env_config["config"]
        rank = 1000 * getattr(env_config, "worker_index", 0) + getattr(env_config, "vector_index", 0)
        self.env = make_env_fn(cfg, rank, env_config["opponents"], env_config["weights"])()
        self.agents = self.possible_agents = [LEARNER]
        self.observation_spaces = {LEARNER: observation_space(cfg.net.obs_version)}
        self.action_spaces = {LEARNER: spaces.Discrete(NUM_ACTIONS)}

    def _observe(self, obs: np.ndarray) -> dict:
        return {LEARNER: {"observations": obs, "action_mask": self.env.action_masks()}}

    def reset(self, *, seed=None, options=None):
        obs, _ = self.env.reset(seed=seed, options=options)
        return self._observe(obs), {}

    def set_pool(self, specs, weights) -> None:
        """New opponents from the pool's specs (at the next reset), as ``PoolEnv.set_pool``."""
        self.env.set_pool(specs, weights)

    def step(self, action_dict):
        obs, reward, terminated, truncated, _ = self.env.step(int(action_dict[LEARNER]))
        done = {LEARNER: terminated, "__all__": terminated}
        cut = {LEARNER: truncated, "__all__": truncated}
        return self._observe(obs), {LEARNER: reward}, done, cut, {}
