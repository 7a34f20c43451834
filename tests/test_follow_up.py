"""Observation version 3: the ``follow_up`` move fact and piece (docs/observation.md, "Version 3").

Worked cases of ``lookahead.follow_up_of`` by hand (a scenario table), the piece in the vector on both
paths (the Python reference and the C accelerator) and the action features that read it. That it
sees no hidden tile is checked beside version 2's vector in tests/test_lookahead.py."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_agents.nets.action_features import N_FEATURES, STATE_SIZE, action_features
from allfives_env import lookahead, observation
from allfives_env.engine.tiles import CLOSED, NUM_ACTIONS, tiles_mask
from allfives_env.observation import OBS_SIZES, OFFSETS, encode_lookahead, piece

from helpers import T
from test_lookahead import VARIANTS, path, views_of_random_games  # noqa: F401 (path: the fixture)

#: the ends west 3 and east 4 (a 3-4 lead): they count 7
ENDS = ([3, 4, CLOSED, CLOSED], [3, 4, 0, 0])


def tiles(*names: str) -> int:
    return tiles_mask(T(n) for n in names)


# (what the case shows, the viewer's tiles, the next seat's model (tiles it may hold, p) or None, follow_up)
FOLLOW_UP_CASES = [
    # 1-3 on the west leaves 1 + 4 = 5: the viewer scores 5 whenever the ends stay
    ("no reply modelled: the viewer's best on the ends as they are", ("1-3",), None, 5.0),
    ("a reply that fits nothing the viewer needs is never made", ("1-3",), (("0-0",), 0.5), 5.0),
    # 4-6 on the east leaves 3 + 6: the 1-3 then counts 1 + 6 = 7, nothing
    ("one reply spoils the count: held half the time", ("1-3",), (("4-6",), 0.5), 0.5 * 5),
    # 4-4 on the east counts 8 there: the 1-3 then counts 1 + 8 = 9, nothing
    ("a double reply counts both halves", ("1-3",), (("4-4",), 0.5), 0.5 * 5),
    # 2-3 (lower tile) comes before 4-6, both score nothing and both spoil: 0.5 + 0.25 of the time
    ("ties go to the lower tile; either spoils", ("1-3",), (("4-6", "2-3"), 0.5), 0.25 * 5),
    # 2-4 scores 5 on the east (3 + 2) and leaves 3, 2: the 1-3 counts 1 + 2, nothing; 3-6 scores 10 on
    # the west (6 + 4) and is played first; after it the viewer's 1-3 no longer fits
    ("the scoring replies come first", ("1-3",), (("2-4", "3-6"), 0.5), 0.25 * 5),
    # the viewer's 2-4 scores on the east (3 + 2 = 5) now; after 4-6 on the east it does not fit; after
    # 1-3 on the west (1 + 4 = 5: 1-3 scores) its 2-4 on the east counts 1 + 2, nothing
    ("the viewer's best is over every tile it keeps", ("2-4", "0-0"), (("1-3", "4-6"), 1.0), 0.0),
    ("a next seat with no tile that fits leaves the ends: the viewer scores", ("1-3", "2-6"), (("5-6",), 1.0), 5.0),
]


@pytest.mark.parametrize("what, keep, model, want", FOLLOW_UP_CASES, ids=[c[0] for c in FOLLOW_UP_CASES])
def test_follow_up_by_hand(what, keep, model, want):
    nxt = None if model is None else lookahead.ReplyModel(1, tiles(*model[0]), model[1])
    assert lookahead.follow_up_of(*ENDS, tiles(*keep), nxt) == pytest.approx(want)


# (what the case shows, the seat's tiles, the next seat's model (tiles it may hold, p) or None, follow_up_net)
FOLLOW_UP_NET_CASES = [
    # 1-3 on the west leaves 1 + 4 = 5
    ("no reply modelled: the seat's best move", ("1-3",), None, 5.0),
    # the next seat has nothing that fits 3, 4; after the seat's 1-3 its 1-6 on the 1 counts 6 + 4 = 10
    ("the reply a move opens counts against it", ("1-3",), (("1-6",), 0.5), 5.0 - 0.5 * 10),
    # 3-6 on the west scores 10 half the time; then the 0-0 fits nothing and the next seat holds
    # nothing more (0); else the 0-0 still fits nothing and the 3-6 stands against the seat (-5)
    ("holding nothing that fits, the reply on the ends as they are counts against it", ("0-0",), (("3-6",), 0.5), 0.5 * -5.0),
    # 4-6 on the east leaves 3, 6: the 1-3 then counts 1 + 6 = 7, nothing, and no reply is left
    ("a reply that spoils the count leaves nothing", ("1-3",), (("4-6",), 1.0), 0.0),
]


@pytest.mark.parametrize("what, keep, model, want", FOLLOW_UP_NET_CASES, ids=[c[0] for c in FOLLOW_UP_NET_CASES])
def test_follow_up_net_by_hand(what, keep, model, want):
    nxt = None if model is None else lookahead.ReplyModel(1, tiles(*model[0]), model[1])
    assert lookahead.follow_up_net_of(*ENDS, tiles(*keep), nxt) == pytest.approx(want)


ENCODER_NAMES = {2: "encode_lookahead", 3: "encode_follow_up", 4: "encode_follow_up_net"}


@pytest.mark.parametrize("version, name", [(3, "follow_up"), (4, "follow_up_net")])
def test_each_version_is_the_one_before_followed_by_its_piece(path, version, name):  # noqa: F811 (the fixture)
    checked = 0
    for options in VARIANTS:
        for _, view in views_of_random_games(options, seed=4):
            vec = getattr(observation, ENCODER_NAMES[version])(view)  # the module's name: what the fixture patches
            assert vec.shape == (OBS_SIZES[version],) and vec.dtype == np.float32
            np.testing.assert_array_equal(vec[: OBS_SIZES[version - 1]], getattr(observation, ENCODER_NAMES[version - 1])(view))
            facts = {f.action: f for f in lookahead.move_facts(view)}
            values = piece(vec, name)
            for a in range(NUM_ACTIONS):
                f = facts.get(a)
                want = 0.0 if f is None or f.out else min(getattr(f, name) / 30, 1.0)
                assert values[a] == pytest.approx(want, abs=1e-6)
            checked += 1
    assert checked > 200


def test_the_follow_up_lies_between_nothing_and_the_best_the_viewer_could_score():
    """``follow_up`` is an expectation of the scores the viewer's kept tiles make: never negative,
    and at most what four ends can count (12 each, a double 6 at every end); 0 for a move that goes out."""
    for options in VARIANTS[:4]:
        for _, view in views_of_random_games(options, seed=6, games=2):
            for f in lookahead.move_facts(view):
                if f.out:
                    assert f.follow_up == 0.0
                    continue
                assert 0.0 <= f.follow_up <= 48.0


@pytest.mark.parametrize("version, name", [(3, "follow_up"), (4, "follow_up_net")])
def test_the_action_features_of_each_version_add_its_piece(version, name):
    import torch

    from allfives_train.network import ActionScorer

    views = [v for _, v in views_of_random_games(dict(num_players=2), seed=9)]
    before = np.stack([getattr(observation, ENCODER_NAMES[version - 1])(v) for v in views])
    vec = np.stack([getattr(observation, ENCODER_NAMES[version])(v) for v in views])
    f_before, f = action_features(before), action_features(vec)
    assert f.shape == (len(views), NUM_ACTIONS, N_FEATURES[version]) and N_FEATURES[version] == N_FEATURES[version - 1] + 1
    np.testing.assert_array_equal(f[..., : N_FEATURES[version - 1]], f_before)
    np.testing.assert_array_equal(f[..., -1], vec[:, OFFSETS[name] : OFFSETS[name] + NUM_ACTIONS])
    assert STATE_SIZE[version] == STATE_SIZE[2] == OFFSETS["reply_threat"]
    scorer = ActionScorer(8, 4, obs_version=version)
    np.testing.assert_array_equal(scorer.action_features(torch.as_tensor(vec)).numpy(), f)
