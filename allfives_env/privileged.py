"""The critic's privileged features: the tiles a seat cannot see, read from the game's state.

A critic that sees every hand in training while the policy sees only its seat's view (perfect-
information distillation, as PerfectDou does for DouDizhu) reads these values after the standard
observation: ``SingleAgentEnv(privileged=True)`` appends them to every observation it builds.
They are the game's state as the engine holds it (each seat's hand, the undrawn boneyard), never
derived by rule; no policy that plays may read them, and the trainer's actor does not
(``allfives_train.network``, docs/training.md).

The pieces, in order, are those of ``PRIVILEGED_PIECES`` (name, size, meaning), egocentric as the
observation (relative seat ``r`` is the seat ``r`` places after the viewer; zeros for seats a smaller
game lacks).
"""

from __future__ import annotations

import numpy as np

from allfives_env.engine.tiles import NUM_TILES, tiles_mask
from allfives_env.observation import Piece

#: the privileged pieces, in vector order (after the standard observation)
PRIVILEGED_PIECES: tuple[Piece, ...] = (
    Piece("hidden_hands", 3 * NUM_TILES, None, "per relative seat 1, 2, 3 (28 each), 1 for each tile in that seat's hand"),
    Piece("hidden_boneyard", NUM_TILES, None, "1 for each tile still in the boneyard (drawable or held in reserve)"),
)
#: the values appended to each observation
PRIVILEGED_SIZE = sum(p.size for p in PRIVILEGED_PIECES)

_SHIFTS = np.arange(NUM_TILES, dtype=np.int64)


def encode_privileged(game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The ``PRIVILEGED_SIZE`` values of ``game`` (an engine ``Game``) seen from ``seat``; written into ``out`` when given."""
    if out is None:
        out = np.empty(PRIVILEGED_SIZE, np.float32)
    n = game.num_players
    masks = [game.hands[(seat + r) % n] if r < n else 0 for r in range(1, 4)]
    masks.append(tiles_mask(game.boneyard[game.draw_pos :]))
    out[:] = ((np.array(masks, np.int64)[:, None] >> _SHIFTS) & 1).ravel()
    return out
