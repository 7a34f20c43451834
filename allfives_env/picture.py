"""One picture of a position, drawn from a seat's ``PlayerView``: as SVG, or as an RGB frame.

``scene(view)`` lays the position out once as a list of shapes (rectangles, circles, lines, text)
in pixels; ``to_svg`` writes those shapes as an SVG document and ``to_rgb`` paints the same shapes
with Pillow into an ``H x W x 3`` uint8 array (the environments' ``render_mode="rgb_array"``, so
``gymnasium.wrappers.RecordVideo`` can film a game). ``Picture(view)`` shows in a notebook.

What is drawn comes from the view and the engine's tables only: the tiles as dominoes with pips,
the lead in the middle of the west-east line, doubles crosswise, the spinner's north and south
arms as they lie (``layout_geometry``: an arm that would outgrow the table turns a corner and runs
back alongside itself, a snake; the web page's board bends the same way within a phone's width),
the open ends and their count, the scores, each seat's tiles left, the boneyard, the viewer's hand
face up, and the last moves in words (``render.event_text``). Conventions: west is left, north is
up (a spinner standing in a bend has north on its left); on an arm each tile shows its inner half
(the one that matches) towards the centre, where it touches the tile before it.
"""

from __future__ import annotations

from html import escape
from typing import NamedTuple

import numpy as np

from allfives_env.engine.events import LEAD, PLAY
from allfives_env.engine.tiles import CLOSED, END_NAMES, IS_DOUBLE, OTHER_HALF, TILES

from .render import event_text

WIDTH, HEIGHT = 960, 640
#: how wide the layout may grow before its arms bend, in halves (``layout_geometry``)
BEND_WIDTH = 36.0
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

    @property
    def box(self) -> tuple[float, float, float, float]:
        """Its extent ``(x0, y0, x1, y1)``: two halves along its length, one across."""
        return self.x, self.y, self.x + (1.0 if self.vertical else 2.0), self.y + (2.0 if self.vertical else 1.0)


#: between the centre lines of two runs of a bent arm, in halves (a double across a run reaches 1)
PITCH = 2.0
#: the least gap between two tiles that do not touch in the line
CLEAR = 0.2
#: how far beyond an open end its target lies (the middle of the next tile's inner half is at 0.5)
REACH = 0.75
#: how far out of the spinner north and south are kept free for their first tiles
KEEP = 4.0
#: the boxes tried when a layout fits nowhere in the one asked for (its runs 2 and 3 times
#: ``PITCH`` apart first), as multiples of it, before the straight cross
_WIDER = (1.25, 1.6)


def _cw(v):
    """``v`` turned a quarter clockwise on the page (y grows downwards)."""
    return (-v[1], v[0])


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1]


class _End(NamedTuple):
    """An arm's open end as its next tile sees it."""

    attach: tuple  #: the middle of the free edge of the end tile
    heading: tuple  #: the way the arm goes on there
    outer: tuple  #: the middle of the end tile's outer half (a double's middle)
    across: float  #: half the end tile's width across ``heading``
    piece: int  #: the end tile's index in the pieces (it may touch the next tile)
    pip: int  #: the pip the end shows
    side: tuple  #: the side this arm steps to when a run ends (a quarter clockwise from its first heading)
    step: tuple | None  #: while stepping: the way it steps (else ``None``: running along ``heading``)
    row: float  #: while stepping: the last run's centre line, measured along ``step``
    back: tuple | None  #: while stepping: the heading of the run to come back on


def _box(start, heading, double: bool):
    """The box ``(x0, y0, x1, y1)`` of a tile laid from ``start`` along ``heading`` (a double crosswise)."""
    length, half = (1.0, 1.0) if double else (2.0, 0.5)
    (sx, sy), (hx, hy) = start, heading
    ex, ey = sx + length * hx, sy + length * hy
    if hx:
        return (min(sx, ex), sy - half, max(sx, ex), sy + half)
    return (sx - half, min(sy, ey), sx + half, max(sy, ey))


