"""``observation.observe_game``: a seat's observation and action mask straight from an engine
``Game``. The C path (``_fastlook.observe_game``, no ``PlayerView``) against the view's encoders,
bit for bit, for every seat of random games of every variant, both observation versions; and
clear errors for bad input."""

import copy
import random
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_env import observation
from allfives_env.engine import Game
from allfives_env.observation import OBS_SIZES

from helpers import A, game_from
from test_lookahead import needs_accelerator
from test_observation import VARIANTS


def assert_same(game, seat):
    for version in (1, 2):
        obs, mask = observation.observe_game_c(game, seat, version)
        want_obs, want_mask = observation.observe_game_python(game, seat, version)
        assert obs.dtype == np.float32 and mask.dtype == np.int8
        assert obs.tobytes() == want_obs.tobytes(), (seat, version, np.flatnonzero(obs != want_obs))
        assert mask.tobytes() == want_mask.tobytes(), (seat, version)


@settings(max_examples=80, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 2**32))
def test_c_gives_the_views_vectors_and_masks_bit_for_bit(variant, seed, moves):
    """Every seat at every step of a whole game (several hands, the end of the game included)."""
    needs_accelerator()
    rng = random.Random(moves)
    game = Game(seed=seed, max_hands=4, **variant)
    while True:
        for seat in range(game.num_players):
            assert_same(game, seat)
        if game.over:
            return
        game.step(rng.choice(game.legal_actions()))


def test_spinner_opening_north_and_south_and_moves_that_go_out():
    """The spinner's second side covered (north and south open), a forced tile, moves that go out."""
    needs_accelerator()
    game = game_from([["5-5", "0-5"], ["1-5", "2-2"], ["0-1", "3-4"], ["6-6", "2-6"]], starter=0, num_players=4)
    game.step(A("5-5", "lead"))
    seen = 0
    while not game.over and game.hand_index == 0:
        for seat in range(4):
            assert_same(game, seat)
            seen += 1
        game.step(game.legal_actions()[0])
    assert seen >= 8


def test_observe_game_is_the_accelerator_where_built():
    assert observation.observe_game is (
        observation.observe_game_c if observation.GAME_ACCELERATED else observation.observe_game_python
    )


def test_observe_game_names_a_bad_seat_or_version():
    game = Game(seed=1, num_players=3)
    for observe in (observation.observe_game_python, *([observation.observe_game_c] * observation.GAME_ACCELERATED)):
        with pytest.raises(ValueError, match="seat must be 0..2"):
            observe(game, 3)
        with pytest.raises(ValueError, match="unknown observation version 7"):
            observe(game, 0, 7)


@pytest.fixture
def fast():
    needs_accelerator()
    from allfives_env import _fastlook

    return _fastlook


def _args(game, seat=None, version=2):
    seat = game.current_player if seat is None else seat
    templates, rel_sides, score_scale, reply_seats = observation._lookahead_template(game.rules)
    out = bytearray(2 * 4 * OBS_SIZES[version])  # two rows
    return [out, bytearray(2 * 112), 1, templates[version], game, seat, rel_sides[seat], score_scale, *reply_seats[seat]]


@pytest.mark.parametrize("version", [2, 3])
def test_the_c_writes_the_row_it_is_given(fast, version):
    game = Game(seed=2, num_players=3)
    args = _args(game, version=version)
    fast.observe_game(*args)
    obs, mask = observation.observe_game_python(game, game.current_player, version)
    size = 4 * OBS_SIZES[version]
    assert bytes(args[0][:size]) == bytes(size)  # row 0 untouched
    assert bytes(args[0][size:]) == obs.tobytes()
    assert bytes(args[1][112:]) == mask.tobytes() and not any(args[1][:112])


