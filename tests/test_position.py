"""Rebuilding a seat's view from its hand and the public history: identical to the engine's view."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from allfives_env.engine import DRAW, LEAD, PLAY, Game, Rules
from allfives_env.engine.events import HIDDEN, EventError, event_from_dict, event_to_dict, public_event
from allfives_env.engine.position import PositionError, view_from_history
from allfives_env.engine.tiles import TILES
from allfives_env.observation import encode
from helpers import T

FIELDS = ("seat", "hand", "current_player", "legal_actions", "forced_tile", "scores", "tile_counts", "boneyard_size",
          "drawable", "missing_pips", "pips", "values", "double_ends", "spinner", "spinner_covered", "count", "played",
          "lead", "passes", "starter", "hand_index")


def request_of(game: Game, seat: int) -> dict:
    """What a frontend would send: its hand, the public history of this hand, the scores before it."""
    log = game.hand_logs[-1]
    return {
        "hand": [list(TILES[t]) for t in range(28) if game.hands[seat] >> t & 1],
        "history": [event_to_dict(public_event(e, seat)) for e in game.events],
        "scores": list(log.scores_before),
    }


@settings(max_examples=40, deadline=None)
@given(
    options=st.sampled_from([dict(num_players=2), dict(num_players=3, boneyard_reserve=2), dict(num_players=4),
                             dict(num_players=4, partnerships=False, hand_size="five")]),
    seed=st.integers(0, 2**31),
    move_seed=st.integers(0, 2**31),
)
def test_view_from_history_equals_the_engine_view(options, seed, move_seed):
    rules = Rules.make(**options)
    game = Game(rules, seed, max_hands=3)
    rng = random.Random(move_seed)
    while not game.over:
        seat = game.current_player
        req = request_of(game, seat)
        real = game.view(seat)
        rebuilt = view_from_history(rules, seat, req["hand"], req["history"], req["scores"], hand_index=real.hand_index)
        for name in FIELDS:
            assert getattr(rebuilt, name) == getattr(real, name), name
        assert rebuilt.history == real.history and rebuilt.arms == real.arms
        np.testing.assert_array_equal(encode(rebuilt), encode(real))
        game.step(rng.choice(game.legal_actions()))


def test_points_left_out_of_the_history_are_filled_in():
    game, seat, req = base()
    for e in req["history"]:
        e.pop("points", None)
    rebuilt = view_from_history(game.rules, seat, req["hand"], req["history"], req["scores"])
    assert rebuilt.history_dicts() == game.view(seat).history_dicts()


def base():
    game = Game(Rules.make(), 3)
    rng = random.Random(1)
    for _ in range(12):
        game.step(rng.choice(game.legal_actions()))
    seat = game.current_player
    return game, seat, request_of(game, seat)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r, s: r.update(seat=1 - s), "turn, not player"),
        (lambda r, s: r["hand"].append(r["hand"][0]), "appears twice"),
        (lambda r, s: r["hand"].pop(), "the rules deal 9"),
        (lambda r, s: r["hand"].__setitem__(0, [3, 9]), "not a tile"),
        (lambda r, s: r["history"][1].update(points=r["history"][1]["points"] + 5), "wrong points"),
        (lambda r, s: r["history"][0].update(end="east"), "'lead' is the end of the first tile"),
        (lambda r, s: r["history"].__setitem__(1, dict(r["history"][1], tile=r["history"][0]["tile"])), "already on the table"),
        (lambda r, s: r["history"][0].update(colour="red"), "unknown field"),
        (lambda r, s: r["history"].append({"type": "pass", "player": s}), "pass while"),
        (lambda r, s: r.update(scores=[250, 0]), "already reached the target"),
        (lambda r, s: r["history"].append({"type": "dance", "player": s}), "type must be play, draw or pass"),
        (lambda r, s: r["history"][1].update(end=[]), "end must be lead, west, east, north or south"),
        (lambda r, s: r.update(scores=[-10**400, 0]), "each must be within"),
    ],
)
def test_impossible_positions_are_refused_with_the_reason(mutate, message):
    game, seat, req = base()
    req["seat"] = seat
    mutate(req, seat)
    with pytest.raises(PositionError, match=message):
        view_from_history(game.rules, req["seat"], req["hand"], req["history"], req["scores"])


PLAY_00 = {"type": "play", "player": 0, "tile": [0, 0], "end": "lead", "points": 0}


@pytest.mark.parametrize(
    "event, message",
    [
        ([], "ev: expected an object, got list"),
        ({"type": "pass"}, "ev: player must be a seat 0..1, got None"),
        ({"type": "pass", "player": 2}, "ev: player must be a seat 0..1, got 2"),
        ({"player": 0}, "ev: type must be play, draw or pass, got None"),
        ({"type": "pass", "player": 0, "tile": None}, "ev: unknown field(s) tile"),
        ({"type": "draw", "player": 0, "tile": [7, 7]}, "ev: not a tile: [7, 7] (pips must be 0..6)"),
        (dict(PLAY_00, points=True), "ev: points must be an integer, got True"),
        (dict(PLAY_00, end=None), "ev: end must be lead, west, east, north or south, got None"),
        (dict(PLAY_00, colour="red", b=1), "ev: unknown field(s) b, colour"),
        ({"type": "play", "player": 0}, "ev: end must be lead, west, east, north or south, got None"),  # end first
    ],
)
def test_lenient_event_from_dict_names_what_is_wrong(event, message):
    with pytest.raises(EventError) as info:
        event_from_dict(event, 2, strict=False, where="ev")
    assert str(info.value) == message


@pytest.mark.parametrize(
    "event, parsed",
    [
        ({"type": "draw", "player": 1}, (DRAW, 1, HIDDEN)),
        ({"type": "draw", "player": 1, "tile": None}, (DRAW, 1, HIDDEN)),
        ({"type": "draw", "player": 1, "tile": "3-2"}, (DRAW, 1, T("2-3"))),
        ({"type": "play", "player": 0, "tile": T("0-6"), "end": "lead"}, (PLAY, 0, T("0-6"), LEAD, None)),
        (dict(PLAY_00, tile=[6, 0], points=None), (PLAY, 0, T("0-6"), LEAD, None)),
    ],
)
def test_lenient_event_from_dict_takes_hidden_draws_and_missing_points(event, parsed):
    assert event_from_dict(event, 2, strict=False, where="ev") == parsed


def _revealed_draw_position(seed_range=range(200)):
    """A 2-player position where seat 1 drew earlier in the hand and seat 0 is to move: the history
    with seat 1's draws revealed (as a frontend that saw them would send), and the game."""
    for seed in seed_range:
        game = Game(Rules.make(num_players=2), seed)
        rng = random.Random(seed)
        while not game.over and game.hand_index == 0:
            if game.current_player == 0 and any(e[0] == DRAW and e[1] == 1 for e in game.events):
                history = [event_to_dict(e) for e in (public_event(e, 0) if e[1] == 0 else e for e in game.events)]
                return game, history
            game.step(rng.choice(game.legal_actions()))
    raise AssertionError("no position with a draw by seat 1")


