"""One picture of a position, drawn from a seat's ``PlayerView``: as SVG, or as an RGB frame.

``scene(view)`` lays the position out once as a list of shapes (rectangles, circles, lines, text)
in pixels; ``to_svg`` writes those shapes as an SVG document and ``to_rgb`` paints the same shapes
with Pillow into an ``H x W x 3`` uint8 array (the environments' ``render_mode="rgb_array"``, so
``gymnasium.wrappers.RecordVideo`` can film a game). ``Picture(view)`` shows in a notebook.

What is drawn comes from the view and the engine's tables only: the tiles as dominoes with pips,
the lead in the middle of the west-east line, doubles crosswise, the spinner's north and south
arms as they lie, the open ends and their count, the scores, each seat's tiles left, the
boneyard, the viewer's hand face up, and the last moves in words (``render.event_text``).
Conventions: west is left, north is up; on an arm each tile shows its inner half (the one that
matches) towards the centre.
"""

from __future__ import annotations

from html import escape
from typing import NamedTuple

import numpy as np

from allfives_env.engine.tiles import CLOSED, END_NAMES, OTHER_HALF, TILES

from .render import event_text

WIDTH, HEIGHT = 960, 640
BACKGROUND = "#1f6b3a"  # a card table
TILE_FACE, TILE_EDGE, PIP, INK, DIM = "#fbf8ef", "#2b2b2b", "#1b1b1b", "#ffffff", "#c9dccd"
HIGHLIGHT = "#f2c230"

#: pip positions of each value on a unit square, as (x, y) fractions
PIP_SPOTS: dict[int, tuple[tuple[float, float], ...]] = {
    0: (),
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.25, 0.5), (0.25, 0.78), (0.75, 0.22), (0.75, 0.5), (0.75, 0.78)),
}


class Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    radius: float = 0.0


class Circle(NamedTuple):
    cx: float
    cy: float
    r: float
    fill: str


class Line(NamedTuple):
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0


class Text(NamedTuple):
    x: float
    y: float  #: the baseline
    text: str
    size: float
    fill: str = INK
    anchor: str = "start"  #: "start", "middle" or "end"


class Scene(NamedTuple):
    width: int
    height: int
    shapes: list


def domino(x: float, y: float, u: float, first: int, second: int, vertical: bool, edge: str = TILE_EDGE) -> list:
    """A domino with its top-left corner at (x, y): halves of side ``u``, ``first`` left (or top)."""
    w, h = (u, 2 * u) if vertical else (2 * u, u)
    shapes: list = [Rect(x, y, w, h, TILE_FACE, edge, u * 0.12)]
    if vertical:
        shapes.append(Line(x + u * 0.15, y + u, x + u * 0.85, y + u, TILE_EDGE, max(1.0, u / 24)))
        halves = ((x, y, first), (x, y + u, second))
    else:
        shapes.append(Line(x + u, y + u * 0.15, x + u, y + u * 0.85, TILE_EDGE, max(1.0, u / 24)))
        halves = ((x, y, first), (x + u, y, second))
    for hx, hy, value in halves:
        for fx, fy in PIP_SPOTS[value]:
            shapes.append(Circle(hx + fx * u, hy + fy * u, u * 0.09, PIP))
    return shapes


class _Piece(NamedTuple):
    """A tile of the layout in layout units (a half = 1): its box and the halves it shows."""

    x: float
    y: float
    vertical: bool
    first: int
    second: int
    tile: int


def _along(arm: list[int], pip: int, edge: float, direction: int):
    """One arm's tiles along its axis, from ``edge`` (half the centre tile's extent) outwards in
    ``direction`` (-1 or 1): ``(tile, low, double, first, second)`` with ``low`` the tile's smaller
    coordinate on the axis and its halves in axis order, the inner half towards the centre."""
    for t in arm:
        a, b = TILES[t]
        length = 1.0 if a == b else 2.0
        low = edge if direction > 0 else -edge - length
        first = second = a
        if a != b:
            outer = OTHER_HALF[t][pip]
            first, second = (pip, outer) if direction > 0 else (outer, pip)
            pip = outer
        yield t, low, a == b, first, second
        edge += length


