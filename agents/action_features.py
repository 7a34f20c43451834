"""Per-action input features, computed from the observation vector alone (numpy).

The policy network scores every action id with one small network shared by all actions, so a
lesson learned about "a move that scores 10" or "a move that exposes a pip nobody can match"
applies to every tile and end at once. For action ``a = 4 * tile + end`` the features are
(``N_ACTION_FEATURES`` = 16):

0. the points the move scores now (the observation's ``move_points``)
1. the tile's pips / 12
2. 1 if the tile is a double
3-6. one-hot of the end (west, east, north, south)
7-13. one-hot of the pip the move leaves exposed on that end (zeros for a lead)
14. unseen tiles showing that exposed pip / 7 (how many the others may answer with)
15. the viewer's own tiles showing that exposed pip / 7

The same computation exists in torch (``agents.network``); a test checks the two agree.
"""

from __future__ import annotations

import numpy as np

from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, NUM_ACTIONS, OTHER_HALF, TILE_PIP_MASK, TILE_PIPS, TILES
from allfives_env.observation import OFFSETS

N_ACTION_FEATURES = 16

#: (112, 6): tile pips / 12, double, end one-hot
STATIC = np.zeros((NUM_ACTIONS, 6), np.float32)
#: (112,): the end of each action
END_OF_ACTION = np.array(ACTION_END, np.int64)
#: (112, 7, 7): ``EXPOSE[a, p, q] = 1`` when the tile of ``a`` placed against pip ``p`` leaves ``q``
EXPOSE = np.zeros((NUM_ACTIONS, 7, 7), np.float32)
#: (28, 7): ``PIP_OF_TILE[t, p] = 1`` when tile ``t`` shows pip ``p``
PIP_OF_TILE = np.array([[TILE_PIP_MASK[t] >> p & 1 for p in range(7)] for t in range(28)], np.float32)

for _a in range(NUM_ACTIONS):
    _t, _e = ACTION_TILE[_a], ACTION_END[_a]
    _lo, _hi = TILES[_t]
    STATIC[_a, 0] = TILE_PIPS[_t] / 12.0
    STATIC[_a, 1] = 1.0 if _lo == _hi else 0.0
    STATIC[_a, 2 + _e] = 1.0
    for _p in (_lo, _hi):
        EXPOSE[_a, _p, OTHER_HALF[_t][_p]] = 1.0

_MP = OFFSETS["move_points"]
_ARM = OFFSETS["arm_pip"]
_UNSEEN = OFFSETS["unseen_pips"]
_HAND = OFFSETS["hand"]


def action_features(obs: np.ndarray) -> np.ndarray:
    """``(B, 112, 16)`` features of every action for a batch of observations ``(B, OBS_SIZE)``."""
    obs = np.asarray(obs, np.float32)
    if obs.ndim == 1:
        obs = obs[None]
    batch = obs.shape[0]
    points = obs[:, _MP : _MP + NUM_ACTIONS, None]
    arm_pips = obs[:, _ARM : _ARM + 28].reshape(batch, 4, 7)[:, END_OF_ACTION, :]  # (B, 112, 7)
    exposed = np.einsum("bap,apq->baq", arm_pips, EXPOSE)
    unseen = obs[:, _UNSEEN : _UNSEEN + 7]
    mine = obs[:, _HAND : _HAND + 28] @ PIP_OF_TILE / 7.0
    unseen_exposed = np.einsum("baq,bq->ba", exposed, unseen)[..., None]
    mine_exposed = np.einsum("baq,bq->ba", exposed, mine)[..., None]
    static = np.broadcast_to(STATIC, (batch, NUM_ACTIONS, 6))
    return np.concatenate([points, static, exposed, unseen_exposed, mine_exposed], axis=-1)