class _Layout:
    """Lays tiles one by one, in the order they were placed, along arms that bend to stay within
    ``[-xmax, xmax] x [-ymax, ymax]`` (halves; the lead's middle at 0, 0): an arm runs straight until
    its next tile would leave that box or come near another tile, then steps aside (a quarter turn
    clockwise from its first way: west up, east down, north right, south left) until it is ``pitch``
    from the run it left, and runs back alongside it, a snake. A tile goes where it overlaps
    nothing, ``CLEAR`` from every tile but the one it touches, and away from the room kept for the
    spinner's north and south; of those places, it takes one after which the arm can still go on,
    then one inside the box (a double standing crosswise at the edge counts as inside), then the
    first in the order above. ``ok`` turns false when a tile (or an open end's next tile) fits
    nowhere: the caller then tries the runs further apart, or a wider box."""

    def __init__(self, xmax: float, ymax: float, pitch: float = PITCH) -> None:
        self.xmax, self.ymax, self.pitch = xmax, ymax, pitch
        self.pieces: list[_Piece] = []
        self.boxes: list[tuple] = []
        self.ends: dict[int, _End] = {}
        self.kept: list[tuple[int, tuple]] = []  #: ``(end, box)``: room kept for north and south
        self.ok = True

    def _fits(self, box, skip: int, e: int) -> bool:
        x0, y0, x1, y1 = box[0] - CLEAR, box[1] - CLEAR, box[2] + CLEAR, box[3] + CLEAR

        def meets(b) -> bool:
            return min(x1, b[2]) - max(x0, b[0]) > 1e-9 and min(y1, b[3]) - max(y0, b[1]) > 1e-9

        return not any(i != skip and meets(b) for i, b in enumerate(self.boxes)) and \
            not any(k != e and meets(b) for k, b in self.kept)

    def _beyond(self, box, heading, double: bool) -> float:
        """How far the leading edge of a tile laid along ``heading`` lies outside the box."""
        hx, hy = heading
        if hx:
            out = box[2] - self.xmax if hx > 0 else -self.xmax - box[0]
        else:
            out = box[3] - self.ymax if hy > 0 else -self.ymax - box[1]
        return max(0.0, out - (1.0 if double else 0.0))

    def _options(self, end: _End) -> list[tuple]:
        """The places the next tile of ``end`` may take, in the order preferred: ``(start, heading,
        step, row, back)``, the last three the end's stepping state after it."""
        def turn(way):
            return (end.outer[0] + end.across * way[0], end.outer[1] + end.across * way[1]), way

        if end.step is None:  # running: on, else step aside (the arm's side first)
            run, side = end.heading, end.side
            back = (-run[0], -run[1])
            return [(end.attach, run, None, 0.0, None),
                    (*turn(side), side, _dot(end.outer, side), back),
                    (*turn((-side[0], -side[1])), (-side[0], -side[1]), -_dot(end.outer, side), back)]
        on = (end.attach, end.step, end.step, end.row, end.back)
        back = (*turn(end.back), None, 0.0, None)
        other = (*turn((-end.back[0], -end.back[1])), None, 0.0, None)
        if _dot(end.outer, end.step) - end.row >= self.pitch - 1e-9:  # far enough from the last run
            return [back, on, other]
        return [on, back, other]

    @staticmethod
    def _after(end: _End, start, heading, step, row, back, double: bool, piece: int, pip: int) -> _End:
        length = 1.0 if double else 2.0
        attach = (start[0] + length * heading[0], start[1] + length * heading[1])
        outer = (attach[0] - 0.5 * heading[0], attach[1] - 0.5 * heading[1])
        return end._replace(attach=attach, heading=heading, outer=outer, across=1.0 if double else 0.5,
                            piece=piece, pip=pip, step=step, row=row, back=back)

    def _choose(self, end: _End, double: bool, e: int, look: bool = True):
        """Where the next tile of ``end`` goes: ``(box, end after it)``, or ``None`` if nowhere."""
        best = None
        for k, (start, heading, step, row, back) in enumerate(self._options(end)):
            box = _box(start, heading, double)
            if not self._fits(box, end.piece, e):
                continue
            then = self._after(end, start, heading, step, row, back, double, len(self.boxes), end.pip)
            stuck = look and not all(self._choose(then, d, e, look=False) for d in (False, True))
            rank = (stuck, round(self._beyond(box, heading, double), 6), k)
            if best is None or rank < best[0]:
                best = rank, (box, then)
        return None if best is None else best[1]

    def lead(self, tile: int) -> None:
        a, b = TILES[tile]
        box, half = ((-0.5, -1.0, 0.5, 1.0), 0.5) if a == b else ((-1.0, -0.5, 1.0, 0.5), 1.0)
        self.pieces.append(_Piece(box[0], box[1], a == b, a, b, tile))
        self.boxes.append(box)
        for e, sign, pip in ((0, -1.0, a), (1, 1.0, b)):
            heading = (sign, 0.0)
            outer = (0.0, 0.0) if a == b else (sign * 0.5, 0.0)
            across = 1.0 if a == b else 0.5
            self.ends[e] = _End((sign * half, 0.0), heading, outer, across, 0, pip, _cw(heading), None, 0.0, None)
        if a == b:
            self._spinner(0, (0.0, 0.0), (0.0, 1.0), a)

    def _spinner(self, piece: int, middle, axis, pip: int) -> None:
        """North and south grow out of the spinner's ends along ``axis`` (north the lesser side)."""
        for e, sign in ((2, -1.0), (3, 1.0)):
            heading = (sign * axis[0], sign * axis[1])
            attach = (middle[0] + heading[0], middle[1] + heading[1])
            outer = (middle[0] + 0.5 * heading[0], middle[1] + 0.5 * heading[1])
            self.ends[e] = _End(attach, heading, outer, 0.5, piece, pip, _cw(heading), None, 0.0, None)
            # the arm's first tiles straight out, a double's width wide, are kept for it
            far = (attach[0] + KEEP * heading[0], attach[1] + KEEP * heading[1])
            self.kept.append((e, (min(attach[0], far[0]) - abs(axis[1]), min(attach[1], far[1]) - abs(axis[0]),
                                  max(attach[0], far[0]) + abs(axis[1]), max(attach[1], far[1]) + abs(axis[0]))))

    def place(self, tile: int, e: int, spinner: int) -> None:
        """Lays ``tile`` on end ``e`` (``spinner``: the spinner's pip, or -1)."""
        end = self.ends[e]
        double = IS_DOUBLE[tile]
        chosen = self._choose(end, double, e)
        if chosen is None:  # nowhere: straight on, over what is there (the caller tries wider)
            self.ok = False
            start, heading = end.attach, end.heading
            chosen = _box(start, heading, double), self._after(end, start, heading, end.step, end.row, end.back,
                                                               double, len(self.boxes), end.pip)
        box, then = chosen
        pip = end.pip if double else OTHER_HALF[tile][end.pip]
        forward = then.heading[0] + then.heading[1] > 0  # the inner half (the end's pip) towards the centre
        first, second = (end.pip, pip) if forward else (pip, end.pip)
        self.pieces.append(_Piece(box[0], box[1], box[3] - box[1] > box[2] - box[0], first, second, tile))
        self.boxes.append(box)
        self.ends[e] = then._replace(pip=pip)
        if double and TILES[tile][0] == spinner:
            middle = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            self._spinner(len(self.pieces) - 1, middle, (0.0, 1.0) if then.heading[0] else (1.0, 0.0), pip)

    def target(self, e: int) -> tuple[float, float]:
        """Where the next tile of end ``e`` would go: ``REACH`` into it (``ok`` turns false if nowhere)."""
        end = self.ends[e]
        chosen = self._choose(end, False, e, look=False)
        if chosen is None:
            self.ok = False
            start, heading = end.attach, end.heading
        else:  # a tile (not a double) from where it would start
            heading = chosen[1].heading
            start = (chosen[1].attach[0] - 2.0 * heading[0], chosen[1].attach[1] - 2.0 * heading[1])
        return (start[0] + REACH * heading[0], start[1] + REACH * heading[1])


