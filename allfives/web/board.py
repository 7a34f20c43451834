"""The board the web page plays on: the layout alone as SVG, and where its open ends are.

``board(view)`` draws the tiles on the table only (the page shows the scores, the seats and the
hand itself, once each), sized to the layout so it fills the width of a phone, with the last tile
placed outlined and its points beside it (where they cover no tile). A long layout bends into a
snake within a phone's width (``BEND_W``), so its tiles stay large. It also says where each open
end lies in the picture (where the end's next tile would go, past a bend too),
as fractions of its width and height, so the page can put a button there: tap a tile of the hand,
then the end on the board. The tiles' geometry is ``allfives_env.picture``'s (the same layout the
other pictures show); nothing here decides a rule, the ends are the view's open ends.
"""

from __future__ import annotations

from html import escape

from allfives_env.engine.events import PLAY
from allfives_env.engine.tiles import END_NAMES, TILES
from allfives_env.picture import HIGHLIGHT, TILE_EDGE, _svg_shape, domino, layout_geometry
from allfives_env.render import layout_lines

#: pixels per half tile in the SVG's own units (the page scales the picture to its width)
UNIT = 40.0
#: the box the arms bend to stay in, in half tiles: 21 wide, a long layout's board (with a double
#: standing out at an edge, the targets and the margins) stays within about 26 halves, each of 14
#: CSS pixels or more on a phone 390 pixels wide (374 of them the board's); 12 high, the board
#: rarely needs widening to stay within ``TALLEST``
BEND_W, BEND_H = 21.0, 12.0
#: the smallest board, in half tiles (a short layout is not drawn huge)
MIN_W, MIN_H = 12.0, 6.0
#: the board's greatest height for its width: a taller layout is drawn on a wider board, so the
#: page (the board as wide as its column, at most 62% of the window high) shows it whole on a desktop
TALLEST = 0.7
#: room around an end's target in the picture, in half tiles
TARGET_ROOM = 0.6
#: the last tile's points badge, in half tiles, and its gap to the tile
BADGE_W, BADGE_H, BADGE_GAP = 1.5, 0.75, 0.15


def _meets(a, b, margin: float = 0.0) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > -margin and min(a[3], b[3]) - max(a[1], b[1]) > -margin


def _badge_box(piece, pieces, targets) -> tuple[float, float, float, float]:
    """Where the last tile's points badge goes (layout units): beside the tile, above it if that is
    free, else below, right, left or at a corner; clear of every tile and, if it can be, of the ends'
    targets (buttons the page lays over the picture)."""
    x0, y0, x1, y1 = piece.box
    cx, cy, g, w, h = (x0 + x1) / 2, (y0 + y1) / 2, BADGE_GAP, BADGE_W, BADGE_H
    spots = [(cx - w / 2, y0 - g - h), (cx - w / 2, y1 + g), (x1 + g, cy - h / 2), (x0 - g - w, cy - h / 2),
             (x1 + g, y0 - g - h), (x0 - g - w, y0 - g - h), (x1 + g, y1 + g), (x0 - g - w, y1 + g)]
    boxes = [(x, y, x + w, y + h) for x, y in spots]
    tiles = [p.box for p in pieces]
    near = [(tx - 0.9, ty - 0.9, tx + 0.9, ty + 0.9) for tx, ty in targets]
    for avoid in (tiles + near, tiles):
        for box in boxes:
            if not any(_meets(box, b, 0.05) for b in avoid):
                return box
    return boxes[0]


def _last_play(view):
    """The last placement of the hand as ``(player, tile, points)``, or ``None``."""
    for event in reversed(view.history):
        if event[0] == PLAY:
            return event[1], event[2], event[4]
    return None


def board(view, title: str = "the layout") -> dict:
    """``{"svg": ..., "ends": [{"end", "x", "y", "pip"}], "last": {...} or None}`` for ``view``.

    The tiles lie as ``allfives_env.picture.layout_geometry`` lays them in a ``BEND_W`` by
    ``BEND_H`` box (the arms bend into a snake there), so a long layout keeps its tiles large on a
    phone; each open end's target is where its next tile would go."""
    pieces, points = layout_geometry(view, BEND_W, BEND_H)
    last = _last_play(view)
    last_piece = next((p for p in pieces if p.tile == last[1]), None) if last is not None else None
    badge = _badge_box(last_piece, pieces, points.values()) if last_piece is not None and last[2] else None
    boxes = [p.box for p in pieces] + [(x - TARGET_ROOM, y - TARGET_ROOM, x + TARGET_ROOM, y + TARGET_ROOM)
                                         for x, y in points.values()] + ([badge] if badge else [])
    x0, y0 = min(b[0] for b in boxes) - 0.3, min(b[1] for b in boxes) - 0.3
    x1, y1 = max(b[2] for b in boxes) + 0.3, max(b[3] for b in boxes) + 0.3
    if x1 - x0 < MIN_W:
        x0, x1 = (x0 + x1 - MIN_W) / 2, (x0 + x1 + MIN_W) / 2
    if y1 - y0 < MIN_H:
        y0, y1 = (y0 + y1 - MIN_H) / 2, (y0 + y1 + MIN_H) / 2
    if y1 - y0 > TALLEST * (x1 - x0):
        x0, x1 = (x0 + x1) / 2 - (y1 - y0) / TALLEST / 2, (x0 + x1) / 2 + (y1 - y0) / TALLEST / 2
    width, height = (x1 - x0) * UNIT, (y1 - y0) * UNIT
    parts = []
    for p in pieces:
        is_last = p is last_piece
        shapes = domino((p.x - x0) * UNIT, (p.y - y0) * UNIT, UNIT, p.first, p.second, p.vertical,
                        HIGHLIGHT if is_last else TILE_EDGE)
        a, b = TILES[p.tile]
        cls = "piece last" if is_last else "piece"
        parts.append(f'<g class="{cls}" data-tile="{a}-{b}">' + "".join(map(_svg_shape, shapes)) + "</g>")
    last_info = None
    if last is not None:
        seat, tile, scored = last
        if badge is not None:
            bx, by = (badge[0] - x0) * UNIT, (badge[1] - y0) * UNIT
            bw, bh = BADGE_W * UNIT, BADGE_H * UNIT
            parts.append(f'<g class="scored"><rect x="{bx:.1f}" y="{by:.1f}" width="{bw:.0f}" height="{bh:.0f}" rx="8" '
                         f'fill="{HIGHLIGHT}"/><text x="{bx + bw / 2:.1f}" y="{by + bh - 8:.1f}" font-size="22" '
                         f'font-weight="bold" fill="#1b1b1b" text-anchor="middle">+{scored}</text></g>')
        last_info = {"seat": seat, "tile": list(TILES[tile]), "points": scored}
    ends = [{"end": name, "x": round((x - x0) / (x1 - x0), 4), "y": round((y - y0) / (y1 - y0), 4),
             "pip": None if name == "lead" else view.pips[END_NAMES.index(name)]}
            for name, (x, y) in points.items()]
    label = escape("; ".join(layout_lines(view)))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
           f'aria-label="{escape(title)}: {label}" font-family="DejaVu Sans, Arial, sans-serif">'
           + "".join(parts) + "</svg>")
    return {"svg": svg, "ends": ends, "last": last_info, "count": view.count if view.lead >= 0 else 0}
