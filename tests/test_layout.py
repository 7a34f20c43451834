"""Table-driven tests of the layout: docs/specification.md's worked examples, the spinner, naming the ends."""

import pytest

from allfives_env.engine import Layout
from allfives_env.engine.tiles import CLOSED, EAST, NORTH, SOUTH, WEST, END_INDEX
from helpers import T

# (placements as (tile, end), expected (count, points) after each), docs/specification.md "Worked examples" first
WORKED_EXAMPLES = {
    "spinner led, four arms": (
        [("5-5", "lead"), ("5-2", "west"), ("5-3", "east"), ("5-6", "north"), ("5-4", "south")],
        [(10, 10), (12, 0), (5, 5), (11, 0), (15, 15)],
    ),
    "double at an end, first double is the spinner": (
        [("4-6", "lead"), ("4-4", "west")],
        [(10, 10), (14, 0)],
    ),
    "double on a spinner side": (
        [("5-5", "lead"), ("5-0", "west"), ("0-0", "west"), ("6-5", "east"), ("0-4", "west")],
        [(10, 10), (10, 10), (10, 10), (6, 0), (10, 10)],
    ),
    "spinner 6-6 led": (
        [("6-6", "lead"), ("6-3", "west")],
        [(12, 0), (15, 15)],
    ),
    "non-double lead": (
        [("2-3", "lead"), ("3-0", "east"), ("2-0", "west")],
        [(5, 5), (2, 0), (0, 0)],
    ),
    "spinner not led: on the east arm, opens north and south when covered": (
        [("3-5", "lead"), ("5-5", "east"), ("5-1", "east"), ("5-0", "north"), ("5-6", "south")],
        [(3 + 10, 0), (3 + 1, 0), (3 + 1 + 0, 0), (3 + 1 + 0 + 6, 10)],
    ),
    "only the first double is the spinner": (
        [("2-3", "lead"), ("3-3", "east"), ("2-2", "west"), ("2-6", "west"), ("3-1", "east")],
        [(5, 5), (2 + 6, 0), (4 + 6, 10), (6 + 6, 0), (6 + 1, 0)],
    ),
    "lone spinner side counts its total": (
        [("4-4", "lead"), ("4-1", "east")],
        [(8, 0), (8 + 1, 0)],
    ),
    "double at the end of north": (
        [("5-5", "lead"), ("5-2", "west"), ("5-3", "east"), ("5-0", "north"), ("0-0", "north"), ("0-5", "north")],
        [(10, 10), (12, 0), (5, 5), (5, 5), (5, 5), (10, 10)],
    ),
}


@pytest.mark.parametrize("name", list(WORKED_EXAMPLES))
def test_counts_and_points(name):
    placements, expected = WORKED_EXAMPLES[name]
    if len(expected) < len(placements):  # tables may omit the lead's count when it is not the point
        expected = [None] * (len(placements) - len(expected)) + expected
    layout = Layout()
    for (tile, end), want in zip(placements, expected):
        e = WEST if end == "lead" else END_INDEX[end]
        assert layout.fits(T(tile), e), f"{tile} should fit {end}"
        points = layout.place(T(tile), e)
        if want is not None:
            assert (layout.count, points) == want, f"after {tile} on {end}"


def test_north_south_open_only_after_both_spinner_sides():
    layout = Layout()
    layout.place(T("5-5"), WEST)
    assert layout.pips[NORTH] == CLOSED and layout.pips[SOUTH] == CLOSED
    assert not layout.fits(T("5-6"), NORTH)
    layout.place(T("5-2"), WEST)
    assert not layout.fits(T("5-6"), NORTH) and not layout.fits(T("5-6"), SOUTH)
    assert layout.fits(T("5-6"), EAST)
    layout.place(T("5-3"), EAST)
    assert layout.pips[NORTH] == 5 and layout.pips[SOUTH] == 5
    assert layout.values[NORTH] == 0 and layout.values[SOUTH] == 0, "an empty north/south arm counts nothing"
    assert layout.fits(T("5-6"), NORTH) and layout.fits(T("5-6"), SOUTH)


def test_spinner_on_arm_needs_outer_side_covered():
    layout = Layout()
    layout.place(T("1-6"), WEST)
    layout.place(T("6-6"), EAST)  # spinner, inner side covered by 1-6
    assert layout.spinner == 6 and layout.spinner_covered == 1
    assert layout.pips[NORTH] == CLOSED
    layout.place(T("1-1"), WEST)  # a later double is not a spinner
    assert layout.spinner == 6 and layout.pips[NORTH] == CLOSED
    layout.place(T("6-2"), EAST)
    assert layout.spinner_covered == 2 and layout.pips[NORTH] == 6 and layout.pips[SOUTH] == 6


def test_doubles_at_ends_are_flagged():
    layout = Layout()
    layout.place(T("3-3"), WEST)
    assert layout.end_is_double(WEST) and layout.end_is_double(EAST)
    layout.place(T("3-1"), WEST)
    assert not layout.end_is_double(WEST) and layout.end_is_double(EAST)
    layout.place(T("1-1"), WEST)
    assert layout.end_is_double(WEST)


def test_legal_actions_list_every_matching_end():
    layout = Layout()
    hand = (1 << T("2-3")) | (1 << T("6-6"))
    assert layout.actions_for(hand) == [4 * T("2-3"), 4 * T("6-6")], "any tile may lead, on west"
    layout.place(T("2-3"), WEST)
    assert layout.actions_for(1 << T("2-3")) == [], "a played tile is never offered"
    hand = (1 << T("2-2")) | (1 << T("3-4")) | (1 << T("0-1"))
    assert layout.actions_for(hand) == [4 * T("2-2") + WEST, 4 * T("3-4") + EAST]


def test_the_lookahead_fast_paths_agree_with_placing():
    """``ends_after`` leaves what ``place`` leaves, and ``scoring_replies`` / ``fitting_tiles`` give the
    best positive points per tile and the fitting tiles of trying every placement, in random games."""
    import random

    from allfives_env.engine import Game, Rules
    from allfives_env.engine.layout import fitting_tiles, placements_points, scoring_replies

    rng = random.Random(7)
    checked = 0
    for players in (2, 3, 4):
        for seed in range(12):
            game = Game(Rules.make(num_players=players), seed, max_hands=2)
            while not game.over:
                layout = game.layout
                for action in game.legal_actions():
                    after = layout.copy()
                    after.place(action >> 2, action & 3)
                    assert layout.ends_after(action >> 2, action & 3) == (after.pips, after.values)
                    candidates = rng.getrandbits(28) & ~after.played
                    replies = after.actions_for(candidates)
                    best = {}
                    for a, points in zip(replies, placements_points(after.pips, after.values, False, replies)):
                        best[a >> 2] = max(points, best.get(a >> 2, 0))
                    assert sorted(scoring_replies(after.pips, after.values, False, candidates)) == sorted(v for v in best.values() if v)
                    assert (candidates & fitting_tiles(after.pips)).bit_count() == len(best)
                    checked += 1
                game.step(rng.choice(game.legal_actions()))
    assert checked > 1000
    empty = Layout()
    assert sorted(scoring_replies(empty.pips, empty.values, True, (1 << 28) - 1)) == sorted(
        p for p in (a + b for a in range(7) for b in range(a, 7)) if p and p % 5 == 0
    )
