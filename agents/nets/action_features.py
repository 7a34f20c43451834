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

A policy on version-2 observations (``allfives_env.observation.LOOKAHEAD_PIECES``) has six more,
read straight from the vector (``N_FEATURES[2]`` = 22): 16. ``reply_threat``, 17. ``reply_max``,
18. ``reply_none``, 19. ``partner_reply``, 20. ``mobility``, 21. ``variety``; on version 3 a
seventh (``N_FEATURES[3]`` = 23): 22. ``follow_up``; on version 4 an eighth (``N_FEATURES[4]`` = 24):
23. ``follow_up_net``. Its hidden layers read only the position
pieces (``STATE_SIZE``: version 1 and ``may_hold``); the per-action pieces reach it through the
scorer.

The same computation exists in torch (``allfives_train.network``); a test checks the two agree.
"""

from __future__ import annotations

import numpy as np

from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, NUM_ACTIONS, OTHER_HALF, TILE_PIP_MASK, TILE_PIPS, TILES
from allfives_env.observation import OBS_SIZES, OFFSETS

N_ACTION_FEATURES = 16
#: the per-action pieces of version 2 that are action features, in feature order
LOOKAHEAD_FEATURES = ("reply_threat", "reply_max", "reply_none", "partner_reply", "mobility", "variety")
#: per observation version: the per-action pieces read as action features, in feature order
VERSION_FEATURES = {
    1: (),
    2: LOOKAHEAD_FEATURES,
    3: LOOKAHEAD_FEATURES + ("follow_up",),
    4: LOOKAHEAD_FEATURES + ("follow_up", "follow_up_net"),
}
#: per observation version: action features
N_FEATURES = {v: N_ACTION_FEATURES + len(names) for v, names in VERSION_FEATURES.items()}
#: per observation version: the values the hidden layers read (the vector's first values)
STATE_SIZE = {v: OBS_SIZES[1] if not names else OFFSETS[names[0]] for v, names in VERSION_FEATURES.items()}
#: the observation version of a feature count
VERSION_OF_FEATURES = {n: v for v, n in N_FEATURES.items()}
#: per observation version: the offsets of its per-action pieces read as features
FEATURE_OFFSETS = {v: tuple(OFFSETS[name] for name in names) for v, names in VERSION_FEATURES.items()}
#: the observation version of a vector size
_VERSION_OF_SIZE = {n: v for v, n in OBS_SIZES.items()}
#: (112, 6): tile pips / 12, double, end one-hot
STATIC = np.zeros((NUM_ACTIONS, 6), np.float32)
#: (112,): the end of each action
END_OF_ACTION = np.array(ACTION_END, np.int64)
#: (112, 7, 7): ``EXPOSE[a, p, q] = 1`` when the tile of ``a`` placed against pip ``p`` leaves ``q``
EXPOSE = np.zeros((NUM_ACTIONS, 7, 7), np.float32)
#: (28, 7): ``PIP_OF_TILE[t, p] = 1`` when tile ``t`` shows pip ``p``
PIP_OF_TILE = np.array([[TILE_PIP_MASK[t] >> p & 1 for p in range(7)] for t in range(28)], np.float32)

#: (112, 8): the pip action ``a`` leaves exposed when its arm shows pip ``p`` (column 7: the arm
#: does not exist), 7 when the tile does not match: ``EXPOSE`` as a lookup
EXPOSED_PIP = np.full((NUM_ACTIONS, 8), 7, np.int64)

for _a in range(NUM_ACTIONS):
    _t, _e = ACTION_TILE[_a], ACTION_END[_a]
    _lo, _hi = TILES[_t]
    STATIC[_a, 0] = TILE_PIPS[_t] / 12.0
    STATIC[_a, 1] = 1.0 if _lo == _hi else 0.0
    STATIC[_a, 2 + _e] = 1.0
    for _p in (_lo, _hi):
        EXPOSE[_a, _p, OTHER_HALF[_t][_p]] = 1.0
        EXPOSED_PIP[_a, _p] = OTHER_HALF[_t][_p]

#: (112 * 8, 13): row ``8 * a + p``: ``STATIC[a]`` then the one-hot of ``EXPOSED_PIP[a, p]`` (zeros for 7),
#: features 1-13 of action ``a`` against an arm showing ``p`` in one lookup (the torch twin's)
STATIC_EXPOSED = np.concatenate([np.repeat(STATIC, 8, axis=0), np.eye(8, 7, dtype=np.float32)[EXPOSED_PIP.ravel()]], axis=1)

_MP = OFFSETS["move_points"]
_ARM = OFFSETS["arm_pip"]
_UNSEEN = OFFSETS["unseen_pips"]
_HAND = OFFSETS["hand"]


def action_features(obs: np.ndarray) -> np.ndarray:
    """``(B, 112, F)`` features of every action for a batch of observations ``(B, size)``: F is
    ``N_FEATURES[version]`` of the observations' version."""
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
    parts = [points, static, exposed, unseen_exposed, mine_exposed]
    parts += [obs[:, o : o + NUM_ACTIONS, None] for o in FEATURE_OFFSETS[_VERSION_OF_SIZE.get(obs.shape[1], 1)]]
    return np.concatenate(parts, axis=-1)


