"""The layout on the table: arms, open ends, the spinner, and the count of the ends.

This is where docs/specification.md's "Doubles and the spinner", "Naming the ends" and "Scoring during the hand"
live. ``Layout`` knows nothing of hands, turns or scores; the game and anything that rebuilds a
position from public history (a frontend, a server) use it the same way.

Per arm we keep the pip it shows (``CLOSED`` when the arm does not exist) and what its end counts
(a double at the end counts both halves; an empty north or south arm counts nothing).
"""

from __future__ import annotations

from .tiles import CLOSED, END_NAMES, IS_DOUBLE, NORTH, OTHER_HALF, PIP_TILES, SCORING_MULTIPLE, SOUTH, TILE_PIPS, TILES, WEST, mask_tiles

_FITS = tuple(tuple(p in t for p in range(CLOSED + 1)) for t in TILES)
#: ``_END_COUNT[t][p]``: what the end counts once tile ``t`` is matched against pip ``p`` (a double
#: both halves, else the half left exposed; ``CLOSED`` where ``t`` does not show ``p``)
_END_COUNT = tuple(tuple(p + p if a == b and p == a else OTHER_HALF[i][p] for p in range(CLOSED + 1)) for i, (a, b) in enumerate(TILES))
#: ``_SCORING_ON[p][r]``: mask of the tiles that, matched against an end showing ``p`` while the
#: other ends count ``r`` modulo ``SCORING_MULTIPLE``, make the total a multiple of it
_SCORING_ON = tuple(
    tuple(
        sum(1 << t for t in range(len(TILES)) if _FITS[t][p] and (r + _END_COUNT[t][p]) % SCORING_MULTIPLE == 0)
        for r in range(SCORING_MULTIPLE)
    )
    for p in range(CLOSED)
)
#: mask of the tiles whose lead scores (their pips a positive multiple of ``SCORING_MULTIPLE``)
_SCORING_LEADS = sum(1 << t for t, pips in enumerate(TILE_PIPS) if pips and pips % SCORING_MULTIPLE == 0)


