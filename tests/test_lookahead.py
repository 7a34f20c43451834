"""Observation version 2: the lookahead pieces, their soundness, and the policies that read them."""

import hashlib
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_agents import make_agent
from allfives_agents.nets.action_features import N_FEATURES, STATE_SIZE, action_features
from allfives_agents.search.belief import determinize
from allfives_env import lookahead, observation
from allfives_env.engine import Game, Rules
from allfives_env.engine.layout import placements_points
from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, NUM_ACTIONS, mask_tiles
from allfives_env.observation import LOOKAHEAD_PIECES, OBS_SIZE, OBS_SIZES, OFFSETS, encode, encode_lookahead, encoder, piece

from helpers import A, T, game_from

# CI builds the accelerators (it has a C compiler) and sets this, so their tests cannot be skipped there
REQUIRE_ACCELERATOR = os.environ.get("ALLFIVES_REQUIRE_ACCELERATOR", "") not in ("", "0")


def needs_accelerator():
    if lookahead.ACCELERATED and observation.LOOKAHEAD_ACCELERATED:
        return
    if REQUIRE_ACCELERATOR:
        pytest.fail("the C accelerator (allfives_env/_fastlook.c) was not built; ALLFIVES_REQUIRE_ACCELERATOR is set")
    pytest.skip("the C accelerator was not built (no C compiler, or ALLFIVES_PURE_PYTHON is set)")


@pytest.fixture(params=["python", "c"])
def path(request, monkeypatch):
    """Every caller of the move facts on one path: the Python reference or the C accelerator."""
    if request.param == "python":
        monkeypatch.setattr(lookahead, "facts_of_moves", lookahead.facts_of_moves_python)
        monkeypatch.setattr(observation, "encode_lookahead", observation.encode_lookahead_python)
        monkeypatch.setattr(observation, "encode_follow_up", observation.encode_follow_up_python)
        monkeypatch.setattr(observation, "encode_follow_up_net", observation.encode_follow_up_net_python)
    else:
        needs_accelerator()
        monkeypatch.setattr(lookahead, "facts_of_moves", lookahead.facts_of_moves_c)
        monkeypatch.setattr(observation, "encode_lookahead", observation.encode_lookahead_c)
        monkeypatch.setattr(observation, "encode_follow_up", observation.encode_follow_up_c)
        monkeypatch.setattr(observation, "encode_follow_up_net", observation.encode_follow_up_net_c)
    return request.param


VARIANTS = [
    dict(num_players=2),
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=4, partnerships=False),
    dict(num_players=2, hand_end="winner_takes", boneyard_reserve=2),
]


def views_of_random_games(options, seed, games=2):
    """Every decision's view (of the seat to act) in a few games played by random moves."""
    rng = random.Random(seed)
    for g in range(games):
        game = Game(Rules.make(**options), seed * 10 + g, max_hands=2)
        while not game.over:
            view = game.view(game.current_player)
            yield game, view
            game.step(rng.choice(view.legal_actions))


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_version_2_is_version_1_followed_by_the_lookahead_pieces(options):
    checked = 0
    for game, view in views_of_random_games(options, seed=3):
        vec = encode_lookahead(view)
        assert vec.shape == (OBS_SIZES[2],) and vec.dtype == np.float32
        np.testing.assert_array_equal(vec[:OBS_SIZE], encode(view))
        assert vec[OBS_SIZE:].min() >= 0.0 and vec[OBS_SIZE:].max() <= 1.0
        facts = {f.action: f for f in lookahead.move_facts(view)}
        for p in LOOKAHEAD_PIECES[1:]:
            values = piece(vec, p.name)
            field = {"reply_threat": "threat", "reply_max": "threat_max", "reply_none": "no_reply", "partner_reply": "partner"}.get(p.name, p.name)
            for a in range(NUM_ACTIONS):
                want = min(getattr(facts[a], field) / p.scale, 1.0) if a in facts else 0.0
                assert values[a] == pytest.approx(want, abs=1e-6), (p.name, a)
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("options", VARIANTS[:4], ids=["2p", "3p", "4p", "4p-cutthroat"])
def test_the_belief_never_rules_out_a_tile_a_seat_holds(options):
    """Soundness against the hidden truth: every tile a seat holds is in its ``may_hold``, and the
    actual best reply of the next seat after each move is at most ``reply_max``."""
    for game, view in views_of_random_games(options, seed=5, games=3):
        n = game.num_players
        vec = encode_lookahead(view)
        may = piece(vec, "may_hold").reshape(3, 28)
        for r in range(1, n):
            seat = (view.seat + r) % n
            for t in mask_tiles(game.hands[seat]):
                assert may[r - 1, t] == 1.0
        nxt = (view.seat + 1) % n
        for f in lookahead.move_facts(view):
            if f.out:
                continue
            layout = view.layout_copy()
            layout.place(ACTION_TILE[f.action], ACTION_END[f.action])
            replies = layout.actions_for(game.hands[nxt])
            actual = max(placements_points(layout.pips, layout.values, False, replies), default=0)
            assert actual <= f.threat_max
            if not replies:
                continue
            assert f.no_reply < 1.0


