"""The board the web page draws (allfives/web/board.py) and the layout geometry it shares with the
pictures (allfives_env.picture.layout_geometry), on long layouts of real games: the arms bend within
the board's box so a phone shows the tiles large, no two tiles overlap, the halves that touch match,
every open end's target lies outside every tile next to the tile ending its arm, the points badge
covers no tile, and the board stays within a phone's width and a desktop's height for its width."""

import math
import re

import pytest

from allfives.web.board import BADGE_H, BADGE_W, BEND_H, BEND_W, TALLEST, UNIT, board
from allfives_agents import make_agent
from allfives_env.engine import PLAY, Game, Rules
from allfives_env.engine.tiles import CLOSED, END_NAMES, TILES, mask_tiles
from allfives_env.picture import BEND_WIDTH, TILE_FACE, Rect, _line_pieces, layout_geometry, scene

#: the board's width on a phone 390 CSS pixels wide (the page's margins, 8 px a side, left out)
PHONE_BOARD = 390 - 16
VARIANTS = [dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False)]


def positions(options: dict, seed: int, hands: int = 2):
    """Seat 0's view after every tile placed, in a seeded game of greedy (seat 0) against random."""
    rules = Rules.make(**options)
    agents = [make_agent("greedy" if seat == 0 else "random", seed=seed + seat) for seat in range(rules.num_players)]
    game = Game(rules, seed, max_hands=hands)
    while not game.over:
        seat = game.current_player
        game.step(agents[seat].act(game.view(seat)))
        view = game.view(0)
        if view.lead >= 0 and view.history and view.history[-1][0] == PLAY:  # the layout grew
            yield view


def tiles_on_table(view) -> int:
    return bin(view.played).count("1")


def box(p) -> tuple[float, float, float, float]:
    return p.x, p.y, p.x + (1.0 if p.vertical else 2.0), p.y + (2.0 if p.vertical else 1.0)


