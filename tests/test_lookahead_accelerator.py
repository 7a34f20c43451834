"""The C accelerator of the move facts (``allfives_env/_fastlook.c``) against the Python reference:
the same facts and the same version-2 vectors, bit for bit, and clear errors for bad input."""

import random
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_env import lookahead, observation
from allfives_env.engine import Game, Rules
from allfives_env.observation import OBS_SIZES

from helpers import A, game_from
from test_lookahead import needs_accelerator, views_of_random_games

VARIANTS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p": dict(num_players=4),
    "4p-cutthroat": dict(num_players=4, partnerships=False),
}

#: the largest observation vector the accelerator is configured for
LARGEST = max(OBS_SIZES.values())


def assert_same(view):
    """Both paths give equal facts (types, values and their class) and equal vector bits for ``view``."""
    ctx = lookahead.context(view)
    points = view.move_points()
    c = lookahead.facts_of_moves_c(view, ctx, points)
    python = lookahead.facts_of_moves_python(view, ctx, points)
    assert [type(f) for f in c] == [lookahead.MoveFacts] * len(python)
    assert repr(c) == repr(python)  # repr tells True from 1 and writes every float exactly
    assert observation.encode_lookahead_c(view).tobytes() == observation.encode_lookahead_python(view).tobytes()


@pytest.mark.parametrize("variant", VARIANTS)
def test_c_and_python_agree_on_every_seat_of_random_games(variant):
    needs_accelerator()
    checked = 0
    for game, view in views_of_random_games(VARIANTS[variant], seed=21, games=6):
        for seat in range(game.num_players):
            assert_same(view if seat == view.seat else game.view(seat))
        checked += len(view.legal_actions)
    assert checked > 300


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), variant=st.sampled_from(sorted(VARIANTS)), moves=st.integers(0, 40))
def test_c_and_python_agree_on_random_positions(seed, variant, moves):
    needs_accelerator()
    rng = random.Random(seed)
    game = Game(Rules.make(**VARIANTS[variant]), seed, max_hands=3)
    for _ in range(moves):
        if game.over:
            return
        assert_same(game.view(game.current_player))
        game.step(rng.choice(game.legal_actions()))


def test_moves_that_go_out():
    """Seat 0 leads 5-5 and, its turn again, holds one tile: every move of it goes out, and its
    facts are zeros but the points and the double flag."""
    needs_accelerator()
    game = game_from([["5-5", "0-5"], ["1-5", "2-2"], ["0-1", "3-4"], ["6-6", "2-6"]], starter=0, num_players=4)
    game.step(A("5-5", "lead"))
    while game.current_player != 0:
        for seat in range(4):
            assert_same(game.view(seat))
        game.step(game.legal_actions()[0])
    view = game.view(0)
    facts = lookahead.facts_of_moves_c(view, lookahead.context(view), view.move_points())
    assert facts and all(f.out and tuple(f)[3:] == (0.0, 0, 0.0, 0.0, 0, 0, 0, False, 0.0, 0.0) for f in facts)
    assert_same(view)


@pytest.fixture
def fast():
    needs_accelerator()
    from allfives_env import _fastlook

    return _fastlook


@pytest.fixture
def args():
    game = game_from([["5-5", "0-5", "6-6"], ["1-5", "2-2", "3-4"]], starter=0, hand_size=3, boneyard_reserve=22)
    game.step(A("5-5", "lead"))
    view = game.view(1)
    ctx = lookahead.context(view)
    moves = [view.legal_actions, view.move_points(), view.ends_after_moves()]
    return [view.hand, *moves, ctx.next_model, ctx.partner_model]