def test_reply_facts_by_hand(path):
    """Seat 0 leads 5-5 (the spinner) and keeps 0-5 and 6-6; seat 1 plays 1-5 on the west side. Seat
    0's only move is 0-5 on the east side, which leaves 1 (west), 0 (east) and the spinner's empty
    north and south arms (5, counting nothing): 1, no points. Seat 1 holds 2 of the 24 tiles seat 0
    has not seen and has shown no missing pip. Its replies that score are 0-4 on the east (1 + 4) and
    4-5 on the north (1 + 4): 5 points at most. 15 unseen tiles fit (those showing 0, 1 or 5)."""
    game = game_from([["5-5", "0-5", "6-6"], ["1-5", "2-2", "3-4"]], starter=0, hand_size=3, boneyard_reserve=22)
    game.step(A("5-5", "lead"))
    game.step(A("1-5", "west"))
    view = game.view(0)
    assert view.legal_actions == [A("0-5", "east")]
    ctx = lookahead.context(view)
    assert ctx.partner_model is None
    assert ctx.next_model.allowed == lookahead.unseen_mask(view) and ctx.next_model.allowed.bit_count() == 24
    assert ctx.next_model.p == pytest.approx(2 / 24)
    (f,) = lookahead.move_facts(view, ctx)
    assert f.action == A("0-5", "east") and f.points == 0
    assert f.threat_max == 5
    assert f.no_reply == pytest.approx((1 - 2 / 24) ** 15)
    p = 2 / 24  # the two 5-point replies come first, then the 4s (1-4 on the west; 0-3, 3-5 on east/north) ...
    assert f.threat > 5 * p and f.threat < 5 * (1 - (1 - p) ** 15)
    assert (f.pips_left, f.variety, f.mobility, f.out, f.double) == (12, 1, 0, False, False)
    vec = observation.encode_lookahead(view)
    a = A("0-5", "east")
    assert piece(vec, "reply_max")[a] == pytest.approx(5 / 30)
    assert piece(vec, "reply_none")[a] == pytest.approx((1 - 2 / 24) ** 15)
    assert piece(vec, "variety")[a] == pytest.approx(1 / 7)
    assert piece(vec, "partner_reply").sum() == 0.0
    may = piece(vec, "may_hold").reshape(3, 28)
    assert may[0].sum() == 24 and may[1:].sum() == 0  # relative seats 2 and 3 do not exist


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), players=st.sampled_from([2, 3, 4]))
def test_versions_2_and_3_see_nothing_hidden(seed, players):
    """A view's vectors (version 2's and version 3's follow-up) are the same in another world that
    differs only in what the seat cannot see."""
    rng = random.Random(seed)
    game = Game(Rules.make(num_players=players), seed, max_hands=1)
    for _ in range(rng.randrange(12)):
        if game.over:
            return
        game.step(rng.choice(game.legal_actions()))
    if game.over:
        return
    view = game.view(game.current_player)
    world = determinize(view, random.Random(seed + 1))
    other = world.view(game.current_player)
    np.testing.assert_array_equal(encode_lookahead(view), encode_lookahead(other))
    np.testing.assert_array_equal(observation.encode_follow_up(view), observation.encode_follow_up(other))


