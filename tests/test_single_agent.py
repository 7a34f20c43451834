"""The gymnasium single-agent wrapper: gymnasium's checker, the learner's own view and rewards, masks, SB3."""

import random
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from allfives_agents import Agent, FunctionAgent, make_agent
from allfives_env.observation import piece
from allfives_env.single_agent import SingleAgentEnv


def run_episode(env, seed, rng):
    obs, info = env.reset(seed=seed)
    total, steps, done = 0.0, 0, False
    while not done:
        mask = env.action_masks()
        assert mask.any()
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
        steps += 1
        done = term or trunc
    return total, steps, info


@pytest.mark.parametrize("options", [dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, control_partner=True)])
def test_gymnasium_check_env(options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SingleAgentEnv(illegal_action="lose", **options), skip_render_check=False)


@pytest.mark.parametrize(
    "options",
    [dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False),
     dict(num_players=4, control_partner=True)],
)
def test_rewards_add_up_to_the_final_score_difference(options):
    env = SingleAgentEnv(opponents=make_agent("random"), target_score=100, **options)
    rng = random.Random(0)
    for seed in range(4):
        total, steps, info = run_episode(env, seed, rng)
        scores = list(info["scores"])
        side = env.rules.side_of[env.seat]
        others = (sum(scores) - scores[side]) / (len(scores) - 1)
        assert total == pytest.approx(scores[side] - others)


def test_reward_scale_and_win_reward():
    env = SingleAgentEnv(num_players=2, target_score=100, reward_scale=0.01)
    total, _, info = run_episode(env, 1, random.Random(1))
    s = info["scores"]
    assert total == pytest.approx((s[env.seat] - s[1 - env.seat]) * 0.01)
    env = SingleAgentEnv(num_players=2, target_score=100, reward="win")
    total, _, info = run_episode(env, 1, random.Random(1))
    assert total == (1.0 if info["winner"] == env.seat else -1.0)


class Recorder(Agent):
    """Plays randomly and remembers which seats asked it to move."""

    name = "recorder"

    def __init__(self):
        super().__init__(0)
        self.seats = set()

    def act(self, view):
        self.seats.add(view.seat)
        return view.legal_actions[self.rng.randrange(len(view.legal_actions))]


@pytest.mark.parametrize("control_partner", [False, True])
def test_observations_are_the_learners_own(control_partner):
    others = Recorder()
    env = SingleAgentEnv(opponents=others, num_players=4, control_partner=control_partner, target_score=60)
    rng = random.Random(3)
    for seed in range(5):
        others.seats = set()
        obs, info = env.reset(seed=seed)
        mine = {env.seat, (env.seat + 2) % 4} if control_partner else {env.seat}
        done = False
        while not done:
            seat = env.game.current_player
            assert seat in mine
            hand = np.flatnonzero(piece(obs, "hand"))
            assert set(hand) == {t for t in range(28) if env.game.hands[seat] >> t & 1}
            assert list(np.flatnonzero(env.action_masks())) == env.game.legal_actions()
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = term or trunc
        assert others.seats and not (others.seats & mine), "no seat of the learner's side is played by the opponents"


def test_seeded_resets_are_reproducible_and_seats_vary():
    env = SingleAgentEnv(num_players=3, opponents=[make_agent("random"), FunctionAgent(lambda v: v.legal_actions[0], "first")])
    a = [env.reset(seed=s)[0] for s in range(6)]
    b = [env.reset(seed=s)[0] for s in range(6)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2}
    assert SingleAgentEnv(seat=1).reset(seed=0)[1]["seat"] == 1


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match=r"'greedy' is a name, not an agent.*allfives_agents.make_agent\('greedy'\)"):
        SingleAgentEnv(opponents="greedy")
    with pytest.raises(TypeError, match="opponents must be an agent"):
        SingleAgentEnv(opponents=[make_agent("random"), 3])
    with pytest.raises(TypeError, match="has act\\(\\) but no reset"):
        SingleAgentEnv(opponents=type("Half", (), {"act": lambda self, view: 0})())
    with pytest.raises(ValueError, match="control_partner needs a partnership game"):
        SingleAgentEnv(num_players=3, control_partner=True)
    with pytest.raises(ValueError, match="seat must be None or a seat 0..1"):
        SingleAgentEnv(seat=2)
    with pytest.raises(ValueError, match="opponent_weights"):
        SingleAgentEnv(opponents=[make_agent("random"), make_agent("random")], opponent_weights=[1.0])
    env = SingleAgentEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal move"):
        env.step(illegal)
    lenient = SingleAgentEnv(illegal_action="lose")
    lenient.reset(seed=0)
    obs, reward, term, trunc, info = lenient.step(illegal)
    assert term and reward == -1.0 and "illegal move for player" in info["illegal_move"]


@pytest.mark.slow
def test_maskable_ppo_learns_a_few_hundred_steps_on_subprocesses():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([lambda: SingleAgentEnv(reward_scale=0.01, episode="hand") for _ in range(2)])
    try:
        model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, verbose=0)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        obs = vec.reset()
        masks = np.stack(vec.env_method("action_masks"))
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(masks[i, a] for i, a in enumerate(actions))
    finally:
        vec.close()


def test_view_is_what_the_observation_encodes():
    import numpy as np
    import pytest

    from allfives_env.observation import encode_lookahead
    from allfives_env.single_agent import SingleAgentEnv

    env = SingleAgentEnv(num_players=4, control_partner=True, obs_version=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.view()
    obs, info = env.reset(seed=3)
    seats = set()
    for _ in range(40):
        view = env.view()
        np.testing.assert_array_equal(obs, encode_lookahead(view))
        assert sorted(view.legal_actions) == list(np.flatnonzero(info["action_mask"]))
        seats.add(view.seat)
        obs, _, terminated, truncated, info = env.step(view.legal_actions[0])
        if terminated or truncated:
            break
    assert seats == {env.seat, (env.seat + 2) % 4}, "with control_partner both seats of the side decide"


@pytest.mark.parametrize("options", [dict(num_players=2), dict(num_players=4, control_partner=True), dict(num_players=3, privileged=True)])
def test_the_mask_is_the_legal_moves_of_the_decision_at_every_step(options):
    """``action_masks()`` hands out the observer's mask of the last observation (no second pass over
    the legal moves): it is the game's legal moves at every decision, a copy each call, all zeros
    once the episode is over, and recomputed if the game moved without an observation."""
    env = SingleAgentEnv(target_score=60, **options)
    rng = random.Random(5)
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            assert list(np.flatnonzero(mask)) == env.game.legal_actions() == list(np.flatnonzero(info["action_mask"]))
            mask[:] = 1  # the caller's own copy
            assert list(np.flatnonzero(env.action_masks())) == env.game.legal_actions()
            obs, r, term, trunc, info = env.step(int(rng.choice(env.game.legal_actions())))
            done = term or trunc
        assert not env.action_masks().any() and not info["action_mask"].any()
    env.reset(seed=9)
    env.game.step(env.game.legal_actions()[0])  # moved behind the environment's back: no stale mask
    assert list(np.flatnonzero(env.action_masks())) == env.game.legal_actions()
