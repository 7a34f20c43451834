"""The rollouts' forward pass of ``AllFivesPolicy``: the hidden layers and the values in torch, as
the updates compute them (the same values), the legal moves' scores and their distribution in
numpy, on the live weights (``NumpyPolicy.pair_logits_of_hidden``).

SB3 asks the policy for one move in every game of the learner at each rollout step, 64 positions
at once in the recipes. At that size the scorer and the distribution are some 60 small torch
operations whose fixed cost per call, not their arithmetic, is most of the forward pass; numpy does
the same float32 sums for a fraction of it. The log-probabilities equal those of the torch
distribution (``LegalCategorical``) to float32 rounding, so the updates' first probability ratios
stay 1 (tests/test_rollout_forward.py). A sample takes one uniform number per position from torch's
generator (which SB3 seeds) and picks the move whose cumulative probability first passes it; the
mode is the first of the best moves, as ``LegalCategorical.mode``.
"""

from __future__ import annotations

import numpy as np
import torch

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_agents.nets.policy import NumpyPolicy


class RolloutForward:
    """``policy.forward`` for a batch of positions under inference mode, with masks, on the CPU."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self._twin: NumpyPolicy | None = None
        self._key: tuple = ()

    def twin(self) -> NumpyPolicy:
        """The scorer as numpy arrays sharing the torch parameters' memory (so the optimizer's steps
        show through); made again if a parameter was replaced."""
        key = tuple(p.data_ptr() for p in self.policy.action_net.parameters())
        if self._twin is None or key != self._key:
            self._twin, self._key = NumpyPolicy.from_sb3(self.policy), key
        return self._twin

    def __call__(self, obs: torch.Tensor, action_masks, deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        policy = self.policy
        masks = np.asarray(action_masks.cpu() if isinstance(action_masks, torch.Tensor) else action_masks).reshape(-1, NUM_ACTIONS)
        rows, actions = np.divmod(np.flatnonzero(masks), NUM_ACTIONS)  # row by row, each row's moves in increasing order
        counts = np.bincount(rows, minlength=len(masks))
        if len(masks) != len(obs) or not counts.all():
            raise ValueError(f"each of the {len(obs)} positions needs a mask with a legal move; got {len(masks)} masks, "
                             f"{int((counts == 0).sum())} without one")
        h, view, latent_vf = policy.mlp_extractor.hidden_and_value(policy.extract_features(obs))
        values = policy.value_net(latent_vf)
        starts = np.cumsum(counts) - counts
        scores = self.twin().pair_logits_of_hidden(h.numpy(), view.numpy(), rows, actions)
        shifted = scores - np.maximum.reduceat(scores, starts)[rows]  # 0 at each row's best
        weights = np.exp(shifted, dtype=np.float64)
        totals = np.add.reduceat(weights, starts)
        log_probs = (shifted - np.log(totals)[rows]).astype(np.float32)
        if deterministic:
            best = np.flatnonzero(shifted == 0)
            pick = best[np.unique(rows[best], return_index=True)[1]]
        else:
            cumulative = np.cumsum(weights)
            passed = cumulative[starts] - weights[starts] + torch.rand(len(masks), dtype=torch.float64).numpy() * totals
            pick = np.clip(np.searchsorted(cumulative, passed, side="right"), starts, starts + counts - 1)
        return torch.from_numpy(actions[pick]), values, torch.from_numpy(log_probs[pick])
