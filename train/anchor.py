"""The teacher's anchor during PPO (``imitate.anchor``): before each PPO update, ``anchor`` minibatches
of the teacher's positions of round 1 (the games kept in ``imitate.dataset``, played there first if
missing) are fitted with the warm start's loss (cross-entropy to the teacher's move or visit shares),
weighted by ``anchor_coef`` and stepped by PPO's own optimizer at PPO's learning rate: kickstarting
(Schmitt et al. 2018), the policy improving on its rewards while it keeps the teacher's choices, the
anchor fading with the rate under ``lr_decay: linear``. The value head is left to PPO.

The minibatches are drawn from a generator seeded by ``seed`` and the step count, and the optimizer's
state is the checkpoint's, so a resumed run draws the minibatches one never stopped would.
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from .imitate import Batch, teacher_loss


class AnchorCallback(BaseCallback):
    """Fits ``minibatches`` minibatches of ``data`` at the end of each rollout, before PPO's update."""

    def __init__(self, data: Batch, minibatches: int, batch_size: int, coef: float, seed: int) -> None:
        super().__init__()
        import torch

        self.t = {k: torch.as_tensor(getattr(data, k)) for k in ("obs", "mask", "action", "visits")}
        self.soft = data.visits.shape[1] > 0
        self.size = len(data)
        self.minibatches, self.batch_size, self.coef, self.seed = minibatches, batch_size, coef, seed

    def _on_step(self) -> bool:
        return True

    def draws(self, steps: int) -> np.ndarray:
        """The rows fitted at step count ``steps``: one row of positions per minibatch."""
        gen = np.random.default_rng((self.seed, steps))
        return gen.integers(0, self.size, (self.minibatches, self.batch_size))

    def _on_rollout_end(self) -> None:
        import torch

        policy = self.model.policy
        policy.set_training_mode(True)
        total = 0.0
        for rows in self.draws(self.model.num_timesteps):
            idx = torch.as_tensor(rows)
            loss = teacher_loss(policy, *(self.t[k][idx] for k in ("obs", "mask", "action", "visits")), self.soft)
            policy.optimizer.zero_grad()
            (self.coef * loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), self.model.max_grad_norm)
            policy.optimizer.step()
            total += loss.item()
        policy.set_training_mode(False)
        self.logger.record("imitate/anchor_loss", total / self.minibatches)
