"""Fixed lookup tables for tiles, ends and action ids, shared by everything in the project.

Tiles of the double-six set are indexed 0..27 in the order 0-0, 0-1, ..., 0-6, 1-1, ..., 6-6.
Ends are ``west`` = 0, ``east`` = 1, ``north`` = 2, ``south`` = 3. An action id is
``4 * tile_index + end`` (112 ids); the lead of a hand uses ``west``. The acting player is never
part of an action id. The formula has one home: ``action_id`` and ``ACTION_TILE``/``ACTION_END``
(and the checked ``encode_action``/``decode_action``); only the engine's measured hot loop in
``layout`` and ``game`` spells it out as shifts.

Hands and tile sets are 28-bit integer masks (bit ``i`` = tile ``i``), which makes copies free
and set operations single instructions.

Points come in fives (``SCORING_MULTIPLE``): the open ends score when their count is a multiple of
it, and pip counts at the end of a hand are rounded to one (``round_to_five``).
"""

from __future__ import annotations

NUM_TILES = 28
NUM_ENDS = 4
NUM_ACTIONS = NUM_TILES * NUM_ENDS
NUM_PIPS = 7
SCORING_MULTIPLE = 5

WEST, EAST, NORTH, SOUTH = 0, 1, 2, 3
END_NAMES = ("west", "east", "north", "south")
END_INDEX = {name: i for i, name in enumerate(END_NAMES)}
#: Pip value used for an arm that does not exist (yet); no tile contains it.
CLOSED = 7

TILES: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(NUM_PIPS) for b in range(a, NUM_PIPS))
TILE_INDEX: dict[tuple[int, int], int] = {t: i for i, t in enumerate(TILES)}
TILE_NAMES: tuple[str, ...] = tuple(f"{a}-{b}" for a, b in TILES)
TILE_PIPS: tuple[int, ...] = tuple(a + b for a, b in TILES)
IS_DOUBLE: tuple[bool, ...] = tuple(a == b for a, b in TILES)
ALL_TILES_MASK = (1 << NUM_TILES) - 1

#: ``PIP_TILES[p]``: mask of the tiles showing pip ``p``; ``PIP_TILES[CLOSED]`` is empty.
PIP_TILES: tuple[int, ...] = tuple(
    sum(1 << i for i, (a, b) in enumerate(TILES) if p in (a, b)) for p in range(NUM_PIPS)
) + (0,)

#: ``TILE_PIP_MASK[t]``: 7-bit mask of the pips on tile ``t``.
TILE_PIP_MASK: tuple[int, ...] = tuple((1 << a) | (1 << b) for a, b in TILES)

#: ``OTHER_HALF[t][p]``: the pip left exposed when tile ``t`` is matched against ``p``
#: (``CLOSED`` where ``t`` does not show ``p``).
OTHER_HALF: tuple[tuple[int, ...], ...] = tuple(
    tuple(b if p == a else a if p == b else CLOSED for p in range(NUM_PIPS + 1)) for a, b in TILES
)


def tile_index(tile) -> int:
    """Index of a tile given as ``(a, b)`` in either order, as ``"a-b"``, or as an index.

    Raises ``ValueError`` naming the tile when it is not one of the 28 double-six tiles.
    """
    if isinstance(tile, bool):
        raise ValueError(f"not a tile: {tile!r}")
    if isinstance(tile, int):
        if 0 <= tile < NUM_TILES:
            return tile
        raise ValueError(f"tile index {tile} is out of range 0..{NUM_TILES - 1}")
    if isinstance(tile, str):
        parts = tile.split("-")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"not a tile: {tile!r} (expected 'a-b' with pips 0..6)")
        tile = (int(parts[0]), int(parts[1]))
    try:
        a, b = tile
    except (TypeError, ValueError):
        raise ValueError(f"not a tile: {tile!r} (expected [a, b] with pips 0..6)") from None
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int) or not isinstance(b, int):
        raise ValueError(f"not a tile: {tile!r} (pips must be integers 0..6)")
    key = (a, b) if a <= b else (b, a)
    if key not in TILE_INDEX:
        raise ValueError(f"not a tile: {list(tile)!r} (pips must be 0..6)")
    return TILE_INDEX[key]


#: the end code of a lead in events (``events.LEAD``); a lead's action uses ``WEST``
LEAD_END = 4


def parse_end(name) -> int:
    """The end code of an end name: 0..3 for west, east, north, south; ``LEAD_END`` for ``"lead"``."""
    if isinstance(name, str):
        if name == "lead":
            return LEAD_END
        if name in END_INDEX:
            return END_INDEX[name]
    raise ValueError(f"end must be lead, west, east, north or south, got {name!r}")