def test_move_facts_names_bad_input(fast, args):
    assert fast.move_facts(*args) == lookahead.facts_of_moves_python(*_view_of(args))
    one = [args[0], args[1][:1], args[2][:1], args[3][:1], args[4], args[5]]
    for i, bad, error, message in [
        (0, 1.5, TypeError, "hand must be an int, not float"),
        (0, 1 << 28, ValueError, "hand must be a 28-bit tile mask"),
        (1, "abc", TypeError, "legal_actions must be a tuple or list, not str"),
        (1, [200], ValueError, "legal_actions holds an id outside 0..111"),
        (1, ["x"], TypeError, "an item of legal_actions must be an int, not str"),
        (2, [], ValueError, "one entry per legal action"),
        (3, [([7, 7, 7, 7], [0, 0, 0])], ValueError, "the values of ends_after_moves must hold 4 items, not 3"),
        (3, [([9, 7, 7, 7], [0, 0, 0, 0])], ValueError, "the pips of ends_after_moves must hold ints in 0..7, not 9"),
        (3, [([1, 7, 7, 7], [-1, 0, 0, 0])], ValueError, "the values of ends_after_moves must hold ints"),
        (3, [None], TypeError, "an item of ends_after_moves must be a tuple or list"),
        (3, [([1, 7, 7, 7],)], ValueError, r"must be \(pips, values\)"),
        (4, 3, TypeError, "next_model must be None or a ReplyModel, not int"),
        (4, lookahead.ReplyModel(0, -1, 0.5), ValueError, "next_model's allowed must be a 28-bit tile mask"),
        (5, lookahead.ReplyModel(0, 3, 1.5), ValueError, "partner_model's p must be a probability"),
        (5, lookahead.ReplyModel(0, 3, "x"), TypeError, "a model's p must be a number, not str"),
    ]:
        broken = list(one)
        broken[i] = bad
        with pytest.raises(error, match=message):
            fast.move_facts(*broken)
    with pytest.raises(TypeError, match="takes 6 or 7 arguments"):
        fast.move_facts(*args[:5])
    with pytest.raises(TypeError, match="takes 6 or 7 arguments"):
        fast.move_facts(*args, True, True)


def test_move_facts_without_the_follow_up_leave_it_zero_and_the_rest_alike(fast, args):
    """``follow_up=False`` (what ``expert`` asks: it does not read the facts) leaves both follow-ups
    0 and changes nothing else."""
    full, bare = fast.move_facts(*args), fast.move_facts(*args, False)
    assert any(f.follow_up for f in full) and any(f.follow_up_net for f in full)
    assert not any(f.follow_up or f.follow_up_net for f in bare)
    assert [f._replace(follow_up=0.0, follow_up_net=0.0) for f in full] == bare


def _view_of(args):
    """The ``facts_of_moves_python`` arguments that the C arguments ``args`` were read from."""

    class View:
        hand, legal_actions = args[0], args[1]

        def ends_after_moves(self):
            return args[3]

    return View(), lookahead.Context(0, args[4], args[5]), args[2]


def test_fill_names_bad_input(fast, args):
    out = np.zeros(OBS_SIZES[2], np.float32)
    fast.fill(out, [5, 0, 1 << 27], *args)
    assert out.any()
    may = out[observation.OFFSETS["may_hold"] :][:84].reshape(3, 28)
    assert may.sum() == 3 and may[0, 0] == may[0, 2] == may[2, 27] == 1.0
    with pytest.raises(ValueError, match=rf"out must hold {LARGEST} float32 values \(or another observation version's size\)"):
        fast.fill(array("f", bytes(8)), [], *args)
    with pytest.raises(BufferError, match="not writable"):
        fast.fill(bytes(4 * OBS_SIZES[2]), [], *args)
    with pytest.raises(TypeError, match="takes 8 arguments"):
        fast.fill(out, [], *args[:5])
    with pytest.raises(TypeError, match="hand must be an int"):
        fast.fill(out, [], None, *args[1:])
    for bad, error, message in [
        (None, TypeError, "may_hold must be a tuple or list"),
        ([0, 0, 0, 0], ValueError, "may_hold must hold at most 3 masks"),
        ([1.0], TypeError, "an item of may_hold must be an int, not float"),
        ([1 << 28], ValueError, "may_hold must hold 28-bit tile masks"),
    ]:
        with pytest.raises(error, match=message):
            fast.fill(out, bad, *args)


