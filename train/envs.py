"""The training environments: ``SingleAgentEnv`` whose opponents come from the pool's agent specs.

The environments (``allfives_env``) take agent objects only; this layer turns the pool's specs
(``greedy``, ``ppo:runs/x/pool/snap_000050000.npz``) into agents with ``allfives_agents.make_agent``,
inside each environment's own process, so nothing heavy is pickled between processes.
"""

from __future__ import annotations

from typing import Sequence

from allfives_agents import make_agent
from allfives_env.single_agent import SingleAgentEnv

from .config import TrainConfig


class PoolEnv(SingleAgentEnv):
    """A ``SingleAgentEnv`` whose opponents (and partner) are given as agent specs."""

    def __init__(self, opponents: Sequence[str], opponent_weights=None, partner: str | None = None, **kwargs) -> None:
        super().__init__(
            opponents=[make_agent(spec) for spec in opponents],
            opponent_weights=opponent_weights,
            partner=None if partner is None else make_agent(partner),
            **kwargs,
        )

    def set_pool(self, specs: Sequence[str], weights: Sequence[float] | None = None) -> None:
        """New opponents from specs (at the next reset); called through ``VecEnv.env_method``."""
        self.set_opponents([make_agent(spec) for spec in specs], weights)


def make_env_fn(cfg: TrainConfig, rank: int, opponents: list[str], weights: list[float]):
    """A picklable constructor of environment ``rank`` (for SubprocVecEnv)."""

    def make():
        game = cfg.game
        partner = None if cfg.pool.partner in ("pool", "learner") else cfg.pool.partner
        env = PoolEnv(
            opponents,
            weights,
            partner,
            control_partner=cfg.pool.partner == "learner",
            reward_scale=game.reward_scale,
            obs_version=cfg.net.obs_version,
            privileged=getattr(cfg.net, "critic", "view") == "privileged",  # RLlib's net config has no critic choice
            rules=cfg.game.rules(),
            **cfg.game.episode_spec().to_dict(),
        )
        env.reset(seed=cfg.seed * 1000 + rank)
        return env

    return make