def _line_pieces(view) -> list[_Piece]:
    """The tiles of the layout in layout units, the centre of the lead at (0, 0): the west-east line
    horizontal (doubles crosswise), the spinner's north and south arms vertical."""
    lead_a, lead_b = TILES[view.lead]
    arms = view.arms
    if lead_a == lead_b:  # the lead double is the spinner
        pieces = [_Piece(-0.5, -1.0, True, lead_a, lead_a, view.lead)]
        half_width, spinner_x = 0.5, 0.0
    else:
        pieces = [_Piece(-1.0, -0.5, False, lead_a, lead_b, view.lead)]
        half_width, spinner_x = 1.0, None
    for direction, arm, pip in ((-1, arms[0], lead_a), (1, arms[1], lead_b)):
        for t, x, double, first, second in _along(arm, pip, half_width, direction):
            pieces.append(_Piece(x, -1.0 if double else -0.5, double, first, second, t))
            if double and first == view.spinner:
                spinner_x = x + 0.5
    if view.spinner >= 0 and view.pips[2] != CLOSED:
        for direction, arm in ((-1, arms[2]), (1, arms[3])):
            # the spinner lies crosswise: its ends are one unit above and below the line
            for t, y, double, first, second in _along(arm, view.spinner, 1.0, direction):
                pieces.append(_Piece(spinner_x - (1.0 if double else 0.5), y, not double, first, second, t))
    return pieces


def _fit(pieces: list[_Piece], box: tuple[float, float, float, float], largest: float) -> tuple[float, float, float]:
    """Scale and offset that fit ``pieces`` into ``box`` (x, y, w, h), centred, halves at most ``largest``."""
    x0 = min(p.x for p in pieces)
    y0 = min(p.y for p in pieces)
    x1 = max(p.x + (1.0 if p.vertical else 2.0) for p in pieces)
    y1 = max(p.y + (2.0 if p.vertical else 1.0) for p in pieces)
    bx, by, bw, bh = box
    u = min(largest, bw / (x1 - x0), bh / (y1 - y0))
    ox = bx + (bw - u * (x1 - x0)) / 2 - u * x0
    oy = by + (bh - u * (y1 - y0)) / 2 - u * y0
    return u, ox, oy


def side_names(rules) -> list[str]:
    if rules.partnerships:
        return [f"seats {s} & {s + 2}" for s in range(2)]
    return [f"player {s}" for s in range(rules.num_players)]


def scene(view, recent: int = 4, width: int = WIDTH, height: int = HEIGHT) -> Scene:
    """The picture of ``view`` as shapes in pixels (see the module docstring)."""
    rules = view.rules
    n = rules.num_players
    s: list = [Rect(0, 0, width, height, BACKGROUND)]
    to_act = "game over" if view.current_player < 0 else f"player {view.current_player} to move"
    s.append(Text(20, 32, f"All Fives · hand {view.hand_index + 1} · {to_act} · seen by player {view.seat}", 20))
    scores = "   ".join(f"{name}: {score}" for name, score in zip(side_names(rules), view.scores))
    s.append(Text(20, 60, f"scores  {scores}   (target {rules.target_score})", 16, DIM))
    counts = "   ".join(f"player {p}: {view.tile_counts[p]} tile{'s' if view.tile_counts[p] != 1 else ''}" for p in range(n))
    s.append(Text(20, 86, f"{counts}   boneyard: {view.boneyard_size} ({view.drawable} drawable)", 15, DIM))

    table = (20, 100, width - 40, height - 290)
    if view.lead < 0:
        s.append(Text(width / 2, table[1] + table[3] / 2, "the layout is empty: the first tile leads", 18, DIM, "middle"))
    else:
        pieces = _line_pieces(view)
        u, ox, oy = _fit(pieces, table, 44.0)
        last = view.history[-1] if view.history else None
        last_tile = last[2] if last is not None and last[0] == 0 else -1  # PLAY events carry the tile
        for p in pieces:
            s += domino(ox + u * p.x, oy + u * p.y, u, p.first, p.second, p.vertical, HIGHLIGHT if p.tile == last_tile else TILE_EDGE)
    ends = []
    for e in range(4):
        if view.pips[e] != CLOSED:
            ends.append(f"{END_NAMES[e]} {view.pips[e]}" + (f" (counts {view.values[e]})" if view.values[e] != view.pips[e] else ""))
    if ends:
        s.append(Text(20, height - 170, f"open ends: {', '.join(ends)}   total {view.count}", 16))

    hand = view.hand_tiles
    s.append(Text(20, height - 136, f"player {view.seat}'s hand ({len(hand)} tiles, {sum(sum(TILES[t]) for t in hand)} pips)", 15, DIM))
    hu = min(26.0, (width / 2 - 40) / max(1, len(hand)) / 1.25)
    for i, t in enumerate(hand):
        a, b = TILES[t]
        s += domino(20 + i * hu * 1.25, height - 124, hu, a, b, True)
    history = view.history[-recent:]
    x = width / 2 + 20
    s.append(Text(x, height - 136, "last moves", 15, DIM))
    for i, event in enumerate(history):
        s.append(Text(x, height - 112 + 22 * i, event_text(event), 15))
    return Scene(width, height, s)


