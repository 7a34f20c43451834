"""The learner's rollout buffer: ``MaskableRolloutBuffer`` without its second copy of each minibatch.

SB3 hands every minibatch to torch with ``th.tensor(array)``, a copy of arrays that numpy's indexing
(``observations[batch_inds]``) has just made; of a 512-position minibatch of version-2 observations
that is 2 MB copied twice. Here torch takes the fresh arrays as they are (``copy=False``), so the
samples are the same values, and nothing the buffer keeps is shared with them.
"""

from __future__ import annotations

import numpy as np
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer


class MinibatchBuffer(MaskableRolloutBuffer):
    """``MaskableRolloutBuffer`` whose ``_get_samples`` arrays go to torch without a copy."""

    def to_torch(self, array: np.ndarray, copy: bool = True) -> torch.Tensor:
        return super().to_torch(array, copy=False)