class Layout:
    """Mutable layout of one hand. ``place`` assumes a legal placement (see ``fits``)."""

    __slots__ = (
        "pips",
        "values",
        "spinner",
        "spinner_sides",
        "spinner_covered",
        "num_tiles",
        "played",
        "open_tiles",
        "count",
        "arms",
        "lead",
        "double_ends",
    )

    def __init__(self) -> None:
        self.pips = [CLOSED, CLOSED, CLOSED, CLOSED]
        self.values = [0, 0, 0, 0]
        #: pip of the spinner, or -1 before the first double
        self.spinner = -1
        #: bit ``e`` set while the end of arm ``e`` is an uncovered side of the spinner
        self.spinner_sides = 0
        #: number of the spinner's two sides covered (2 opens north and south)
        self.spinner_covered = 0
        self.num_tiles = 0
        #: mask of the tiles on the table
        self.played = 0
        #: mask of the tiles that fit some open end (all tiles before the lead)
        self.open_tiles = (1 << 28) - 1
        #: current total of the open ends (0 before the lead)
        self.count = 0
        #: tiles on each arm, from the centre outwards (the lead itself is ``lead``)
        self.arms: list[list[int]] = [[], [], [], []]
        self.lead = -1
        #: bit ``e`` set while the tile at the end of arm ``e`` is a double (the spinner included)
        self.double_ends = 0

    def copy(self) -> "Layout":
        """An independent copy (for search)."""
        c = Layout.__new__(Layout)
        c.pips = self.pips[:]
        c.values = self.values[:]
        c.spinner = self.spinner
        c.spinner_sides = self.spinner_sides
        c.spinner_covered = self.spinner_covered
        c.num_tiles = self.num_tiles
        c.played = self.played
        c.open_tiles = self.open_tiles
        c.count = self.count
        c.arms = [a[:] for a in self.arms]
        c.lead = self.lead
        c.double_ends = self.double_ends
        return c

    def fits(self, tile: int, end: int) -> bool:
        """Whether ``tile`` can be placed on ``end`` now (the lead must use ``west``)."""
        if self.num_tiles == 0:
            return end == WEST
        return _FITS[tile][self.pips[end]]

    def actions_for(self, candidates: int) -> list[int]:
        """Action ids placing any tile of the mask ``candidates`` on an end it fits, ascending."""
        out = []
        if self.num_tiles == 0:
            while candidates:
                low = candidates & -candidates
                out.append((low.bit_length() - 1) << 2)
                candidates ^= low
            return out
        p0, p1, p2, p3 = self.pips
        candidates &= self.open_tiles
        while candidates:
            low = candidates & -candidates
            t = low.bit_length() - 1
            candidates ^= low
            f = _FITS[t]
            base = t << 2
            if f[p0]:
                out.append(base)
            if f[p1]:
                out.append(base + 1)
            if f[p2]:
                out.append(base + 2)
            if f[p3]:
                out.append(base + 3)
        return out

    def ends_after(self, tile: int, end: int) -> tuple[list[int], list[int]]:
        """The arms' ``pips`` and ``values`` that placing ``tile`` on ``end`` (assumed legal) would
        leave, without placing it: what ``place`` writes there, for a lookahead that needs no copy."""
        if self.num_tiles == 0:
            a, b = TILES[tile]
            return [a, b, CLOSED, CLOSED], ([a + a, a + a, 0, 0] if a == b else [a, b, 0, 0])
        pips = self.pips[:]
        values = self.values[:]
        if self.spinner_sides >> end & 1 and self.spinner_covered == 1:
            pips[NORTH] = pips[SOUTH] = self.spinner
        p = pips[end]
        if IS_DOUBLE[tile]:
            values[end] = p + p
        else:
            pips[end] = values[end] = OTHER_HALF[tile][p]
        return pips, values

    def place(self, tile: int, end: int) -> int:
        """Place a tile (assumed legal) and return the points it scores (0 if none)."""
        pips = self.pips
        values = self.values
        self.num_tiles += 1
        self.played |= 1 << tile
        if self.num_tiles == 1:
            self.lead = tile
            a, b = TILES[tile]
            pips[0] = a
            pips[1] = b
            if a == b:
                self.spinner = a
                self.spinner_sides = 0b11
                self.double_ends = 0b11
                values[0] = values[1] = a + a
            else:
                values[0] = a
                values[1] = b
            count = a + b
        else:
            self.arms[end].append(tile)
            side_bit = 1 << end
            if self.spinner_sides & side_bit:
                self.spinner_sides ^= side_bit
                self.spinner_covered += 1
                if self.spinner_covered == 2:
                    pips[NORTH] = pips[SOUTH] = self.spinner
            if IS_DOUBLE[tile]:
                p = pips[end]
                values[end] = p + p
                self.double_ends |= side_bit
                if self.spinner < 0:
                    self.spinner = p
                    self.spinner_sides = side_bit
                    self.spinner_covered = 1
            else:
                self.double_ends &= ~side_bit
                q = OTHER_HALF[tile][pips[end]]
                pips[end] = q
                values[end] = q
            count = values[0] + values[1] + values[2] + values[3]
        self.count = count
        self.open_tiles = (PIP_TILES[pips[0]] | PIP_TILES[pips[1]] | PIP_TILES[pips[2]] | PIP_TILES[pips[3]]) & ~self.played
        return count if count % SCORING_MULTIPLE == 0 else 0

    def points_if(self, tile: int, end: int) -> int:
        """Points that placing ``tile`` on ``end`` would score now (assumed legal); the layout is unchanged."""
        return placement_points(self.pips, self.values, self.num_tiles == 0, tile, end)

    def open_pips_mask(self) -> int:
        """7-bit mask of the pips shown by the open ends (0 before the lead)."""
        m = 0
        for p in self.pips:
            if p != CLOSED:
                m |= 1 << p
        return m

    def open_ends(self) -> list[tuple[str, int, int]]:
        """``(end name, pip shown, what it counts)`` for every arm that exists, west first."""
        if self.num_tiles == 0:
            return []
        return [(END_NAMES[e], self.pips[e], self.values[e]) for e in range(4) if self.pips[e] != CLOSED]

    def end_is_double(self, end: int) -> bool:
        """Whether the tile at the end of arm ``end`` is a double (the spinner included)."""
        return bool(self.double_ends >> end & 1)


