"""The All Fives rules engine: pure Python, standard library only, deterministic from a seed.

Start with ``Game`` (a whole game), ``Rules`` (the options of docs/specification.md), the action tables in
``tiles`` and ``PlayerView`` (what a seat can see). Records are in ``record``.
"""

from .errors import GameOverError, IllegalMoveError, RecordError
from .events import DRAW, LEAD, PASS, PLAY
from .game import RECORD_FORMAT, Deal, Game
from .layout import Layout
from .rules import Rules
from .tiles import (
    END_NAMES,
    NUM_ACTIONS,
    NUM_TILES,
    TILE_NAMES,
    TILES,
    action_name,
    decode_action,
    encode_action,
    tile_index,
)
from .view import PlayerView

__all__ = [
    "DRAW",
    "END_NAMES",
    "LEAD",
    "NUM_ACTIONS",
    "NUM_TILES",
    "PASS",
    "PLAY",
    "RECORD_FORMAT",
    "TILES",
    "TILE_NAMES",
    "Deal",
    "Game",
    "GameOverError",
    "IllegalMoveError",
    "Layout",
    "PlayerView",
    "RecordError",
    "Rules",
    "action_name",
    "decode_action",
    "encode_action",
    "tile_index",
]
