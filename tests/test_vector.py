"""The vectorized training env (``allfives_env.vector.GameVector``, ``allfives_train.vec_env.BatchedVecEnv``)
against SB3's ``DummyVecEnv`` over the same environment constructors: the same trajectories, step
by step, in all four variants, with network opponents batched; and clear errors."""

import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

from allfives_agents.nets.policy import PPOAgent
from allfives_env.engine import IllegalMoveError
from allfives_train.config import load_config
from allfives_train.envs import make_env_fn
from allfives_train.vec_env import BatchedVecEnv

from test_train import TINY

VARIANTS = {
    "2p": (["game.num_players=2"], "models/allfives_2p.zip"),
    "3p": (["game.num_players=3"], "models/allfives_3p.zip"),
    "4p-partners": (["game.num_players=4", "game.partnerships=true"], "models/allfives_4p.zip"),
    "4p-cut-throat": (["game.num_players=4", "game.partnerships=false"], "models/allfives_4p.zip"),
}


def constructors(variant: str, n: int, obs_version: int = 2, episode: str = "game"):
    overrides, model = VARIANTS[variant]
    cfg = load_config(TINY, [*overrides, f"net.obs_version={obs_version}", f"game.episode={episode}", "game.max_hands=3"])
    specs = ["random", "greedy", "expert", f"ppo:{model}"]
    return [make_env_fn(cfg, rank, specs, [1, 1, 1, 3]) for rank in range(n)]


def same_step(a, b) -> None:
    for x, y in zip(a[:3], b[:3]):
        np.testing.assert_array_equal(x, y)
    assert len(a[3]) == len(b[3])
    for i, j in zip(a[3], b[3]):
        assert i.keys() == j.keys()
        for key in i:
            np.testing.assert_array_equal(i[key], j[key], err_msg=key)


def play_both(reference, vec, steps: int, seed: int) -> int:
    """Step both with the same legal actions; return the number of episodes that ended."""
    reference.seed(seed)
    vec.seed(seed)
    np.testing.assert_array_equal(reference.reset(), vec.reset())
    assert [set(i) for i in reference.reset_infos] == [set(i) for i in vec.reset_infos]
    rng = np.random.default_rng(seed)
    ended = 0
    for _ in range(steps):
        masks = np.stack(reference.env_method("action_masks"))
        np.testing.assert_array_equal(masks, np.stack(vec.env_method("action_masks")))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        a, b = reference.step(actions), vec.step(actions)
        same_step(a, b)
        ended += int(a[2].sum())
    return ended


@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_in_this_process_plays_dummy_vec_envs_trajectories(variant):
    fns = constructors(variant, 5, episode="hand")
    reference, vec = DummyVecEnv(fns), BatchedVecEnv(fns, workers=0)
    try:
        assert play_both(reference, vec, 250, seed=3) > 10, "episodes ended and were reset"
        assert vec.get_attr("seat") == reference.get_attr("seat")
    finally:
        vec.close()


@pytest.mark.slow
@pytest.mark.parametrize("obs_version", [1, 2])
def test_batched_in_worker_processes_plays_dummy_vec_envs_trajectories(obs_version):
    fns = constructors("2p", 7, obs_version)
    reference, vec = DummyVecEnv(fns), BatchedVecEnv(fns, workers=2)
    try:
        assert play_both(reference, vec, 300, seed=obs_version) > 5
        # env_method, get_attr and set_attr reach the envs themselves, in order
        vec.env_method("set_pool", ["greedy"], [1.0], indices=[0, 6])
        reference.env_method("set_pool", ["greedy"], [1.0], indices=[0, 6])
        for i in range(7):
            vec.set_attr("tag", i, indices=[i])
        assert vec.get_attr("tag", indices=[0, 6, 3, 1]) == [0, 6, 3, 1], "answers in the order asked"
        assert vec.get_attr("reward_scale", indices=[6, 0, 3]) == reference.get_attr("reward_scale", indices=[6, 0, 3])
        vec.set_attr("reward_scale", 2.0, indices=[1])
        assert vec.get_attr("reward_scale")[:3] == [0.01, 2.0, 0.01]
        reference.set_attr("reward_scale", 2.0, indices=[1])
        assert play_both(reference, vec, 100, seed=9) > 0
    finally:
        vec.close()
    assert all(not p.is_alive() for p in vec._processes)


def test_network_opponents_are_asked_once_for_all_waiting_games(monkeypatch):
    calls = []
    original = PPOAgent.act_games  # the views' choices without the views (tests/test_game_moves.py)
    monkeypatch.setattr(PPOAgent, "act_games", lambda self, games: calls.append(len(games)) or original(self, games))
    fns = constructors("2p", 8)
    vec = VecMonitor(BatchedVecEnv(fns, workers=0))
    vec.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = np.stack(vec.env_method("action_masks"))
        vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert calls and max(calls) > 1, f"one call per round for every game waiting on the network: {calls}"
    vec.close()


@pytest.mark.parametrize("workers", [0, 2])
def test_a_bad_action_names_its_game_and_moves_no_game(workers):
    fns = constructors("2p", 4)
    reference, vec = DummyVecEnv(fns), BatchedVecEnv(fns, workers=workers)
    try:
        reference.reset(), vec.reset()
        masks = np.stack(vec.env_method("action_masks"))
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        bad = actions.copy()
        bad[2] = np.flatnonzero(~masks[2])[0]
        with pytest.raises(IllegalMoveError) as caught:
            vec.step(bad)
        assert str(caught.value).startswith("game 2: illegal move for player") and caught.value.game_index == 2
        with pytest.raises(ValueError, match=r"expected 4 actions, one per game, got an array of shape \(3,\)"):
            vec.step(actions[:3])
        with pytest.raises(TypeError, match="game 0: an action must be an int"):
            vec.step(actions.astype(float))
        same_step(reference.step(actions), vec.step(actions))  # nothing had moved
    finally:
        vec.close()


def _broken():
    raise ValueError("no such rules: num_players=9")


def test_an_env_that_cannot_be_built_in_a_worker_is_a_clear_error():
    with pytest.raises(ValueError, match="no such rules: num_players=9"):
        BatchedVecEnv([_broken, _broken], workers=2)


def test_config_takes_batched_and_its_options(tmp_path):
    from allfives_train.config import ConfigError

    cfg = load_config(TINY, ["vec_env=batched", "env_workers=0", "update_threads=2"])
    assert (cfg.vec_env, cfg.env_workers, cfg.update_threads) == ("batched", 0, 2)
    with pytest.raises(ConfigError, match="vec_env must be subproc, dummy or batched"):
        load_config(TINY, ["vec_env=ray"])
    with pytest.raises(ConfigError, match="env_workers must be 0"):
        load_config(TINY, ["env_workers=-1"])