def test_fill_view_makes_the_context_and_names_bad_input(fast):
    """``fill_view`` (the reply models and may-hold masks made in C) writes what ``fill`` writes from
    ``lookahead.context`` and ``allowed_mask``, for every seat of 2, 3 and 4 players; bad input is named."""
    for variant in ("2p", "3p", "4p"):
        for game, view in views_of_random_games(VARIANTS[variant], seed=5, games=2):
            rules, seat = view.rules, view.seat
            ctx = lookahead.context(view)
            points, after = view.move_points(), view.ends_after_moves()
            want = np.zeros(OBS_SIZES[2], np.float32)
            may = [lookahead.allowed_mask(view, (seat + r) % rules.num_players) for r in range(1, rules.num_players)]
            fast.fill(want, may, view.hand, view.legal_actions, points, after, ctx.next_model, ctx.partner_model)
            got = np.zeros(OBS_SIZES[2], np.float32)
            fast.fill_view(got, seat, *lookahead.reply_seats(rules, seat), view.hand, view.played, view.missing_pips,
                           view.tile_counts, view.legal_actions, points, after)
            assert got.tobytes() == want.tobytes()
    game = Game(Rules.make(num_players=3), 3)
    view = game.view(game.current_player)
    assert view.legal_actions
    good = [np.zeros(OBS_SIZES[2], np.float32), view.seat, *lookahead.reply_seats(view.rules, view.seat), view.hand, view.played, view.missing_pips, view.tile_counts,
            view.legal_actions, view.move_points(), view.ends_after_moves()]
    fast.fill_view(*good)
    for i, bad, error, message in [
        (1, 3, ValueError, "seat, next_seat and partner_seat must be seats"),
        (1, -1, ValueError, "seat, next_seat and partner_seat must be seats"),
        (3, -2, ValueError, "seat, next_seat and partner_seat must be seats"),
        (2, "1", TypeError, "next_seat must be an int"),
        (5, 1 << 28, ValueError, "played must be a 28-bit tile mask"),
        (6, (0, 0), ValueError, "missing_pips must hold 3 items"),
        (6, (0, 128, 0), ValueError, "missing_pips must hold ints in 0..127"),
        (7, (7,), ValueError, "tile_counts must hold one count per seat"),
        (7, (7, 7, 7, 7, 7), ValueError, "tile_counts must hold one count per seat"),
        (7, None, TypeError, "tile_counts must be a tuple or list"),
        (9, [], ValueError, "one entry per legal action"),
        (0, bytes(4 * OBS_SIZES[2]), BufferError, "not writable"),
        (0, np.zeros(3, np.float32), ValueError, f"out must hold {LARGEST} float32 values"),
        (0, np.zeros(OBS_SIZES[2] + 1, np.float32), ValueError, f"out must hold {LARGEST} float32 values"),
    ]:
        broken = list(good)
        broken[i] = bad
        with pytest.raises(error, match=message):
            fast.fill_view(*broken)
    with pytest.raises(TypeError, match="takes 11 arguments"):
        fast.fill_view(*good[:10])


def test_configure_checks_the_tables(fast, args):
    """Bad tables are refused by name, and a refused configure changes nothing."""
    good = lookahead.accelerator_tables()
    base = repr(fast.move_facts(*args))
    rows = [list(r) for r in good["scoring_on"]]
    try:
        for tables, error, message in [
            ({k: v for k, v in good.items() if k != "end_count"}, KeyError, "tables lack end_count"),
            ({**good, "move_facts": tuple}, ValueError, "move_facts does not have the fields"),
            ({**good, "move_facts": lookahead.ReplyModel}, ValueError, "move_facts does not have the fields"),
            ({**good, "reply_model": int}, TypeError, "reply_model must be a NamedTuple class"),
            ({**good, "modulus": 0}, ValueError, "modulus in 1..64"),
            ({**good, "modulus": 4}, ValueError, "a row of scoring_on must hold 4 items, not 5"),
            ({**good, "scoring_on": rows[:3]}, ValueError, "scoring_on must hold one row per pip"),
            ({**good, "pip_tiles": good["pip_tiles"][:7]}, ValueError, "pip_tiles must hold 8 items, not 7"),
            ({**good, "action_tile": [99] * 112}, ValueError, "action_tile must hold ints in 0..27, not 99"),
            ({**good, "tile_pips": "x" * 28}, TypeError, "tile_pips must be a tuple or list"),
        ]:
            with pytest.raises(error, match=message):
                fast.configure(tables)
            assert repr(fast.move_facts(*args)) == base
    finally:
        fast.configure(good)