def action_id(tile: int, end: int) -> int:
    """The action id of tile index ``tile`` on end ``end`` (unchecked; see ``encode_action``)."""
    return tile * NUM_ENDS + end


#: ``ACTION_TILE[a]``, ``ACTION_END[a]``: the tile index and the end of action id ``a``
ACTION_TILE: tuple[int, ...] = tuple(a // NUM_ENDS for a in range(NUM_ACTIONS))
ACTION_END: tuple[int, ...] = tuple(a % NUM_ENDS for a in range(NUM_ACTIONS))


def encode_action(tile, end) -> int:
    """Action id for placing ``tile`` (any form :func:`tile_index` takes) on ``end`` (name or id)."""
    if isinstance(end, str):
        end = parse_end(end)
        if end == LEAD_END:
            end = WEST
    if isinstance(end, bool) or not isinstance(end, int) or not 0 <= end < NUM_ENDS:
        raise ValueError(f"end must be 0..3 or a name, got {end!r}")
    return action_id(tile_index(tile), end)


def decode_action(action: int) -> tuple[int, int]:
    """``(tile_index, end)`` of an action id; ``ValueError`` if it is not in 0..111."""
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action!r} is not an action id in 0..{NUM_ACTIONS - 1}")
    return ACTION_TILE[action], ACTION_END[action]


def action_name(action: int) -> str:
    """Readable form of an action id, e.g. ``"5-6@east"``."""
    t, e = decode_action(action)
    return f"{TILE_NAMES[t]}@{END_NAMES[e]}"


def _set_bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


#: ``_CHUNK_TILES[q][m]``: the tiles of bits ``m`` (7 of them) at tile ``7 * q`` on; ``mask_tiles``
#: joins four of these lists, which is about 3x faster than walking the bits of a hand
_CHUNK_TILES = tuple([[7 * q + t for t in _set_bits(m)] for m in range(128)] for q in range(4))
_T0, _T1, _T2, _T3 = _CHUNK_TILES


def mask_tiles(mask: int) -> list[int]:
    """Tile indices set in a 28-bit mask, ascending (a new list)."""
    return _T0[mask & 127] + _T1[mask >> 7 & 127] + _T2[mask >> 14 & 127] + _T3[mask >> 21]


def tiles_mask(tiles) -> int:
    """28-bit mask of an iterable of tile indices."""
    m = 0
    for t in tiles:
        m |= 1 << t
    return m


def _chunk_pip_table(first: int) -> tuple[int, ...]:
    """Total pips per 7-bit mask of the tiles ``first .. first + 6``."""
    return tuple(sum(TILE_PIPS[first + i] for i in range(7) if m >> i & 1) for m in range(1 << 7))


# four small tables rather than two of 2**14 entries: those miss the CPU cache on most reads
_PIPS0, _PIPS1, _PIPS2, _PIPS3 = (_chunk_pip_table(first) for first in (0, 7, 14, 21))


def mask_pips(mask: int) -> int:
    """Total pips on the tiles of a mask."""
    return _PIPS0[mask & 127] + _PIPS1[mask >> 7 & 127] + _PIPS2[mask >> 14 & 127] + _PIPS3[mask >> 21 & 127]


def _chunk_pip_set_table(first: int) -> tuple[int, ...]:
    """7-bit mask of the pips shown, per 7-bit mask of the tiles ``first .. first + 6``."""
    out = []
    for m in range(1 << 7):
        pips = 0
        for i in range(7):
            if m >> i & 1:
                pips |= TILE_PIP_MASK[first + i]
        out.append(pips)
    return tuple(out)


_PIPSET0, _PIPSET1, _PIPSET2, _PIPSET3 = (_chunk_pip_set_table(first) for first in (0, 7, 14, 21))


def mask_pip_set(mask: int) -> int:
    """7-bit mask of the pips shown by the tiles of a mask."""
    return _PIPSET0[mask & 127] | _PIPSET1[mask >> 7 & 127] | _PIPSET2[mask >> 14 & 127] | _PIPSET3[mask >> 21 & 127]


def round_to_five(pips: int) -> int:
    """Round to the nearest multiple of five (``SCORING_MULTIPLE``): remainder 1-2 rounds down, 3-4 rounds up."""
    return (pips + SCORING_MULTIPLE // 2) // SCORING_MULTIPLE * SCORING_MULTIPLE
