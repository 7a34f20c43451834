"""The registered gymnasium env in the RL stacks users bring: check_env, vector envs, fixed info schema."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import allfives_env  # registers the ids
from allfives_env.aec import EVENT_FIELDS, MAX_EVENTS, env, raw_env
from allfives_env.engine.tiles import NUM_ACTIONS, NUM_TILES
from allfives_env.registration import GYM_VARIANTS, HAND_EPISODE_STEPS

IDS = list(GYM_VARIANTS)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("env_id", IDS)
def test_registered_ids_pass_gymnasium_and_sb3_check_env(env_id, capsys):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    check_env(gymnasium.make(env_id).unwrapped)
    sb3_check_env(gymnasium.make(env_id).unwrapped)
    namespaced = gymnasium.make(f"allfives/{env_id}")
    assert namespaced.unwrapped.illegal_action == "lose"
    assert namespaced.spec.max_episode_steps == GYM_VARIANTS[env_id][1]


def test_variant_ids_build_their_variant():
    rules = {i: gymnasium.make(i).unwrapped.rules for i in IDS}
    assert rules["AllFives-v0"].num_players == 2
    assert rules["AllFives-3p-v0"].num_players == 3
    assert rules["AllFives-4p-v0"].num_players == 4 and rules["AllFives-4p-v0"].partnerships
    assert rules["AllFives-4p-cutthroat-v0"].num_players == 4 and not rules["AllFives-4p-cutthroat-v0"].partnerships
    hand = gymnasium.make("AllFives-hand-v0")
    assert hand.unwrapped.episode_spec.episode == "hand" and hand.spec.max_episode_steps == HAND_EPISODE_STEPS
    # a direct SingleAgentEnv keeps raising; a registered id can ask for it
    assert allfives_env.SingleAgentEnv().illegal_action == "raise"
    assert gymnasium.make("AllFives-v0", illegal_action="raise").unwrapped.illegal_action == "raise"


def test_hand_episodes_stay_within_the_step_limit():
    e = gymnasium.make("AllFives-hand-v0", num_players=2, hand_size=1, illegal_action="raise")
    rng = np.random.default_rng(0)
    for seed in range(30):
        _, info = e.reset(seed=seed)
        steps, done = 0, False
        while not done:
            _, _, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            steps += 1
            done = term or trunc
            assert not trunc, "the rules end a hand before the limit"
        assert steps <= HAND_EPISODE_STEPS


def check_single_info(info, sides):
    assert type(info["seat"]) is int and type(info["hand"]) is int and type(info["winner"]) is int
    assert info["scores"].dtype == np.int64 and info["scores"].shape == (sides,)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (NUM_ACTIONS,)


@pytest.mark.parametrize("env_id", IDS)
def test_single_agent_info_has_a_fixed_schema(env_id):
    e = gymnasium.make(env_id, illegal_action="raise")
    sides = e.unwrapped.rules.num_sides
    rng = np.random.default_rng(1)
    for seed in range(2):
        _, info = e.reset(seed=seed)
        check_single_info(info, sides)
        assert info["winner"] == -1
        np.testing.assert_array_equal(info["action_mask"], e.unwrapped.action_masks())
        done = False
        while not done:
            _, _, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            check_single_info(info, sides)
            np.testing.assert_array_equal(info["action_mask"], e.unwrapped.action_masks())
            done = term or trunc
        assert not info["action_mask"].any()
        assert info["winner"] == (-1 if e.unwrapped.game.winner is None else e.unwrapped.game.winner)


def test_illegal_loss_info_keeps_the_schema_plus_the_message():
    e = gymnasium.make("AllFives-v0")
    _, info = e.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    _, reward, term, _, info = e.step(illegal)
    assert term and reward == -1.0 and isinstance(info["illegal_move"], str)
    check_single_info(info, 2)
    assert not info["action_mask"].any() and not e.unwrapped.action_masks().any()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_envs_hand_the_mask_over_in_info(mode, autoreset):
    # "raise": an illegal action would fail the test; hand episodes make many autoresets
    envs = gymnasium.make_vec(
        "AllFives-hand-v0",
        4,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": autoreset},
        illegal_action="raise",
        reward_scale=0.01,
    )
    try:
        rng = np.random.default_rng(0)
        obs, info = envs.reset(seed=0)
        episodes = 0
        for _ in range(300):
            masks = info["action_mask"]
            assert masks.shape == (4, NUM_ACTIONS)
            actions = np.zeros(4, dtype=np.int64)
            for i in range(4):
                legal = np.flatnonzero(masks[i])
                if legal.size:
                    actions[i] = rng.choice(legal)
                else:  # the step after an episode's end under NEXT_STEP: ignored by the reset
                    assert autoreset == AutoresetMode.NEXT_STEP
            obs, _, terms, truncs, info = envs.step(actions)
            assert obs.shape == (4, envs.single_observation_space.shape[0])
            assert info["winner"].dtype.kind == "i" and info["hand"].dtype.kind == "i"
            assert info["scores"].shape == (4, 2)
            episodes += int(np.sum(terms | truncs))
        assert episodes > 0
    finally:
        envs.close()


def test_aec_infos_have_a_fixed_schema_and_report_every_event():
    assert MAX_EVENTS == NUM_TILES + 1 and len(EVENT_FIELDS) == 5
    for opts in ({"num_players": 2}, {"num_players": 3}, {"num_players": 4, "partnerships": False}):
        for wrapped in (False, True):
            e = env(**opts, target_score=100) if wrapped else raw_env(**opts, target_score=100)
            raw = e.unwrapped
            rng = np.random.default_rng(2)
            e.reset(seed=7)
            n = raw.rules.num_players
            total_events = 0
            while raw.agents:
                agent = raw.agent_selection
                for info in raw.infos.values():  # agents leave infos as they step out after the end
                    assert set(info) == {"events", "num_events"}
                    assert info["events"].shape == (MAX_EVENTS, 5) and info["events"].dtype == np.int16
                    assert type(info["num_events"]) is int
                    assert (info["events"][info["num_events"]:] == -1).all()
                info = raw.infos[agent]
                rows = info["events"][: info["num_events"]]
                seat = raw._seat[agent]
                assert set(rows[:, 0].tolist()) <= {0, 1, 2} and ((0 <= rows[:, 1]) & (rows[:, 1] < n)).all()
                assert ((rows[:, 0] == 1) & (rows[:, 1] != seat) & (rows[:, 2] != -1)).sum() == 0
                total_events += info["num_events"]
                if raw.terminations[agent] or raw.truncations[agent]:
                    e.step(None)
                else:
                    e.step(int(rng.choice(np.flatnonzero(raw.observe(agent)["action_mask"]))))
            assert total_events > 0


def test_aec_list_events_option_keeps_the_engine_tuples():
    a, b = raw_env(num_players=2), raw_env(num_players=2, info_events="list")
    a.reset(seed=3)
    b.reset(seed=3)
    rng = np.random.default_rng(3)
    while a.agents and not any(a.terminations.values()):
        agent = a.agent_selection
        ia, ib = a.infos[agent], b.infos[agent]
        assert isinstance(ib["events"], list) and len(ib["events"]) == ia["num_events"]
        for row, ev in zip(ia["events"], ib["events"]):
            assert tuple(row[: len(ev)]) == ev and (row[len(ev):] == -1).all()
        action = int(rng.choice(np.flatnonzero(a.observe(agent)["action_mask"])))
        a.step(action)
        b.step(action)
    with pytest.raises(ValueError, match="info_events must be one of array, list"):
        raw_env(info_events="tuple")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_aec_event_rows_from_c_equal_the_python_rows(monkeypatch, players):
    """``EventInfos`` packs the rows with ``_fastobs.pack_events`` where it was built; the
    pure-Python loop it replaces gives the same arrays at every step of whole games."""
    from allfives_env import aec

    if aec._pack_events is None:
        pytest.skip("the C accelerator was not built")
    c, python = raw_env(num_players=players), raw_env(num_players=players)
    rng = np.random.default_rng(players)
    for game in range(3):
        c.reset(seed=game)
        python.reset(seed=game)
        while c.agents and not any(c.terminations.values()) and not any(c.truncations.values()):
            agent = c.agent_selection
            got, want = c.infos[agent], python.infos[agent]
            assert got["num_events"] == want["num_events"]
            np.testing.assert_array_equal(got["events"], want["events"])
            action = int(rng.choice(np.flatnonzero(c.observe(agent)["action_mask"])))
            c.step(action)
            with monkeypatch.context() as m:  # the Python loop for this env's rows
                m.setattr(aec, "_pack_events", None)
                python.step(action)


def test_pack_events_names_bad_input():
    from allfives_env import aec

    if aec._pack_events is None:
        pytest.skip("the C accelerator was not built")
    out = bytearray(4 * 10)
    assert aec._pack_events(out, 0, [(0, 1, 5, 2, 10), (2, 0)], 0, 0, 0, 1) == 2
    assert np.frombuffer(bytes(out[:20]), np.int16).tolist() == [0, 1, 5, 2, 10, 2, 0, 0, 0, 0]
    for args, error, message in [
        ((bytes(40), 0, [(2, 0)], 0, 0, 0, 1), BufferError, "not writable"),
        ((bytearray(8), 0, [(2, 0)], 0, 0, 0, 1), ValueError, "out is too small"),
        ((bytearray(40), 0, [(2,)], 0, 0, 0, 1), ValueError, "a kind and a player"),
        ((bytearray(40), 0, [(0, 1, 2)], 0, 0, 0, 1), ValueError, "must hold 5 fields"),
        ((bytearray(40), 0, [(0, 1, 2, 3, 1 << 20)], 0, 0, 0, 1), OverflowError, "int16"),
        ((bytearray(40), 0, "abc", 0, 0, 0, 1), TypeError, "events must be a tuple or list"),
        ((bytearray(40), 0, [(2, 0)], 5, 0, 0, 1), ValueError, "start must be in"),
    ]:
        with pytest.raises(error, match=message):
            aec._pack_events(*args)


def test_aec_event_infos_survive_pickling_and_never_change_once_given():
    import pickle

    e = raw_env(num_players=2)
    e.reset(seed=5)
    rng = np.random.default_rng(5)
    given = []
    for _ in range(150):  # more steps than one preallocated block holds
        if not e.agents or any(e.terminations.values()) or any(e.truncations.values()):
            e.reset(seed=int(rng.integers(100)))
        info = e.infos[e.agent_selection]
        given.append((info["events"], info["events"].copy()))
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
        if len(given) == 70:
            e = pickle.loads(pickle.dumps(e))
    for arr, snapshot in given:
        np.testing.assert_array_equal(arr, snapshot)


def _sampled_legal(space, mask) -> bool:
    """gymnasium's own sampler takes the mask as given; the action it draws is legal (or, for an
    all-0 mask, 0 and nothing to play)."""
    action = space.sample(mask=mask)
    return bool(mask[action]) if mask.any() else action == 0


def test_every_envs_mask_is_int8_and_gymnasiums_sampler_takes_it():
    aec = allfives_env.env(num_players=3)
    aec.reset(seed=2)
    rllib = allfives_env.rllib_env(num_players=3)
    rllib.reset(seed=2)
    for _ in range(40):
        mask = aec.observe(aec.agent_selection)["action_mask"]
        assert mask.dtype == np.int8 and _sampled_legal(aec.action_space(aec.agent_selection), mask)
        adapted = rllib.observe(rllib.agent_selection)["action_mask"]
        assert adapted.dtype == np.int8 and _sampled_legal(rllib.action_space(rllib.agent_selection), adapted)
        action = int(np.flatnonzero(mask)[0])
        aec.step(action)
        rllib.step(action)
        if any(aec.terminations.values()):
            break

    e = gymnasium.make("AllFives-hand-v0")
    _, info = e.reset(seed=3)
    for _ in range(200):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and e.unwrapped.action_masks().dtype == np.int8
        assert _sampled_legal(e.action_space, mask)
        _, _, term, trunc, info = e.step(e.action_space.sample(mask=mask))
        if term or trunc:
            assert not info["action_mask"].any() and e.action_space.sample(mask=info["action_mask"]) == 0
            _, info = e.reset()


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync", "async"])
def test_vector_masks_sample_with_gymnasiums_own_sampler_in_next_step_autoreset(mode):
    # the default NEXT_STEP autoreset: the step after an episode's end has an all-0 mask, which the
    # sampler takes (0, ignored by the reset); every other drawn action is legal ("raise" would say)
    envs = gymnasium.make_vec("AllFives-hand-v0", 3, vectorization_mode=mode, illegal_action="raise")
    try:
        _, info = envs.reset(seed=5)
        ends = 0
        for _ in range(150):
            masks = info["action_mask"]
            assert masks.dtype == np.int8
            actions = envs.action_space.sample(mask=tuple(masks))
            assert all(_sampled_legal(envs.single_action_space, m) or not m.any() for m in masks)
            _, _, terms, truncs, info = envs.step(actions)
            ends += int(np.sum(terms | truncs))
        assert ends > 0
    finally:
        envs.close()


def test_a_shipped_policy_evaluates_in_the_default_env_as_sb3s_docs_write_it():
    # the one-observation contract: the environments' default is the version the policies read
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy

    from allfives_agents.models import model_path

    model = MaskablePPO.load(model_path("allfives_2p", "zip"), device="cpu")
    env = gymnasium.make("AllFives-v0")
    assert env.observation_space.shape == model.observation_space.shape
    mean, _ = evaluate_policy(model, env, n_eval_episodes=2, use_masking=True)
    assert np.isfinite(mean)
