"""The board the web page plays on: the layout alone as SVG, and where its open ends are.

``board(view)`` draws the tiles on the table only (the page shows the scores, the seats and the
hand itself, once each), sized to the layout so it fills the width of a phone, with the last tile
placed outlined and its points beside it. It also says where each open end lies in the picture,
as fractions of its width and height, so the page can put a button there: tap a tile of the hand,
then the end on the board. The tiles' geometry is ``allfives_env.picture``'s (the same layout the
other pictures show); nothing here decides a rule, the ends are the view's open ends.
"""

from __future__ import annotations

from html import escape

from allfives_env.engine.events import PLAY
from allfives_env.engine.tiles import CLOSED, END_NAMES, TILES
from allfives_env.picture import HIGHLIGHT, TILE_EDGE, _line_pieces, _svg_shape, domino
from allfives_env.render import layout_lines

#: pixels per half tile in the SVG's own units (the page scales the picture to its width)
UNIT = 40.0
#: the smallest board, in half tiles (a short layout is not drawn huge)
MIN_W, MIN_H = 12.0, 6.0
#: how far beyond an end its target lies, in half tiles
REACH = 0.75


def _end_points(view, pieces) -> dict[str, tuple[float, float]]:
    """The target point of each open end, in layout units (the lead's centre at 0, 0)."""
    if view.lead < 0:
        return {"lead": (0.0, 0.0)}
    a, b = TILES[view.lead]
    arms = view.arms
    half = 0.5 if a == b else 1.0
    length = [sum(1.0 if TILES[t][0] == TILES[t][1] else 2.0 for t in arm) for arm in arms]
    points = {}
    if view.pips[0] != CLOSED:
        points["west"] = (-(half + length[0]) - REACH, 0.0)
    if view.pips[1] != CLOSED:
        points["east"] = (half + length[1] + REACH, 0.0)
    if view.pips[2] != CLOSED:
        spinner = view.spinner
        x = next((p.x + 0.5 for p in pieces if TILES[p.tile] == (spinner, spinner) and p.vertical and p.y == -1.0), 0.0)
        points["north"] = (x, -(1.0 + length[2]) - REACH)
        points["south"] = (x, 1.0 + length[3] + REACH)
    return points


def _last_play(view):
    """The last placement of the hand as ``(player, tile, points)``, or ``None``."""
    for event in reversed(view.history):
        if event[0] == PLAY:
            return event[1], event[2], event[4]
    return None


def board(view, title: str = "the layout") -> dict:
    """``{"svg": ..., "ends": [{"end", "x", "y", "pip"}], "last": {...} or None}`` for ``view``."""
    pieces = _line_pieces(view) if view.lead >= 0 else []
    points = _end_points(view, pieces)
    xs = [p.x for p in pieces] + [x - 0.6 for x, _ in points.values()]
    ys = [p.y for p in pieces] + [y - 0.6 for _, y in points.values()]
    xe = [p.x + (1.0 if p.vertical else 2.0) for p in pieces] + [x + 0.6 for x, _ in points.values()]
    ye = [p.y + (2.0 if p.vertical else 1.0) for p in pieces] + [y + 0.6 for _, y in points.values()]
    x0, y0, x1, y1 = min(xs) - 0.3, min(ys) - 0.3, max(xe) + 0.3, max(ye) + 0.3
    if x1 - x0 < MIN_W:
        x0, x1 = (x0 + x1 - MIN_W) / 2, (x0 + x1 + MIN_W) / 2
    if y1 - y0 < MIN_H:
        y0, y1 = (y0 + y1 - MIN_H) / 2, (y0 + y1 + MIN_H) / 2
    width, height = (x1 - x0) * UNIT, (y1 - y0) * UNIT
    last = _last_play(view)
    parts = []
    for p in pieces:
        is_last = last is not None and p.tile == last[1]
        shapes = domino((p.x - x0) * UNIT, (p.y - y0) * UNIT, UNIT, p.first, p.second, p.vertical,
                        HIGHLIGHT if is_last else TILE_EDGE)
        a, b = TILES[p.tile]
        cls = "piece last" if is_last else "piece"
        parts.append(f'<g class="{cls}" data-tile="{a}-{b}">' + "".join(map(_svg_shape, shapes)) + "</g>")
    last_info = None
    if last is not None:
        seat, tile, scored = last
        piece = next(p for p in pieces if p.tile == tile)
        cx = (piece.x - x0 + (0.5 if piece.vertical else 1.0)) * UNIT
        cy = max(34.0, (piece.y - y0) * UNIT - 8)
        if scored:
            parts.append(f'<g class="scored"><rect x="{cx - 30:.1f}" y="{cy - 30:.1f}" width="60" height="30" rx="8" '
                         f'fill="{HIGHLIGHT}"/><text x="{cx:.1f}" y="{cy - 8:.1f}" font-size="22" font-weight="bold" '
                         f'fill="#1b1b1b" text-anchor="middle">+{scored}</text></g>')
        last_info = {"seat": seat, "tile": list(TILES[tile]), "points": scored}
    ends = [{"end": name, "x": round((x - x0) / (x1 - x0), 4), "y": round((y - y0) / (y1 - y0), 4),
             "pip": None if name == "lead" else view.pips[END_NAMES.index(name)]}
            for name, (x, y) in points.items()]
    label = escape("; ".join(layout_lines(view)))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
           f'aria-label="{escape(title)}: {label}" font-family="DejaVu Sans, Arial, sans-serif">'
           + "".join(parts) + "</svg>")
    return {"svg": svg, "ends": ends, "last": last_info, "count": view.count if view.lead >= 0 else 0}