def test_configure_pieces_checks_the_pieces(fast):
    pieces, may_hold = observation._LOOKAHEAD, (observation.OFFSETS["may_hold"], 3)
    sizes = tuple(OBS_SIZES[v] for v in OBS_SIZES if v >= 2)  # what observation configures
    try:
        with pytest.raises(ValueError, match="may-hold masks must lie inside the vector"):
            fast.configure_pieces(pieces, (OBS_SIZES[2] - 28, 2), sizes)
        for bad, error, message in [
            ((pieces[0][:2],), TypeError, r"each piece must be \(offset, scale, field index\)"),
            (((LARGEST - 10, 1.0, 3),), ValueError, "must lie inside the vector"),
            (((0, 0.0, 3),), ValueError, "scale must be positive"),
            (((0, 1.0, 13),), ValueError, "field index must be in 0..12"),
            (((0, "x", 3),), TypeError, "a piece's scale must be a number, not str"),
        ]:
            with pytest.raises(error, match=message):
                fast.configure_pieces(bad, may_hold, sizes)
        for bad_sizes, message in [((), "sizes must hold 1 to 4"), ((OBS_SIZES[3], OBS_SIZES[2]), "sizes must be ascending"),
                                   (OBS_SIZES[2], "sizes must be a tuple or list")]:
            with pytest.raises((ValueError, TypeError), match=message):
                fast.configure_pieces(pieces, may_hold, bad_sizes)
    finally:
        fast.configure_pieces(pieces, may_hold, sizes)


def test_a_version_2_vector_gets_only_its_pieces(fast):
    """The pieces are configured for version 3; a version-2 vector gets those that lie inside it
    (``follow_up`` lies past its end) and is the version-3 vector's start."""
    for game, view in views_of_random_games(VARIANTS["2p"], seed=8, games=2):
        ctx = lookahead.context(view)
        may = [lookahead.allowed_mask(view, (view.seat + 1) % 2)]
        rest = (view.hand, view.legal_actions, view.move_points(), view.ends_after_moves(), ctx.next_model, ctx.partner_model)
        v2 = np.zeros(OBS_SIZES[2], np.float32)
        v3 = np.zeros(OBS_SIZES[3], np.float32)
        fast.fill(v2, may, *rest)
        fast.fill(v3, may, *rest)
        assert v2.tobytes() == v3[: OBS_SIZES[2]].tobytes()


def test_the_accelerator_is_used_where_built():
    if lookahead.ACCELERATED:
        assert lookahead.facts_of_moves is lookahead.facts_of_moves_c
    else:
        assert lookahead.facts_of_moves is lookahead.facts_of_moves_python
    both = observation.ACCELERATED and lookahead.ACCELERATED
    assert observation.LOOKAHEAD_ACCELERATED == both
    want = observation.encode_lookahead_c if both else observation.encode_lookahead_python
    assert observation.encode_lookahead is want and observation.encoder(2) is want
    want = observation.encode_follow_up_c if both else observation.encode_follow_up_python
    assert observation.encode_follow_up is want and observation.encoder(3) is want
    want = observation.encode_follow_up_net_c if both else observation.encode_follow_up_net_python
    assert observation.encode_follow_up_net is want and observation.encoder(4) is want


def test_the_accelerator_takes_its_tables_from_configure(fast, args):
    """With no tile scoring anywhere (``scoring_on`` all empty) every threat, partner and follow-up
    value is 0 and nothing else changes: _fastlook.c keeps no scoring table of its own."""
    good = lookahead.accelerator_tables()
    base = fast.move_facts(*args)
    assert any(f.threat for f in base)
    try:
        fast.configure({**good, "scoring_on": [[0] * good["modulus"]] * len(good["scoring_on"])})
        for f, b in zip(fast.move_facts(*args), base):
            assert (f.threat, f.threat_max, f.partner, f.follow_up) == (0.0, 0, 0.0, 0.0)
            # follow_up_net counts the seat's own points from the modulus, not from scoring_on
            assert f._replace(threat=b.threat, threat_max=b.threat_max, partner=b.partner, follow_up=b.follow_up,
                              follow_up_net=b.follow_up_net) == b
    finally:
        fast.configure(good)
    assert fast.move_facts(*args) == base