def _svg_shape(shape) -> str:
    if isinstance(shape, Rect):
        stroke = f' stroke="{shape.stroke}"' if shape.stroke else ""
        rx = f' rx="{shape.radius:.1f}"' if shape.radius else ""
        return f'<rect x="{shape.x:.1f}" y="{shape.y:.1f}" width="{shape.w:.1f}" height="{shape.h:.1f}" fill="{shape.fill}"{stroke}{rx}/>'
    if isinstance(shape, Circle):
        return f'<circle cx="{shape.cx:.1f}" cy="{shape.cy:.1f}" r="{shape.r:.1f}" fill="{shape.fill}"/>'
    if isinstance(shape, Line):
        return f'<line x1="{shape.x1:.1f}" y1="{shape.y1:.1f}" x2="{shape.x2:.1f}" y2="{shape.y2:.1f}" stroke="{shape.stroke}" stroke-width="{shape.width:.1f}"/>'
    return f'<text x="{shape.x:.1f}" y="{shape.y:.1f}" font-size="{shape.size:g}" fill="{shape.fill}" text-anchor="{shape.anchor}">{escape(shape.text)}</text>'


def to_svg(picture: Scene) -> str:
    """The scene as a standalone SVG document."""
    body = "\n".join(_svg_shape(shape) for shape in picture.shapes)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{picture.width}" height="{picture.height}" '
        f'viewBox="0 0 {picture.width} {picture.height}" font-family="DejaVu Sans, Arial, sans-serif">\n{body}\n</svg>\n'
    )


_FONTS: dict[float, object] = {}


def _font(size: float):
    from PIL import ImageFont

    if size not in _FONTS:
        _FONTS[size] = ImageFont.load_default(size=size)
    return _FONTS[size]


def to_rgb(picture: Scene) -> np.ndarray:
    """The scene painted by Pillow: an ``(height, width, 3)`` uint8 array."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (picture.width, picture.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for shape in picture.shapes:
        if isinstance(shape, Rect):
            box = (shape.x, shape.y, shape.x + shape.w, shape.y + shape.h)
            draw.rounded_rectangle(box, radius=shape.radius, fill=shape.fill, outline=shape.stroke)
        elif isinstance(shape, Circle):
            draw.ellipse((shape.cx - shape.r, shape.cy - shape.r, shape.cx + shape.r, shape.cy + shape.r), fill=shape.fill)
        elif isinstance(shape, Line):
            draw.line((shape.x1, shape.y1, shape.x2, shape.y2), fill=shape.stroke, width=max(1, round(shape.width)))
        else:
            anchor = {"start": "ls", "middle": "ms", "end": "rs"}[shape.anchor]
            draw.text((shape.x, shape.y), shape.text, fill=shape.fill, font=_font(shape.size), anchor=anchor)
    return np.asarray(image, dtype=np.uint8)


def tile_svg(first: int, second: int, u: float = 24.0, vertical: bool = True) -> str:
    """One domino alone, as an SVG document (the web page's hand buttons)."""
    w, h = (u, 2 * u) if vertical else (2 * u, u)
    return to_svg(Scene(int(w) + 2, int(h) + 2, domino(1, 1, u, first, second, vertical)))


def svg(view, **kwargs) -> str:
    """``to_svg(scene(view))``."""
    return to_svg(scene(view, **kwargs))


def rgb(view, **kwargs) -> np.ndarray:
    """``to_rgb(scene(view))``: the frame of ``render_mode="rgb_array"``."""
    return to_rgb(scene(view, **kwargs))


class Picture:
    """A view's picture for notebooks (``_repr_svg_``) and files (``save(path)``: .svg or .png)."""

    def __init__(self, view) -> None:
        self.view = view

    def _repr_svg_(self) -> str:
        return svg(self.view)

    def save(self, path) -> None:
        path = str(path)
        if path.endswith(".svg"):
            with open(path, "w", encoding="utf-8") as f:
                f.write(svg(self.view))
        else:
            from PIL import Image

            Image.fromarray(rgb(self.view)).save(path)
