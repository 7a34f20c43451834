"""AllFivesVectorEnv returns exactly what gymnasium's SyncVectorEnv returns over the same envs, step by step."""

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from allfives_agents import make_agent
from allfives_agents.nets.policy import PPOAgent
from allfives_env import AllFivesVectorEnv, SingleAgentEnv
from allfives_env.engine import IllegalMoveError
from allfives_env.engine.tiles import NUM_ACTIONS

MODELS = Path(__file__).resolve().parents[1] / "models"
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]
VARIANTS = {  # rules options, the network trained for them (None: none for this variant)
    "2p": ({"num_players": 2}, "allfives_2p.zip"),
    "3p": ({"num_players": 3}, "allfives_3p.zip"),
    "4p": ({"num_players": 4}, "allfives_4p.zip"),
    "4p-cutthroat": ({"num_players": 4, "partnerships": False}, None),
}


def opponents_of(model):
    found = [make_agent("expert"), make_agent("greedy")]
    if model is not None and (MODELS / model).exists():
        found.append(make_agent(f"ppo:{MODELS / model}"))
    return found


def assert_same(a, b, where=""):
    """Equal values of equal types: dicts key by key, arrays with their dtypes and shapes."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a!r} != {b!r}"
        if a.dtype == object:
            for i, (x, y) in enumerate(zip(a, b)):
                assert_same(x, y, f"{where}[{i}]")
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def legal_actions(rng, masks):
    """A legal action per game (0 where none is legal: a game about to be autoreset)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks], dtype=np.int64)


def run_both(ours, theirs, steps, seed=0, rng_seed=0):
    """Step both vectors with the same legal actions; assert equal results at every step."""
    rng = np.random.default_rng(rng_seed)
    obs, info = ours.reset(seed=seed)
    assert_same(theirs.reset(seed=seed), (obs, info), "reset")
    assert ours.observation_space.contains(obs)
    ends = 0
    for t in range(steps):
        np.testing.assert_array_equal(ours.action_masks(), info["action_mask"])
        actions = legal_actions(rng, info["action_mask"])
        result = ours.step(actions)
        assert_same(result, theirs.step(actions), f"step {t}")
        obs, _, terms, truncs, info = result
        assert ours.observation_space.contains(obs)
        ends += int(np.sum(terms | truncs))
    return ends


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("obs_version", [1, 2])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_same_trajectories_as_sync_vector_env(variant, obs_version, mode):
    rules, model = VARIANTS[variant]

    def make():
        return SingleAgentEnv(opponents=opponents_of(model), obs_version=obs_version, reward_scale=0.01,
                              target_score=60, **rules)

    fns = [make] * 4
    ours = AllFivesVectorEnv(env_fns=fns, autoreset_mode=mode)
    theirs = SyncVectorEnv(fns, autoreset_mode=mode)
    assert ours.metadata == theirs.metadata
    assert run_both(ours, theirs, 200, seed=obs_version) >= 3
    ours.close()
    theirs.close()


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_num_envs_constructor_gives_each_game_its_own_agents(mode):
    opponents = opponents_of("allfives_2p.zip")
    ours = AllFivesVectorEnv(3, opponents=opponents, autoreset_mode=mode, episode="hand", obs_version=2)
    agents = [env.opponent_agents for env in ours.envs]
    assert all(a is not b for game in agents for a, b in zip(game, opponents))
    assert agents[0][0] is not agents[1][0]
    networks = [game[2] for game in agents]
    assert all(isinstance(a, PPOAgent) and a.policy is opponents[2].policy for a in networks)
    theirs = SyncVectorEnv([lambda: SingleAgentEnv(opponents=opponents_of("allfives_2p.zip"), episode="hand",
                                                   obs_version=2)] * 3, autoreset_mode=mode)
    assert run_both(ours, theirs, 60, seed=11) > 0


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_make_vec_uses_the_vector_entry_point_and_matches_sync(mode):
    kwargs = dict(illegal_action="raise", reward_scale=0.01)
    ours = gymnasium.make_vec("AllFives-hand-v0", 3, autoreset_mode=mode, **kwargs)
    assert isinstance(ours, AllFivesVectorEnv) and ours.max_episode_steps == 27
    assert ours.spec.id == "AllFives-hand-v0"
    explicit = gymnasium.make_vec("allfives/AllFives-3p-v0", 2, vectorization_mode="vector_entry_point")
    assert isinstance(explicit, AllFivesVectorEnv) and explicit.envs[0].rules.num_players == 3
    theirs = gymnasium.make_vec("AllFives-hand-v0", 3, vectorization_mode="sync",
                                vector_kwargs={"autoreset_mode": mode}, **kwargs)
    assert isinstance(theirs, SyncVectorEnv)
    assert run_both(ours, theirs, 80, seed=3) > 0


class Network:
    """What batch-protocol opponents share: records the size of each request."""

    def __init__(self):
        self.batches = []


class CountingOpponent:
    """A batch-protocol opponent playing the lowest legal action."""

    def __init__(self, network):
        self.batch_key = network

    def reset(self, seed=None):
        pass

    def act(self, view):
        self.batch_key.batches.append(1)
        return min(view.legal_actions)

    def act_batch(self, views):
        self.batch_key.batches.append(len(views))
        return [min(v.legal_actions) for v in views]


