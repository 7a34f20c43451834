"""Turns: who acts next and what that seat must do (docs/specification.md "Play": draws, the forced tile, passes).

Seats ``0 .. n - 1`` act in ascending order, after ``n - 1`` comes ``0``. Hands and
``open_tiles`` are 28-bit tile masks as in tiles.py: ``open_tiles`` is the layout's mask of the
unplayed tiles that fit an open end (every tile before the lead, so the starter always leads).
Pip sets are 7-bit masks (bit ``p`` = pip ``p``).

A turn is a run of events (events.py): a seat holding a tile that fits places one (``PLAY``);
otherwise it draws (``DRAW``) one tile at a time while ``can_draw`` (tiles are left above the
reserve) and must place the first drawn tile that fits, the *forced* tile; with nothing that fits
and nothing to draw it passes (``PASS``). A placement resets the passes in a row to 0 and a pass
adds one; when every seat has passed in a row the hand is blocked.

``Game`` carries these rules out and ``position.view_from_history`` checks a history against
them; both take them from here. ``Game``'s hot loop writes two of them out in place, where a call
on every move would cost speed: "a seat holding a tile that fits plays" and "a placement resets
the passes"; its draws and passes call these functions.
"""

from __future__ import annotations

from .events import DRAW, PASS, PLAY
from .tiles import TILE_PIP_MASK


def next_seat(seat: int, num_players: int) -> int:
    """The seat that acts after ``seat``."""
    return seat + 1 if seat + 1 < num_players else 0


def turn_action(hand: int, open_tiles: int, can_draw: bool) -> int:
    """What a seat holding ``hand`` must do next: ``PLAY``, ``DRAW`` or ``PASS``.

    This holds when its turn begins and after each draw (the drawn tile then in ``hand``): after
    a draw, ``PLAY`` means the drawn tile fits and is forced.
    """
    if hand & open_tiles:
        return PLAY
    return DRAW if can_draw else PASS


def missing_after_turn(missing: int, open_pips: int, drew_unplayable: bool) -> int:
    """Pips a seat is known to lack after a turn in which it could not place a tile it held.

    It held nothing matching ``open_pips`` (the pips open when the turn began). If it drew a tile
    it could not place, that tile may show any other pip, so only ``open_pips`` stays known;
    otherwise the earlier knowledge stands too. (A drawn tile that fits is placed at once.)
    """
    return open_pips if drew_unplayable else missing | open_pips


def could_hold(tile: int, missing: int) -> bool:
    """Whether a seat known to lack the pips ``missing`` can hold ``tile``."""
    return not TILE_PIP_MASK[tile] & missing


def passes_after(kind: int, passes: int) -> int:
    """Passes in a row after an event of ``kind``: a placement resets them, a draw leaves them."""
    if kind == PLAY:
        return 0
    return passes + 1 if kind == PASS else passes


def is_blocked(passes: int, num_players: int) -> bool:
    """Whether ``passes`` in a row block the hand: every seat has passed."""
    return passes >= num_players
