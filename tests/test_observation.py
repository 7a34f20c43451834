"""The observation spec: every named piece checked against a hand-built position, for both the
Python encoder and its C accelerator, which must agree value for value; the doc in sync."""

import copy
import os
import random
from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import allfives_env.observation as observation
from allfives_env.engine import Game
from allfives_env.engine.tiles import TILES
from allfives_env.observation import ALL_PIECES, OBS_SIZE, OBS_VERSION, OFFSETS, PIECES, SCALES, action_mask, piece, spec_table
from helpers import A, T, game_from

# CI builds the accelerator (it has a C compiler) and sets this, so its tests cannot be skipped there
REQUIRE_ACCELERATOR = os.environ.get("ALLFIVES_REQUIRE_ACCELERATOR", "") not in ("", "0")


def needs_accelerator():
    if observation.ACCELERATED:
        return
    if REQUIRE_ACCELERATOR:
        pytest.fail("the C accelerator (allfives_env/_fastobs.c) was not built; ALLFIVES_REQUIRE_ACCELERATOR is set")
    pytest.skip("the C accelerator was not built (no C compiler, or ALLFIVES_PURE_PYTHON is set)")


@pytest.fixture(params=["python", "c"])
def encode(request):
    if request.param == "python":
        return observation.encode_python
    needs_accelerator()
    return observation.encode_c

ROOT = Path(__file__).resolve().parents[1]

HANDS = [
    ["5-5", "5-0", "0-4", "3-3", "6-6"],
    ["0-0", "2-2", "4-4", "1-1", "0-6"],
    ["5-2", "2-3", "0-1", "4-6", "3-4"],
    ["5-3", "1-6", "2-6", "0-2", "1-3"],
]


@pytest.fixture
def game():
    g = game_from(HANDS, boneyard=["4-5", "1-2"], starter=0, num_players=4)
    g.step(A("5-5", "lead"))  # 10 for side 0; player 1 has no 5, draws 4-5 and must place it
    assert g.forced == T("4-5")
    g.step(A("4-5", "west"))
    g.step(A("5-2", "east"))  # covers the spinner's second side: north and south open
    g.step(A("5-3", "north"))
    assert g.current_player == 0
    return g


def one_hot(size, *hot, value=1.0):
    v = np.zeros(size, np.float32)
    for h in hot:
        v[h] = value
    return v


def tiles(*names):
    return one_hot(28, *[T(n) for n in names])


def test_every_piece_of_a_hand_built_position(game, encode):
    obs = encode(game.view(0))
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    expect = {
        "hand": tiles("0-5", "0-4", "3-3", "6-6"),
        "played": tiles("5-5", "4-5", "2-5", "3-5"),
        # west shows 4, east 2, north 3, south the spinner's 5
        "arm_pip": np.concatenate([one_hot(7, 4), one_hot(7, 2), one_hot(7, 3), one_hot(7, 5)]),
        "arm_open": np.ones(4, np.float32),
        "arm_double": np.zeros(4, np.float32),
        "arm_value": np.array([4, 2, 3, 0], np.float32) / 12,
        "spinner_pip": one_hot(7, 5),
        "spinner_sides": np.array([1, 1], np.float32),
        "ends_total": np.array([9 / 60], np.float32),
        "lead": np.zeros(1, np.float32),
        "forced": np.zeros(1, np.float32),
        # legal: 0-4 on west scores 0+2+3 = 5; 0-5 on south 9; 3-3 on north 12
        "move_points": one_hot(112, A("0-4", "west"), value=5 / 30),
        "tile_counts": np.array([4, 5, 4, 4], np.float32) / 14,
        "boneyard": np.array([7, 7], np.float32) / 28,
        "missing_pips": np.concatenate([np.zeros(7), one_hot(7, 5), np.zeros(7), np.zeros(7)]).astype(np.float32),
        "scores": np.array([10, 0, 10, 0], np.float32) / 200,
        "target": np.array([200 / 500], np.float32),
        "seats": np.ones(4, np.float32),
        "partner": one_hot(4, 2),
        "num_players": one_hot(3, 2),
        "rules": np.array([0, 0, 5 / 14], np.float32),
        "hand_pips": np.array([(5 + 4 + 6 + 12) / 100], np.float32),
        "unseen_pips": np.array([5, 7, 6, 5, 5, 2, 6], np.float32) / 7,
    }
    assert set(expect) == {p.name for p in PIECES}
    for name, want in expect.items():
        np.testing.assert_allclose(piece(obs, name), want, rtol=1e-6, err_msg=name)
    mask = action_mask(game.view(0))
    assert mask.dtype == np.int8 and set(np.flatnonzero(mask)) == {A("0-4", "west"), A("0-5", "south"), A("3-3", "north")}