def test_encoder_and_env_option_errors():
    from allfives_env.single_agent import SingleAgentEnv

    assert encoder(1) is encode and encoder(2) is encode_lookahead and encoder(3) is observation.encode_follow_up
    assert encoder(4) is observation.encode_follow_up_net
    for bad in (0, 5, "2", 2.0, True):
        with pytest.raises(ValueError, match="unknown observation version"):
            encoder(bad)
    with pytest.raises(ValueError, match="unknown observation version 5"):
        SingleAgentEnv(obs_version=5)
    for version in (2, 3, 4):
        env = SingleAgentEnv(obs_version=version)
        obs, info = env.reset(seed=4)
        assert obs.shape == env.observation_space.shape == (OBS_SIZES[version],)
        assert env.observation_space.contains(obs)


def test_the_aec_env_on_version_2_passes_the_pettingzoo_api_test():
    from pettingzoo.test import api_test

    import allfives_env

    env = allfives_env.env(num_players=3, obs_version=2, target_score=60)
    api_test(env, num_cycles=200)
    env.reset(seed=2)
    assert env.observation_space("player_0")["observation"].shape == (OBS_SIZES[2],)
    plain = allfives_env.env(num_players=3, obs_version=1, target_score=60)
    plain.reset(seed=2)
    for _ in range(30):
        agent = env.agent_selection
        assert plain.agent_selection == agent
        two, one = env.observe(agent), plain.observe(agent)
        np.testing.assert_array_equal(two["observation"][:OBS_SIZE], one["observation"])
        np.testing.assert_array_equal(two["action_mask"], one["action_mask"])
        if env.terminations[agent] or env.truncations[agent]:
            break
        action = int(np.flatnonzero(one["action_mask"])[0])
        env.step(action)
        plain.step(action)


def test_action_features_of_version_2_read_the_lookahead_pieces():
    _, view = next((g, v) for g, v in views_of_random_games(dict(num_players=2), seed=9) if len(v.legal_actions) > 1)
    v1, v2 = encode(view), encode_lookahead(view)
    f1, f2 = action_features(v1), action_features(v2)
    assert f1.shape == (1, NUM_ACTIONS, N_FEATURES[1]) and f2.shape == (1, NUM_ACTIONS, N_FEATURES[2])
    np.testing.assert_array_equal(f2[..., : N_FEATURES[1]], f1)
    np.testing.assert_array_equal(f2[0, :, N_FEATURES[1]], piece(v2, "reply_threat"))
    assert STATE_SIZE[2] == OFFSETS["reply_threat"] and STATE_SIZE[1] == OBS_SIZE


def test_torch_and_numpy_action_features_agree_on_version_2():
    import torch

    from allfives_train.network import ActionScorer

    obs = np.stack([encode_lookahead(v) for _, v in views_of_random_games(dict(num_players=4), seed=2, games=1)][:200])
    scorer = ActionScorer(8, 4, obs_version=2)
    np.testing.assert_allclose(scorer.action_features(torch.as_tensor(obs)).numpy(), action_features(obs), atol=1e-6)


def test_a_policy_whose_metadata_disagrees_with_its_weights_is_refused(tmp_path):
    from allfives_agents.nets.policy import NumpyPolicy, PolicyFileError
    from test_export import make_model

    path = make_model("scorer_v2", tmp_path / "v2.zip", {"obs_version": 1, "obs_size": OBS_SIZE})
    with pytest.raises(PolicyFileError, match="size 1037 \\(OBS_VERSION 1\\)"):
        NumpyPolicy.load(path)
    good = make_model("scorer_v2", tmp_path / "good.zip")
    policy = NumpyPolicy.load(good)
    assert policy.obs_version == 2 and policy.obs_size == OBS_SIZES[2] and policy.encode is encode_lookahead
    agent = make_agent(f"ppo:{good}")
    game = Game(Rules.make(num_players=2, target_score=60), 1)
    while not game.over:
        view = game.view(game.current_player)
        action = agent.act(view)
        assert action in view.legal_actions
        game.step(action)