def pair_features(obs: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``(P, F)``: the features of action ``actions[i]`` in observation ``obs[rows[i]]``, equal to
    ``action_features(obs)[rows, actions]`` without computing the other actions (for scoring the
    few legal moves of many positions). The arms' one-hot pips become pip numbers (7: no arm), so
    that features 1-13 are one row of ``STATIC_EXPOSED`` and the exposed pip one of ``EXPOSED_PIP``
    (the torch twin's lookups): the same values as the products of ``action_features``."""
    obs = np.asarray(obs, np.float32)
    rows = np.asarray(rows, np.int64)
    actions = np.asarray(actions, np.int64)
    pip_and_any = obs[:, _ARM : _ARM + 28].reshape(-1, 7) @ _PIP_AND_ANY  # per arm: its pip if one is shown, and whether one is
    shown = np.where(pip_and_any[:, 1] > 0, pip_and_any[:, 0], 7).astype(np.int64).reshape(len(obs), 4)  # (B, 4)
    row = actions * 8 + shown[rows, END_OF_ACTION[actions]]
    exposed = EXPOSED_PIP.ravel()[row]  # 7: none
    zero = np.zeros((len(obs), 1), np.float32)
    pips = np.concatenate([obs[:, _UNSEEN : _UNSEEN + 7], zero, obs[:, _HAND : _HAND + 28] @ PIP_OF_TILE / 7.0, zero], axis=1)  # unseen, none, mine, none
    per_action = _PER_ACTION[_VERSION_OF_SIZE.get(obs.shape[1], 1)]
    out = np.empty((len(rows), N_ACTION_FEATURES + len(per_action) - 1), np.float32)  # points, 13 static, 2 pips, lookahead
    gathered = obs[rows[:, None], actions[:, None] + per_action]  # the move's points, then its lookahead pieces
    static = 1 + STATIC_EXPOSED.shape[1]  # the column after features 1-13
    out[:, 0] = gathered[:, 0]
    out[:, 1:static] = STATIC_EXPOSED[row]
    out[:, static] = pips[rows, exposed]
    out[:, static + 1] = pips[rows, 8 + exposed]
    out[:, static + 2 :] = gathered[:, 1:]
    return out


#: an arm's 7 one-hot pip values -> (its pip number, whether it shows one)
_PIP_AND_ANY = np.stack([np.arange(7, dtype=np.float32), np.ones(7, np.float32)], axis=1)
#: the per-action columns ``pair_features`` gathers, by observation version
_PER_ACTION = {v: np.array([_MP, *offsets]) for v, offsets in FEATURE_OFFSETS.items()}