def test_observation_is_egocentric(game, encode):
    obs = encode(game.view(1))
    np.testing.assert_allclose(piece(obs, "scores"), np.array([0, 10, 0, 10], np.float32) / 200)
    np.testing.assert_allclose(piece(obs, "missing_pips")[:7], one_hot(7, 5), err_msg="own known-missing pips")
    np.testing.assert_allclose(piece(obs, "tile_counts"), np.array([5, 4, 4, 4], np.float32) / 14)
    np.testing.assert_allclose(piece(obs, "hand"), tiles("0-0", "2-2", "4-4", "1-1", "0-6"))
    assert not piece(obs, "move_points").any() and not action_mask(game.view(1)).any(), "not its turn"


def test_smaller_games_leave_absent_seats_zero(encode):
    g = game_from([["5-5", "0-1"], ["2-3", "1-1"], ["4-4", "0-2"]], num_players=3, hand_end="winner_takes", boneyard_reserve=3)
    obs = encode(g.view(0))
    np.testing.assert_allclose(piece(obs, "seats"), [1, 1, 1, 0])
    np.testing.assert_allclose(piece(obs, "partner"), [0, 0, 0, 0])
    np.testing.assert_allclose(piece(obs, "num_players"), [0, 1, 0])
    np.testing.assert_allclose(piece(obs, "rules"), np.array([1, 3 / 28, 2 / 14], np.float32))
    assert piece(obs, "lead")[0] == 1
    # the lead: 5-5 scores 10
    np.testing.assert_allclose(piece(obs, "move_points")[A("5-5", "lead")], 10 / 30)


def test_encode_writes_into_out_and_stays_in_bounds(game, encode):
    out = np.full(OBS_SIZE, 7.0, np.float32)
    result = encode(game.view(2), out=out)
    assert result is out
    np.testing.assert_array_equal(out, encode(game.view(2)))
    assert out.min() >= -1 and out.max() <= 1


def test_docs_table_is_generated_from_the_spec():
    doc = (ROOT / "docs" / "observation.md").read_text()
    assert spec_table() in doc, "docs/observation.md is out of date: regenerate it from spec_table()"
    assert f"OBS_VERSION = {OBS_VERSION}" in doc
    assert list(OFFSETS) == [p.name for p in ALL_PIECES]


VARIANTS = [
    dict(num_players=2),
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=4, partnerships=False),
    dict(num_players=2, hand_end="winner_takes", target_score=61),
    dict(num_players=3, target_score=50, boneyard_reserve=2),
]


@settings(max_examples=60, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 2**32))
def test_the_accelerator_gives_the_python_vectors_bit_for_bit(variant, seed, moves):
    """Every seat's view at every step of a random game, scores past the target and below zero included."""
    needs_accelerator()
    rng = random.Random(moves)
    game = Game(seed=seed, max_hands=6, **variant)
    while not game.over:
        for seat in range(game.num_players):
            view = game.view(seat)
            assert observation.encode_c(view).tobytes() == observation.encode_python(view).tobytes()
        game.step(rng.choice(game.legal_actions()))


def test_encode_is_the_accelerator_where_built():
    assert observation.encode is (observation.encode_c if observation.ACCELERATED else observation.encode_python)


