"""The PettingZoo AEC environment: PettingZoo's own API tests, rewards, illegal moves, registration."""

import pickle
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from pettingzoo.test import api_test, render_test, seed_test

from pettingzoo.utils import wrappers

from allfives_env.aec import MAX_EVENTS, IllegalMoveInfo, env, raw_env
from allfives_env.engine import IllegalMoveError

VARIANTS = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4),
    "4p-cut-throat": dict(num_players=4, partnerships=False),
}


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_pettingzoo_api_seed_render_and_pickle(variant):
    opts = VARIANTS[variant]
    api_test(env(**opts), num_cycles=300)
    seed_test(lambda: env(**opts), num_cycles=300)
    render_test(lambda render_mode=None: env(render_mode=render_mode, **opts))
    e = env(**opts)
    e.reset(seed=3)
    for _ in range(5):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    copy = pickle.loads(pickle.dumps(e))
    assert copy.agent_selection == e.agent_selection
    np.testing.assert_array_equal(copy.observe(copy.agent_selection)["observation"], e.observe(e.agent_selection)["observation"])


def play_episode(e, seed, rng):
    """Random masked actions through the agent_iter loop; returns each agent's summed rewards."""
    e.reset(seed=seed)
    totals = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))
    return totals


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_points_rewards_sum_to_final_score_differences(variant):
    e = env(**VARIANTS[variant], target_score=100)
    raw = e.unwrapped
    rng = random.Random(0)
    for seed in range(3):
        totals = play_episode(e, seed, rng)
        scores = raw.game.scores
        side_of = raw.rules.side_of
        k = len(scores)
        for agent, total in totals.items():
            side = side_of[raw._seat[agent]]
            others = (sum(scores) - scores[side]) / (k - 1)
            assert total == pytest.approx(scores[side] - others)
        assert sum(totals.values()) == pytest.approx(0.0)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_win_rewards(variant):
    e = env(**VARIANTS[variant], target_score=60, reward="win")
    raw = e.unwrapped
    totals = play_episode(e, 1, random.Random(1))
    winner = raw.game.winner
    k = raw.rules.num_sides
    for agent, total in totals.items():
        side = raw.rules.side_of[raw._seat[agent]]
        assert total == pytest.approx(1.0 if side == winner else (-1.0 if k == 2 else -1.0 / (k - 1)))


def test_hand_episodes_end_after_one_hand():
    e = env(num_players=2, episode="hand")
    raw = e.unwrapped
    rng = random.Random(2)
    for seed in range(5):
        totals = play_episode(e, seed, rng)
        assert len(raw.game.hand_logs) == 1 and raw.game.hand_logs[0].result is not None
        scores = raw.game.scores
        assert totals["player_0"] == pytest.approx(scores[0] - scores[1])


