"""The turn rules (engine/turn.py), alone and as every game carries them out."""

import random

import pytest

from allfives_env.engine import DRAW, PASS, PLAY, Game, Layout, Rules
from allfives_env.engine.tiles import ALL_TILES_MASK, tiles_mask
from allfives_env.engine.turn import (
    could_hold,
    is_blocked,
    missing_after_turn,
    next_seat,
    passes_after,
    turn_action,
)
from helpers import T


def mask(*names: str) -> int:
    return tiles_mask(T(n) for n in names)


def pips(*values: int) -> int:
    return sum(1 << p for p in values)


def layout_of(*plays: tuple[str, int]) -> Layout:
    layout = Layout()
    for name, end in plays:
        layout.place(T(name), end)
    return layout


@pytest.mark.parametrize(
    "seat, players, after",
    [(0, 2, 1), (1, 2, 0), (0, 3, 1), (2, 3, 0), (1, 4, 2), (3, 4, 0)],
)
def test_next_seat(seat, players, after):
    assert next_seat(seat, players) == after


SIX_SIX = layout_of(("6-6", 0))  # open: 6 on west and east


@pytest.mark.parametrize(
    "hand, open_tiles, can_draw, action",
    [
        (mask("0-1"), ALL_TILES_MASK, False, PLAY),  # before the lead every tile fits
        (mask("0-1", "5-6"), SIX_SIX.open_tiles, True, PLAY),
        (mask("0-1", "2-3"), SIX_SIX.open_tiles, True, DRAW),
        (mask("0-1", "2-3"), SIX_SIX.open_tiles, False, PASS),
        (mask("0-1", "2-3", "1-6"), SIX_SIX.open_tiles, True, PLAY),  # a drawn tile that fits is forced
        (mask("0-1", "2-3", "1-6"), SIX_SIX.open_tiles, False, PLAY),  # the last drawable tile too
        (0, SIX_SIX.open_tiles, True, DRAW),
    ],
)
def test_turn_action(hand, open_tiles, can_draw, action):
    assert turn_action(hand, open_tiles, can_draw) == action


@pytest.mark.parametrize(
    "missing, open_pips, drew_unplayable, after",
    [
        (0, pips(6), False, pips(6)),  # passed, or drew a tile that fits at once
        (pips(3), pips(6), False, pips(3, 6)),  # earlier knowledge stands
        (pips(3), pips(6), True, pips(6)),  # a drawn tile it kept may show a 3
        (pips(3), pips(1, 6), True, pips(1, 6)),
    ],
)
def test_missing_after_turn(missing, open_pips, drew_unplayable, after):
    assert missing_after_turn(missing, open_pips, drew_unplayable) == after


@pytest.mark.parametrize(
    "tile, missing, possible",
    [("2-3", 0, True), ("2-3", pips(3), False), ("2-3", pips(2, 4), False), ("4-4", pips(0, 1, 5, 6), True)],
)
def test_could_hold(tile, missing, possible):
    assert could_hold(T(tile), missing) is possible


@pytest.mark.parametrize(
    "kind, passes, after",
    [(PLAY, 0, 0), (PLAY, 3, 0), (PASS, 0, 1), (PASS, 2, 3), (DRAW, 2, 2)],
)
def test_passes_after(kind, passes, after):
    assert passes_after(kind, passes) == after


@pytest.mark.parametrize("passes, players, blocked", [(1, 2, False), (2, 2, True), (3, 4, False), (4, 4, True)])
def test_is_blocked(passes, players, blocked):
    assert is_blocked(passes, players) is blocked


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 2},
        {"num_players": 3, "boneyard_reserve": 2},
        {"num_players": 4},
        {"num_players": 4, "partnerships": False, "hand_size": "five"},
        {"num_players": 2, "hand_size": 13, "boneyard_reserve": 2},  # nothing to draw: passes and blocks
    ],
)
def test_every_game_event_follows_the_turn_rules(options):
    """Replay each hand with all hands known: every event is what ``turn`` says the seat must do."""
    rules = Rules.make(**options)
    for seed in range(15):
        game = Game(rules, seed, max_hands=6)
        rng = random.Random(seed)
        while not game.over:
            game.step(rng.choice(game.legal_actions()))
        missing = [check_hand(rules, log) for log in game.hand_logs]
        assert missing[-1] == game.missing, "the known-missing pips of the hand being played"


def check_hand(rules: Rules, log) -> list[int]:
    """Check one hand's events; return the pips each seat is known to lack at its end."""
    n = rules.num_players
    hands = [tiles_mask(h) for h in log.deal]
    layout = Layout()
    drawn, drawable = 0, len(log.boneyard) - rules.boneyard_reserve
    passes, to_act, missing = 0, log.starter, [0] * n
    drew_unplayable = False
    for e in log.events:
        kind, p = e[0], e[1]
        assert p == to_act
        assert kind == turn_action(hands[p], layout.open_tiles, drawn < drawable)
        if kind == PLAY:
            hands[p] ^= 1 << e[2]
            layout.place(e[2], 0 if layout.num_tiles == 0 else e[3])
            drew_unplayable = False
            to_act = next_seat(p, n)
        elif kind == DRAW:
            hands[p] |= 1 << e[2]
            drawn += 1
            if turn_action(hands[p], layout.open_tiles, drawn < drawable) == PLAY:
                missing[p] = missing_after_turn(missing[p], layout.open_pips_mask(), drew_unplayable)
            drew_unplayable = True
        else:
            missing[p] = missing_after_turn(missing[p], layout.open_pips_mask(), drew_unplayable)
            drew_unplayable = False
            to_act = next_seat(p, n)
        passes = passes_after(kind, passes)
    if log.result["outcome"] == "blocked":
        assert is_blocked(passes, n)
    else:
        assert not is_blocked(passes, n)
    return missing