def placement_points(pips, values, empty: bool, tile: int, end: int) -> int:
    """Points of a legal placement, from an arm's pips and values (``empty``: nothing placed yet).

    Only the arm placed on changes what it counts: a spinner side being covered, or north and
    south opening, never changes the total by itself (they count nothing while empty).
    """
    if empty:
        count = TILE_PIPS[tile]
    else:
        p = pips[end]
        count = values[0] + values[1] + values[2] + values[3] - values[end] + (p + p if IS_DOUBLE[tile] else OTHER_HALF[tile][p])
    return count if count % SCORING_MULTIPLE == 0 else 0


def fitting_tiles(pips) -> int:
    """Mask of the tiles that fit some end of a started layout showing ``pips`` (``CLOSED`` fits none)."""
    return PIP_TILES[pips[0]] | PIP_TILES[pips[1]] | PIP_TILES[pips[2]] | PIP_TILES[pips[3]]


def scoring_replies(pips, values, empty: bool, candidates: int) -> list[int]:
    """For the tiles of ``candidates`` (none on the table) that would score on some end, the most
    each would score, one entry per tile in no particular order.

    The positive ``placements_points`` of every placement of ``candidates``, best per tile, without
    trying every placement: per open end only the tiles that make the total a multiple of 5 are read.
    """
    if empty:
        return [TILE_PIPS[t] for t in mask_tiles(candidates & _SCORING_LEADS)]
    total = values[0] + values[1] + values[2] + values[3]
    best: dict[int, int] = {}
    for p, v in zip(pips, values):
        if p == CLOSED:
            continue
        rest = total - v
        scoring = candidates & _SCORING_ON[p][rest % SCORING_MULTIPLE]
        while scoring:
            low = scoring & -scoring
            t = low.bit_length() - 1
            scoring ^= low
            points = rest + _END_COUNT[t][p]
            if points > best.get(t, 0):
                best[t] = points
    return list(best.values())


def tile_replies(pips, values, candidates: int) -> list[tuple[int, int, int]]:
    """``(tile, end, points)`` for each tile of ``candidates`` that fits an end of a started layout
    showing ``pips`` (what each counts: ``values``): placed on the first end where it scores the
    most it can (0 where it scores nothing); the most scoring first, ties to the lower tile."""
    placements = [4 * t + e for t in mask_tiles(candidates & fitting_tiles(pips))
                  for e in range(4) if pips[e] != CLOSED and _FITS[t][pips[e]]]
    best: dict[int, tuple[int, int]] = {}  # tile -> (end, points), in tile order
    for a, points in zip(placements, placements_points(pips, values, False, placements)):
        if a >> 2 not in best or points > best[a >> 2][1]:
            best[a >> 2] = (a & 3, points)
    out = [(t, end, points) for t, (end, points) in best.items()]
    out.sort(key=lambda r: -r[2])  # stable: ties keep the lower tile first
    return out


def end_after_reply(pips, values, tile: int, end: int) -> tuple[list[int], list[int]]:
    """The ends ``pips``, ``values`` once ``tile`` is placed on ``end`` (it fits), only that end
    changing: a double counts both halves and shows the same pip, another tile its other half.
    A lookahead's approximation of ``Layout.ends_after``: a spinner's north and south stay as they were."""
    pips, values = list(pips), list(values)
    values[end] = _END_COUNT[tile][pips[end]]
    if not IS_DOUBLE[tile]:
        pips[end] = values[end]
    return pips, values


def reply_tables() -> dict:
    """The tables ``scoring_replies`` reads on a started layout, for an accelerator that computes the
    same replies (``allfives_env/_fastlook.c``): ``scoring_on[p][r]``, ``end_count[t][p]``, the
    ``modulus`` that ``r`` is taken by (the other ends' count modulo it) and the ``closed`` pip."""
    return {"scoring_on": _SCORING_ON, "end_count": _END_COUNT, "modulus": SCORING_MULTIPLE, "closed": CLOSED}


def placements_points(pips, values, empty: bool, actions) -> list[int]:
    """``placement_points`` of every action in ``actions`` (one call for a whole legal list)."""
    if empty:
        out = []
        for a in actions:
            count = TILE_PIPS[a >> 2]
            out.append(count if count % SCORING_MULTIPLE == 0 else 0)
        return out
    total = values[0] + values[1] + values[2] + values[3]
    out = []
    for a in actions:
        t = a >> 2
        e = a & 3
        p = pips[e]
        count = total - values[e] + (p + p if IS_DOUBLE[t] else OTHER_HALF[t][p])
        out.append(count if count % SCORING_MULTIPLE == 0 else 0)
    return out