def test_another_seats_revealed_draw_must_be_a_possible_tile():
    game, history = _revealed_draw_position()
    hand = [list(TILES[t]) for t in sorted(game.view(0).hand_tiles)]
    scores = list(game.hand_logs[-1].scores_before)
    view_from_history(game.rules, 0, hand, history, scores)  # the true draws are accepted
    i = next(k for k, e in enumerate(history) if e["type"] == "draw" and e["player"] == 1)
    played = next(e["tile"] for e in history[:i] if e["type"] == "play")
    for tile, message in [(hand[0], "which is in player 0's hand"), (played, "which is on the table")]:
        bad = [dict(e) for e in history]
        bad[i]["tile"] = tile
        with pytest.raises(PositionError, match=f"history event {i + 1}: player 1 draws .*{message}"):
            view_from_history(game.rules, 0, hand, bad, scores)
    twice = [dict(e) for e in history]
    twice.insert(i + 1, dict(history[i]))
    with pytest.raises(PositionError, match=f"history event {i + 2}: player 1 draws .*which was drawn before"):
        view_from_history(game.rules, 0, hand, twice, scores)


PUBLIC_FIELDS = tuple(f for f in FIELDS if f not in ("hand", "legal_actions", "forced_tile"))


@settings(max_examples=30, deadline=None)
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**31), moves=st.integers(1, 40))
def test_placement_views_are_the_choosers_views_less_what_is_hidden(players, seed, moves):
    from allfives_env.engine.position import placement_views

    game = Game(Rules.make(num_players=players), seed)
    rng = random.Random(seed)
    before: dict[int, object] = {}
    hand_index = 0
    for _ in range(moves):
        if game.over:
            break
        if game.hand_index != hand_index:
            hand_index, before = game.hand_index, {}
        before[len(game.events)] = game.view(game.current_player)
        game.step(rng.choice(game.legal_actions()))
    if game.over:
        return
    view = game.view(game.current_player)
    found = placement_views(view)
    expected = []
    for i, e in enumerate(view.history):
        drew_first = i > 0 and view.history[i - 1][0] == DRAW and view.history[i - 1][1] == e[1]
        if e[0] == PLAY and e[1] != view.seat and not drew_first:
            expected.append(i)
    assert [i for i, _ in found] == expected
    for i, snapshot in found:
        true = before[i]
        assert snapshot.seat == snapshot.current_player == true.seat == view.history[i][1]
        assert snapshot.hand == 0 and snapshot.legal_actions == []
        for name in PUBLIC_FIELDS:
            if name != "seat":
                assert getattr(snapshot, name) == getattr(true, name), name