def test_batch_protocol_opponents_are_asked_once_for_all_waiting_games():
    shared, alone = Network(), Network()
    ours = AllFivesVectorEnv(6, opponents=CountingOpponent(shared), num_players=4)
    assert all(env.opponent_agents[0].batch_key is shared for env in ours.envs)
    assert len({id(env.opponent_agents[0]) for env in ours.envs}) == 6
    theirs = SyncVectorEnv([lambda: SingleAgentEnv(opponents=CountingOpponent(alone), num_players=4)] * 6)
    run_both(ours, theirs, 30)
    assert sum(shared.batches) == sum(alone.batches) and max(alone.batches) == 1
    assert max(shared.batches) == 6 and len(shared.batches) < len(alone.batches) / 3


def test_time_limit_truncates_as_the_wrapper_does():
    fns = [lambda: SingleAgentEnv(episode="hand")] * 2
    ours = AllFivesVectorEnv(env_fns=fns, max_episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP)
    theirs = SyncVectorEnv([lambda: gymnasium.wrappers.TimeLimit(SingleAgentEnv(episode="hand"), 2)] * 2,
                           autoreset_mode=AutoresetMode.SAME_STEP)
    ours.reset(seed=0)
    theirs.reset(seed=0)
    for t in range(6):
        actions = legal_actions(np.random.default_rng(t), ours.action_masks())
        result = ours.step(actions)
        assert_same(result, theirs.step(actions), f"step {t}")
    assert result[3].all()  # steps 2, 4, 6 end by the limit


def test_seeds_reset_mask_and_copy():
    ours = AllFivesVectorEnv(env_fns=[SingleAgentEnv] * 3)
    theirs = SyncVectorEnv([SingleAgentEnv] * 3)
    assert_same(ours.reset(seed=[4, None, 6])[1]["seat"].shape, (3,))
    assert ours.np_random_seed[0] == 4 and ours.np_random_seed[2] == 6
    obs, _ = ours.reset(seed=7)
    assert ours.np_random_seed == (7, 8, 9)
    assert_same(theirs.reset(seed=7), (obs, ours.reset(seed=7)[1]))
    mask = np.array([False, True, False])
    assert_same(ours.reset(seed=20, options={"reset_mask": mask}), theirs.reset(seed=20, options={"reset_mask": mask}))
    with pytest.raises(ValueError, match="length must match"):
        ours.reset(seed=[1, 2])
    obs[:] = 5
    assert not (ours.reset(seed=0)[0] == 5).any()
    live = AllFivesVectorEnv(env_fns=[SingleAgentEnv] * 2, copy=False)
    first, _ = live.reset(seed=0)
    second, _ = live.step(legal_actions(np.random.default_rng(0), live.action_masks()))[:2]
    assert first is second and live.action_masks() is live.vector.masks


def test_spaces_call_get_attr_set_attr_render():
    ours = AllFivesVectorEnv(2, num_players=3, render_mode="ansi")
    assert ours.single_action_space == gymnasium.spaces.Discrete(NUM_ACTIONS)
    assert ours.action_space == gymnasium.spaces.MultiDiscrete([NUM_ACTIONS] * 2)
    assert ours.observation_space.shape == (2, *ours.single_observation_space.shape)
    ours.reset(seed=0)
    assert all(isinstance(frame, str) for frame in ours.render())
    masks = ours.call("action_masks")
    np.testing.assert_array_equal(np.stack(masks), ours.action_masks())
    assert ours.get_attr("reward_scale") == (1.0, 1.0)
    ours.set_attr("reward_scale", [0.5, 0.25])
    assert ours.get_attr("reward_scale") == (0.5, 0.25)
    with pytest.raises(ValueError, match="length equal"):
        ours.set_attr("reward_scale", [1.0])
    ours.close()
    assert ours.closed


def test_bad_actions_are_refused_before_any_game_moves():
    ours = AllFivesVectorEnv(3, illegal_action="raise")
    _, info = ours.reset(seed=0)
    before = np.stack([env._obs() for env in ours.envs])  # encoded from the games themselves
    actions = legal_actions(np.random.default_rng(0), info["action_mask"])
    with pytest.raises(ValueError, match="expected 3 actions, one per game, got 2"):
        ours.step(actions[:2])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        ours.step(actions[None])
    bad = actions.copy()
    bad[2] = int(np.flatnonzero(~info["action_mask"][2])[0])
    with pytest.raises(IllegalMoveError, match="^game 2: illegal move") as caught:
        ours.step(bad)
    assert caught.value.game_index == 2
    with pytest.raises(TypeError, match="^game 1: an action must be an int"):
        ours.step([int(actions[0]), 1.0, int(actions[2])])
    with pytest.raises(TypeError, match="game 0"):
        ours.step(actions.astype(np.float64))
    np.testing.assert_array_equal(np.stack([env._obs() for env in ours.envs]), before)
    np.testing.assert_array_equal(ours.action_masks(), info["action_mask"])
    ours.step(actions)  # nothing moved: the legal actions still are
    with pytest.raises(TypeError, match="SingleAgentEnv instances"):
        AllFivesVectorEnv(env_fns=[lambda: gymnasium.make("AllFives-v0")])


def test_illegal_action_lose_ends_that_game_only():
    ours = AllFivesVectorEnv(2, illegal_action="lose")
    _, info = ours.reset(seed=1)
    actions = legal_actions(np.random.default_rng(0), info["action_mask"])
    actions[1] = int(np.flatnonzero(~info["action_mask"][1])[0])
    _, rewards, terms, _, info = ours.step(actions)
    assert terms.tolist() == [False, True] and rewards[1] == -1.0
    assert info["_illegal_move"].tolist() == [False, True] and "illegal move" in info["illegal_move"][1]