def test_the_observer_hands_out_rows_never_written_again():
    """Each call's arrays are its own: later calls (past the end of a block) leave them as they were."""
    game = Game(seed=6, num_players=2)
    observer = observation.GameObserver(game.rules, block=4)
    given = []
    rng = random.Random(6)
    for _ in range(11):
        obs, mask = observer(game, game.current_player)
        given.append((obs, obs.copy(), mask, mask.copy()))
        game.step(rng.choice(game.legal_actions()))
    for obs, obs_then, mask, mask_then in given:
        assert obs.tobytes() == obs_then.tobytes() and mask.tobytes() == mask_then.tobytes()
    assert len({id(obs) for obs, *_ in given}) == len(given)
    import pickle

    again = pickle.loads(pickle.dumps(observer))
    assert (again.rules, again.version, again.block) == (game.rules, observation.OBS_VERSION, 4)


def test_the_c_names_bad_arguments(fast):
    game = Game(seed=2, num_players=3)
    good = _args(game)
    fast.observe_game(*good)
    template = good[3]
    for i, bad, error, message in [
        (0, bytes(len(good[0])), BufferError, "not writable"),
        (1, bytes(224), BufferError, "not writable"),
        (2, 2, ValueError, "row 2 is outside out"),
        (2, -1, ValueError, "row -1 is outside out"),
        (1, bytearray(112), ValueError, "row 1 is outside out"),
        (3, array("f", bytes(8)), ValueError, f"template must hold {OBS_SIZES[1]} float32 values or an observation version's size with the lookahead pieces \\(at most {max(OBS_SIZES.values())}\\)"),
        (4, object(), AttributeError, "no attribute 'hands'"),
        (5, 3, ValueError, "must be seats of the game"),
        (5, "0", TypeError, "seat must be an int"),
        (6, (0, 1), ValueError, "rel_sides must hold one side per seat"),
        (6, (0, 1, 5), ValueError, "rel_sides names a side outside the scores"),
        (7, 0, ValueError, "score_scale must be positive"),
        (8, 9, ValueError, "must be seats of the game"),
    ]:
        broken = list(good)
        broken[i] = bad
        with pytest.raises(error, match=message):
            fast.observe_game(*broken)
    assert template == observation._lookahead_template(game.rules)[0][2]  # read, never written
    with pytest.raises(TypeError, match="takes 10 arguments"):
        fast.observe_game(*good[:9])


@pytest.mark.parametrize(
    "where, attr, bad, error, message",
    [
        ("game", "hands", [1.5, 0, 0], TypeError, "game.hands must be an int, not float"),
        ("game", "hands", [0], ValueError, "game.hands must hold 2..4 seats"),
        ("game", "hands", [1 << 28, 0, 0], ValueError, "game.hands must hold ints in"),
        ("game", "missing", [0, 0], ValueError, "game.missing must hold one mask per seat"),
        ("game", "forced", 28, ValueError, "game.forced must be in -1..27"),
        ("game", "draw_pos", -1, ValueError, "game.draw_pos must be in 0..28"),
        ("game", "boneyard", 5, TypeError, "has no len"),
        ("game", "scores", None, TypeError, "game.scores must be a tuple or list"),
        ("layout", "pips", [0, 0, 0], ValueError, "game.layout.pips must hold 4 arms"),
        ("layout", "pips", [0, 0, 8, 7], ValueError, "game.layout.pips must hold ints in 0..7"),
        ("layout", "spinner", 7, ValueError, "game.layout.spinner must be in -1..6"),
        ("layout", "open_tiles", "x", TypeError, "game.layout.open_tiles must be an int"),
    ],
)
def test_the_c_names_a_corrupt_game_and_writes_nothing(fast, where, attr, bad, error, message):
    game = Game(seed=4, num_players=3)
    game.step(game.legal_actions()[0])
    broken = copy.deepcopy(game)
    setattr(broken if where == "game" else broken.layout, attr, bad)
    args = _args(broken, 0)
    out, mask = args[0], args[1]
    before = (bytes(out), bytes(mask))
    with pytest.raises(error, match=message):
        fast.observe_game(*args)
    assert (bytes(out), bytes(mask)) == before