def _placement_order(view) -> list[tuple[int, int]]:
    """``(tile, end)`` of each tile after the lead, in the order placed (the history's, when it
    agrees with the arms; else arm by arm, west first)."""
    arms = view.arms
    plays = [(e[2], e[3]) for e in view.history if e[0] == PLAY and e[3] != LEAD]
    if all([t for t, end in plays if end == e] == arms[e] for e in range(4)):
        return plays
    return [(t, e) for e in range(4) for t in arms[e]]


def layout_geometry(view, width: float | None = None, height: float | None = None):
    """The layout's tiles and its open ends' targets in layout units (halves; the lead's middle at
    0, 0): ``(pieces, {end name: (x, y)})``. With ``width`` (and ``height``), the arms bend to stay
    within that box, a snake (see ``_Layout``); without, the cross of straight lines. When the
    tiles cannot all fit that way, the runs further apart, then a wider box, then the straight
    cross are tried in turn."""
    if view.lead < 0:
        return [], {"lead": (0.0, 0.0)}
    inf = float("inf")
    tries = [(inf, inf, PITCH)]
    if width is not None:
        h = inf if height is None else height
        tries = [(width, h, PITCH * k) for k in (1, 2, 3)] + [(width * k, h * k, PITCH) for k in _WIDER] + tries
    order = _placement_order(view)
    for w, h, pitch in tries:
        lay = _Layout(w / 2, h / 2, pitch)
        lay.lead(view.lead)
        for tile, e in order:
            lay.place(tile, e, view.spinner)
        ends = {END_NAMES[e]: lay.target(e) for e in range(4) if view.pips[e] != CLOSED}  # may clear ``ok``
        if lay.ok:
            break
    rank = {t: i for i, t in enumerate([view.lead, *(t for arm in view.arms for t in arm)])}
    return sorted(lay.pieces, key=lambda p: rank[p.tile]), ends  # the lead, then arm by arm from the centre out


def _line_pieces(view, width: float | None = None, height: float | None = None) -> list[_Piece]:
    """The tiles of the layout in layout units, the centre of the lead at (0, 0) (``layout_geometry``)."""
    return layout_geometry(view, width, height)[0]


def _fit(pieces: list[_Piece], box: tuple[float, float, float, float], largest: float) -> tuple[float, float, float]:
    """Scale and offset that fit ``pieces`` into ``box`` (x, y, w, h), centred, halves at most ``largest``."""
    boxes = [p.box for p in pieces]
    x0, y0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x1, y1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
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
        # the arms bend within a box of the table's shape, BEND_WIDTH halves wide
        pieces = _line_pieces(view, BEND_WIDTH, max(8.0, BEND_WIDTH * table[3] / table[2]))
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