def test_max_hands_truncates():
    e = env(num_players=2, max_hands=2)
    e.reset(seed=0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            assert trunc and not term
            e.step(None)
            continue
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert len(e.unwrapped.game.hand_logs) == 2


def test_raw_env_raises_the_engine_error_and_changes_nothing():
    e = raw_env(num_players=2)
    e.reset(seed=5)
    agent = e.agent_selection
    before = e.observe(agent)
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    with pytest.raises(IllegalMoveError, match="illegal move for player"):
        e.step(illegal)
    after = e.observe(agent)
    assert e.agent_selection == agent
    np.testing.assert_array_equal(before["observation"], after["observation"])


def test_wrapped_env_ends_the_game_on_an_illegal_move_and_says_why():
    e = env(num_players=3)
    e.reset(seed=5)
    agent = e.agent_selection
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    e.step(illegal)
    assert all(e.terminations.values())
    assert e._cumulative_rewards[agent] == -1
    message = e.infos[agent]["illegal_move"]
    assert message.startswith(f"{agent}: illegal move for player") and "legal moves:" in message
    with pytest.raises(AssertionError):
        e2 = env(num_players=2)
        e2.reset(seed=0)
        e2.step(112)


def standard_env(**opts):
    """The raw env under PettingZoo's own wrappers, in the order ``env()`` uses, without quick paths."""
    e = IllegalMoveInfo(raw_env(**opts), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(e))


def outcome(call):
    """What ``call()`` returns, or the type and message of what it raises."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001  (compared between the two envs)
        return ("raised", type(exc).__name__, str(exc))


def snapshot(e, observe=True):
    def read():
        obs, reward, term, trunc, info = e.last(observe)
        return (
            None if obs is None else (obs["observation"].tolist(), obs["action_mask"].tolist()),
            reward,
            term,
            trunc,
            {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in info.items()},
        )

    return (
        e.agent_selection,
        outcome(read),
        dict(e.rewards),
        dict(e._cumulative_rewards),
        dict(e.terminations),
        dict(e.truncations),
        list(e.agents),
    )


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quick_paths_match_the_standard_wrappers(variant, seed):
    """env() takes shortcuts through PettingZoo's wrappers; every result must equal the plain wrappers'
    with legal ints, numpy ints, illegal ids, out-of-range ids, None, dead steps, skipped observes
    and stepping after the end."""
    opts = dict(VARIANTS[variant], max_hands=2)
    ours, theirs = env(**opts), standard_env(**opts)
    rng = random.Random(seed)

    def step_both(action):
        assert outcome(lambda: ours.step(action)) == outcome(lambda: theirs.step(action))

    endings = set()
    for episode in range(4):
        errors = 0.0 if episode < 2 else 0.04  # the first two play to the end of their hands
        ours.reset(seed=100 * seed + episode)
        theirs.reset(seed=100 * seed + episode)
        while True:
            observe = rng.random() < 0.9
            assert snapshot(ours, observe) == snapshot(theirs, observe)
            if not ours.agents:
                break
            obs = ours.observe(ours.agent_selection)
            theirs.observe(theirs.agent_selection)
            agent = ours.agent_selection
            r = rng.random()
            if ours.terminations[agent] or ours.truncations[agent]:
                action = None
                endings.add("illegal" if "illegal_move" in ours.infos[agent] else "end")
            elif r < errors:
                action = rng.choice([112, -1, None, int(rng.choice(np.flatnonzero(obs["action_mask"] == 0)))])
            elif r < 0.2:
                action = np.int64(rng.choice(np.flatnonzero(obs["action_mask"])))
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            step_both(action)
        step_both(None)  # after the end: both only warn
        assert snapshot(ours, False) == snapshot(theirs, False)
    assert "end" in endings


def test_reading_before_reset_is_a_clear_error():
    e = env()
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        e.agent_selection


def test_infos_report_forced_draws_and_passes():
    e = raw_env(num_players=2)
    e.reset(seed=0)
    rng = random.Random(0)
    seen = set()
    while not any(e.terminations.values()):
        agent = e.agent_selection
        seat = int(agent.split("_")[1])
        info = e.infos[agent]
        assert info["events"].shape == (MAX_EVENTS, 5) and (info["events"][info["num_events"]:] == -1).all()
        for ev in info["events"][: info["num_events"]].tolist():
            seen.add(ev[0])
            if ev[0] == 1 and ev[1] != seat:
                assert ev[2] == -1, "other players' draws are hidden"
            if ev[0] != 0:
                assert ev[3:] == [-1, -1], "only plays have an end and points"
        obs = e.observe(agent)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert {0, 1, 2} <= seen, "plays, draws and passes all appeared in infos"


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(list(VARIANTS)), seed=st.integers(0, 2**31), move_seed=st.integers(0, 2**31))
def test_mask_always_equals_the_engine_legal_moves(variant, seed, move_seed):
    e = raw_env(**VARIANTS[variant], target_score=80)
    e.reset(seed=seed)
    rng = random.Random(move_seed)
    while not any(e.terminations.values()) and not any(e.truncations.values()):
        game = e.game
        for agent in e.agents:
            mask = e.observe(agent)["action_mask"]
            if agent == e.agent_selection:
                assert list(np.flatnonzero(mask)) == game.legal_actions()
            else:
                assert not mask.any()
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))


def test_registered_with_pettingzoo_and_gymnasium():
    import gymnasium
    import pettingzoo

    import allfives_env  # noqa: F401

    e = pettingzoo.make("aec", "allfives/all_fives-v0", num_players=3)
    e.reset(seed=0)
    assert e.metadata["name"] == "all_fives_v0" and len(e.possible_agents) == 3
    from allfives_agents import make_agent

    g = gymnasium.make("AllFives-v0", opponents=make_agent("greedy"))
    obs, info = g.reset(seed=0)
    assert obs.shape == g.observation_space.shape
    assert gymnasium.make("allfives/AllFives-v0").spec.id == "allfives/AllFives-v0"


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="episode must be one of game, hand"):
        raw_env(episode="set")
    with pytest.raises(ValueError, match="reward must be one of points, win"):
        raw_env(reward="money")
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4"):
        raw_env(num_players=6)


def test_quick_paths_only_with_the_pettingzoo_release_they_were_checked_against():
    import tomllib
    from pathlib import Path

    import pettingzoo
    from packaging.requirements import Requirement

    from allfives_env.aec import QUICK_PATHS_CHECKED, _Order, quick_paths_supported

    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    pin = Requirement(next(d for d in pyproject["project"]["dependencies"] if d.startswith("pettingzoo"))).specifier
    releases = {(1, minor) for minor in range(20, 40) if pin.contains(f"1.{minor}.0")}
    assert releases == set(QUICK_PATHS_CHECKED), "pyproject's pin and the releases the quick paths were checked against agree"
    assert pin.contains(pettingzoo.__version__)
    assert quick_paths_supported() and isinstance(env(), _Order)
    assert not quick_paths_supported("1.28.0") and not quick_paths_supported("2.0") and not quick_paths_supported("dev")


def test_other_pettingzoo_releases_get_the_plain_wrappers_and_the_same_game(monkeypatch):
    from pettingzoo.utils import wrappers

    import allfives_env.aec as aec

    quick = aec.env(num_players=3)
    monkeypatch.setattr(aec, "quick_paths_supported", lambda version=None: False)
    plain = aec.env(num_players=3)
    assert type(plain) is wrappers.OrderEnforcingWrapper and type(quick) is not wrappers.OrderEnforcingWrapper
    for e in (quick, plain):
        e.reset(seed=4)
    for agent in quick.agent_iter():
        a, b = quick.last(), plain.last()
        assert agent == plain.agent_selection
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observation"])
        assert a[1:4] == b[1:4]
        action = None if a[2] or a[3] else int(np.flatnonzero(a[0]["action_mask"])[-1])
        quick.step(action)
        plain.step(action)
    assert not plain.agents