def overlap(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 1e-6 and min(a[3], b[3]) - max(a[1], b[1]) > 1e-6


def distance(point, b) -> float:
    """From a point to a box (0 inside it)."""
    dx = max(b[0] - point[0], 0.0, point[0] - b[2])
    dy = max(b[1] - point[1], 0.0, point[1] - b[3])
    return math.hypot(dx, dy)


def halves(p):
    """The two unit squares of a piece with the pip each shows."""
    if p.vertical:
        return [((p.x, p.y, p.x + 1, p.y + 1), p.first), ((p.x, p.y + 1, p.x + 1, p.y + 2), p.second)]
    return [((p.x, p.y, p.x + 1, p.y + 1), p.first), ((p.x + 1, p.y, p.x + 2, p.y + 1), p.second)]


def touching(a, b) -> bool:
    """Two squares sharing a side (a length of it, not a corner)."""
    x = min(a[2], b[2]) - max(a[0], b[0])
    y = min(a[3], b[3]) - max(a[1], b[1])
    return (abs(x) < 1e-6 and y > 1e-6) or (abs(y) < 1e-6 and x > 1e-6)


def end_tiles(view) -> dict[str, int]:
    """The tile ending each open arm: its last tile, else the tile it grows from (the lead, the spinner)."""
    arms = view.arms
    spinner = TILES.index((view.spinner, view.spinner)) if view.spinner >= 0 else -1
    out = {}
    for e in range(4):
        if view.pips[e] != CLOSED:
            out[END_NAMES[e]] = arms[e][-1] if arms[e] else (view.lead if e < 2 else spinner)
    return out


def drawn(svg: str):
    """The board's tiles (``data-tile``, box in half tiles), its size in half tiles and the badge's box."""
    width, height = (float(v) / UNIT for v in re.search(r'viewBox="0 0 (\S+) (\S+)"', svg).groups())
    tiles = []
    rects = r'data-tile="(\d-\d)"><rect x="(\S+)" y="(\S+)" width="(\S+)" height="(\S+)"'
    for name, x, y, w, h in re.findall(rects, svg):
        x, y, w, h = (float(v) / UNIT for v in (x, y, w, h))
        tiles.append((name, (x, y, x + w, y + h)))
    badge = re.search(r'class="scored"><rect x="(\S+)" y="(\S+)" width="(\S+)" height="(\S+)"', svg)
    if badge:
        x, y, w, h = (float(v) / UNIT for v in badge.groups())
        badge = (x, y, x + w, y + h)
    return tiles, width, height, badge


LONG = 20  # tiles on the table: a long layout


@pytest.mark.parametrize("options", VARIANTS, ids=["2p", "3p", "4p", "4p-free-for-all"])
def test_long_layouts_bend_their_tiles_apart_and_their_targets_at_the_true_ends(options):
    long_seen = bent = 0
    for seed in range(10):
        for view in positions(options, seed):
            pieces, targets = layout_geometry(view, BEND_W, BEND_H)
            assert sorted(p.tile for p in pieces) == sorted(mask_tiles(view.played))
            boxes = [box(p) for p in pieces]
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert not overlap(a, b), (a, b, view.arms)
            # each open end's target: outside every tile, next to the half of its end tile that shows its pip
            by_tile = {p.tile: p for p in pieces}
            ends = end_tiles(view)
            assert set(targets) == set(ends)
            for name, point in targets.items():
                assert all(distance(point, b) >= 0.5 for b in boxes), (name, point, view.arms)
                end = by_tile[ends[name]]
                assert distance(point, box(end)) <= 0.8, (name, point, box(end))
                near = min(halves(end), key=lambda h: distance(point, h[0]))
                assert near[1] == view.pips[END_NAMES.index(name)], (name, point, end)
            if tiles_on_table(view) >= LONG:
                long_seen += 1
                # bent: a tile of the west or east arm off the line through the lead
                bent += any(abs(box(by_tile[t])[1] + box(by_tile[t])[3]) > 1e-6 for t in view.arms[0] + view.arms[1])
    assert long_seen > 0, "the games reach long layouts"
    assert bent > 0, "and some of them bend"


@pytest.mark.parametrize("options", VARIANTS, ids=["2p", "3p", "4p", "4p-free-for-all"])
def test_the_halves_that_touch_along_each_arm_match(options):
    """Along every arm, bent or not, each tile touches the one before it (the lead, the spinner) with
    its inner half, and the two halves there show the same pip."""
    for seed in range(6):
        for view in positions(options, seed):
            pieces = layout_geometry(view, BEND_W, BEND_H)[0]
            by_tile = {p.tile: p for p in pieces}
            spinner = TILES.index((view.spinner, view.spinner)) if view.spinner >= 0 else -1
            for e, arm in enumerate(view.arms):
                before = view.lead if e < 2 else spinner
                for t in arm:
                    pairs = [(ha, hb) for ha in halves(by_tile[t]) for hb in halves(by_tile[before])
                             if touching(ha[0], hb[0])]
                    assert pairs, (TILES[t], TILES[before], view.arms)
                    assert any(ha[1] == hb[1] for ha, hb in pairs), (TILES[t], TILES[before], pairs)
                    before = t


def test_the_board_fits_a_phone_and_a_desktop_and_its_badge_covers_no_tile():
    """The page's board: each half tile at least 14 CSS pixels on a 390-pixel phone once 20 tiles
    or more are on the table (the old straight line gave 5), at most ``TALLEST`` as high as wide,
    every tile drawn once with no two overlapping, each end's target outside every tile and the
    last tile's points badge over none."""
    long_seen = badges = 0
    for options in VARIANTS:
        for seed in range(8):
            for view in positions(options, seed):
                drawing = board(view)
                tiles, width, height, badge = drawn(drawing["svg"])
                on_table = [TILES[t] for t in mask_tiles(view.played)]
                assert sorted(name for name, _ in tiles) == sorted(f"{a}-{b}" for a, b in on_table)
                assert height <= TALLEST * width + 1 / UNIT  # (the SVG's size in whole pixels)
                if tiles_on_table(view) >= LONG:
                    long_seen += 1
                    assert PHONE_BOARD / width >= 14.0, (width, view.arms)
                for i, (_, a) in enumerate(tiles):
                    for _, b in tiles[i + 1:]:
                        assert not overlap(a, b)
                for end in drawing["ends"]:
                    assert 0 <= end["x"] <= 1 and 0 <= end["y"] <= 1
                    point = (end["x"] * width, end["y"] * height)
                    assert all(distance(point, b) > 0.4 for _, b in tiles), (end, view.arms)
                if drawing["last"] and drawing["last"]["points"]:
                    badges += 1
                    assert badge is not None and badge[2] - badge[0] == pytest.approx(BADGE_W, abs=0.01)
                    assert badge[3] - badge[1] == pytest.approx(BADGE_H, abs=0.01)
                    assert 0 <= badge[0] and badge[2] <= width and 0 <= badge[1] and badge[3] <= height
                    assert not any(overlap(badge, b) for _, b in tiles), (badge, view.arms)
                else:
                    assert badge is None
    assert long_seen > 20 and badges > 20


def test_a_layout_that_fits_the_box_is_the_straight_cross():
    """Bending changes nothing until a layout outgrows the box: the straight cross (``_line_pieces``
    without a box, the pictures' layout before the bend) is drawn as it was."""
    fits = 0
    for options in VARIANTS[:3]:
        for seed in range(4):
            for view in positions(options, seed, hands=1):
                straight = _line_pieces(view)
                if all(abs(c) <= BEND_W / 2 for b in map(box, straight) for c in b[::2]) and \
                        all(abs(c) <= BEND_H / 2 for b in map(box, straight) for c in b[1::2]):
                    fits += 1
                    assert sorted(_line_pieces(view, BEND_W, BEND_H)) == sorted(straight)
    assert fits > 10


def test_the_picture_bends_a_long_layout_within_its_table():
    """``scene`` (replay --html, rgb_array) bends a long layout too: its tiles lie within the table,
    apart, larger than a straight line of them would be."""
    checked = 0
    for options in VARIANTS[:2]:
        for seed in range(3):
            for view in positions(options, seed, hands=1):
                if tiles_on_table(view) < LONG:
                    continue
                picture = scene(view)
                faces = [s for s in picture.shapes if isinstance(s, Rect) and s.fill == TILE_FACE]
                table = [s for s in faces if s.y < picture.height - 170]  # the hand is drawn below the table
                assert len(table) == tiles_on_table(view)
                boxes = [(s.x, s.y, s.x + s.w, s.y + s.h) for s in table]
                assert all(20 - 1e-6 <= b[0] and b[2] <= picture.width - 20 + 1e-6 for b in boxes)
                for i, a in enumerate(boxes):
                    for b in boxes[i + 1:]:
                        assert not overlap(a, b)
                straight = list(map(box, _line_pieces(view)))
                width = max(b[2] for b in straight) - min(b[0] for b in straight)
                height = max(b[3] for b in straight) - min(b[1] for b in straight)
                half = min(min(s.w, s.h) for s in table)
                assert half >= min(44.0, (picture.width - 40) / width, (picture.height - 290) / height) - 1e-6
                checked += width > BEND_WIDTH  # a straight line too long for the table's box
    assert checked > 0