def test_the_accelerator_names_bad_input(game):
    needs_accelerator()
    from allfives_env import _fastobs

    view = game.view(0)
    template, rel_sides, score_scale = observation._template(view.rules)
    args = (rel_sides[0], score_scale, view.move_points())
    with pytest.raises(ValueError, match="out must hold 281 float32 values"):
        _fastobs.fill(array("f", bytes(8)), view, *args)
    with pytest.raises(BufferError, match="not writable"):
        _fastobs.fill(bytes(4 * OBS_SIZE), view, *args)
    with pytest.raises(AttributeError, match="no attribute .hand."):
        _fastobs.fill(template[:], object(), *args)
    with pytest.raises(ValueError, match="shape of an All Fives view"):
        _fastobs.fill(template[:], view, rel_sides[0], score_scale, [])
    with pytest.raises(TypeError, match="takes 5 arguments"):
        _fastobs.fill(template[:], view)
    with pytest.raises(TypeError, match="score_scale must be a number, not str"):
        _fastobs.fill(template[:], view, rel_sides[0], "target_score", view.move_points())
    with pytest.raises(ValueError, match="score_scale must be positive"):
        _fastobs.fill(template[:], view, rel_sides[0], 0, view.move_points())
    for attr, bad, message in [
        ("hand", 1.5, "view.hand must be an int, not float"),
        ("legal_actions", [A("0-4", "west"), "x", 0], "an item of view.legal_actions must be an int, not str"),
        ("pips", (1, 2, 3), "shape of an All Fives view"),
        ("tile_counts", "abc", "view.tile_counts must be a tuple or list"),
    ]:
        broken = copy.copy(view)
        setattr(broken, attr, bad)
        with pytest.raises((TypeError, ValueError), match=message):
            _fastobs.fill(template[:], broken, *args)


def test_the_accelerator_takes_its_scales_from_configure(game):
    """Doubling a piece's scale in ``configure`` halves exactly that piece in the C output, for every
    piece the C fills with a number scale: _fastobs.c keeps no scale of its own."""
    needs_accelerator()
    from allfives_env import _fastobs

    view = game.view(0)
    base = observation.encode_c(view).copy()
    numbers = [p for p in PIECES if isinstance(p.scale, int)]
    scaled_by_c = set()
    try:
        for p in numbers:
            _fastobs.configure(OFFSETS, {**SCALES, p.name: 2 * p.scale}, OBS_SIZE, TILES)
            obs = observation.encode_c(view)
            inside = np.zeros(OBS_SIZE, bool)
            inside[OFFSETS[p.name] : OFFSETS[p.name] + p.size] = True
            np.testing.assert_array_equal(obs[~inside], base[~inside], err_msg=p.name)
            if (obs != base).any():
                scaled_by_c.add(p.name)
                # exact: a power of two, and no value of this position is clipped
                np.testing.assert_array_equal(piece(obs, p.name), piece(base, p.name) / 2, err_msg=p.name)
    finally:
        _fastobs.configure(OFFSETS, SCALES, OBS_SIZE, TILES)
    np.testing.assert_array_equal(observation.encode_c(view), base)
    # the rest are fixed by the rules: the template holds them, built by Python from the same table
    assert scaled_by_c == {p.name for p in numbers} - {"target"}


def test_configure_checks_the_scales():
    needs_accelerator()
    from allfives_env import _fastobs

    view = Game(seed=3, num_players=3).view(0)
    base = observation.encode_c(view).copy()
    for scales, error, message in [
        ({k: v for k, v in SCALES.items() if k != "hand_pips"}, KeyError, "scales lack piece hand_pips"),
        ({**SCALES, "tile_counts": "tiles_per_hand"}, TypeError, "the scale of tile_counts must be a number, not str"),
        ({**SCALES, "move_points": 0}, ValueError, "the scale of move_points must be positive"),
        ({**SCALES, "move_points": float("nan")}, ValueError, "the scale of move_points must be positive"),
    ]:
        try:
            with pytest.raises(error, match=message):
                _fastobs.configure(OFFSETS, {**scales, "arm_value": 1}, OBS_SIZE, TILES)
            # a configure that fails changes nothing (arm_value's scale above included)
            assert observation.encode_c(view).tobytes() == base.tobytes()
        finally:
            _fastobs.configure(OFFSETS, SCALES, OBS_SIZE, TILES)