#: sha256 of the frozen positions' lookahead bits per variant (``lookahead_digest``), taken from the
#: code before the lookahead's fast paths; a change to a feature or a move fact changes them
FROZEN_DIGESTS = {
    "2p": "aa04f3fa776146ede148929ca3680b1cda09abe606538bf7264114fae182644b",
    "3p": "4d9f8f8ab66c77eea66e3df06ff2889346005f72007c8465b949bd7e3b2a4042",
    "4p": "df06c27b13f9e8f3b50093afaed33f93e8c3e1bca3007670c10c952418ac9999",
    "4p-cutthroat": "99eb7ae0f6839ec8c3c6febb2c6e1024dc13b7c6542d2957f52a99f99f7615c5",
}


def lookahead_digest(options) -> str:
    """Digest of the version-2 vectors (the seat to act's and the next seat's), the move facts and
    expert's choice at every decision of four seeded random-move games."""
    digest = hashlib.sha256()
    expert = make_agent("expert")
    encode_v2 = observation.encode_lookahead
    for game, view in views_of_random_games(options, seed=11, games=4):
        digest.update(encode_v2(view).tobytes())
        digest.update(encode_v2(game.view((view.seat + 1) % game.num_players)).tobytes())
        digest.update(repr([tuple(f)[: V2_FACTS] for f in lookahead.move_facts(view)]).encode())
        digest.update(expert.act(view).to_bytes(1, "little"))
    return digest.hexdigest()


#: the move facts version 2 reads (``follow_up``, after them, came with version 3)
V2_FACTS = lookahead.MoveFacts._fields.index("follow_up")
#: sha256 of the same positions' version-3 pieces and ``follow_up`` facts (``piece_digest``),
#: taken when version 3 came (stop 57)
FROZEN_FOLLOW_UP = {  # the two 4-player variants agree: their next seat is an opponent in both
    "2p": "6f71e4e76b270cd99e442f9cfd086ab96db2ce032d592c8df001f928bf98a9d7",
    "3p": "75073a72d58c05e82a3bbfab45e9dec23a86319787264645b5ef3ea9229e1d5c",
    "4p": "5944072eaa9b9c705ca1d820bbc9f4acc161fefd3a72eaf6767cf4e21d1864c0",
    "4p-cutthroat": "5944072eaa9b9c705ca1d820bbc9f4acc161fefd3a72eaf6767cf4e21d1864c0",
}


def piece_digest(options, version: int, fact: str) -> str:
    """Digest of what ``version`` adds (the seat to act's piece and its ``fact`` in the move facts) at
    every decision of the same four games; the encoder is the module's (what ``path`` patches)."""
    encode = getattr(observation, {3: "encode_follow_up", 4: "encode_follow_up_net"}[version])
    digest = hashlib.sha256()
    for _, view in views_of_random_games(options, seed=11, games=4):
        digest.update(encode(view)[OBS_SIZES[version - 1] :].tobytes())
        digest.update(repr([getattr(f, fact) for f in lookahead.move_facts(view)]).encode())
    return digest.hexdigest()


#: sha256 of the same positions' version-4 piece and ``follow_up_net`` facts (``piece_digest``),
#: taken when version 4 came (stop 58)
FROZEN_FOLLOW_UP_NET = {
    "2p": "2a2164e056afd90a4f8f5283fcc92849b6053c65bb829a50a117f1e810ed8506",
    "3p": "4e5fe89e06f1a73961921cce1fb4ba1e9df79e7758b72b2799e0f0b017bb3fef",
    "4p": "754e702539fffac4c318fe15d17b45053f94cdd0dcea23961f477ce22111a2de",
    "4p-cutthroat": "754e702539fffac4c318fe15d17b45053f94cdd0dcea23961f477ce22111a2de",
}


@pytest.mark.parametrize("variant", FROZEN_DIGESTS)
def test_the_lookahead_features_are_frozen(variant, path):
    options = dict(zip(["2p", "3p", "4p", "4p-cutthroat"], VARIANTS))[variant]
    assert lookahead_digest(options) == FROZEN_DIGESTS[variant]
    assert piece_digest(options, 3, "follow_up") == FROZEN_FOLLOW_UP[variant]
    assert piece_digest(options, 4, "follow_up_net") == FROZEN_FOLLOW_UP_NET[variant]
