"""Tianshou 2 on the All Fives PettingZoo env: a masked DQN seat learns against a random masked seat.

The env is used as shipped: ``tianshou.env.PettingZooEnv`` reads its ``{"observation",
"action_mask"}`` dict, and the infos (fixed-size arrays, docs/environment.md) go into Tianshou's
replay buffer as they are. This follows Tianshou's own tic-tac-toe example
(``test/pettingzoo/tic_tac_toe.py``), with our env in place of ``tictactoe_v3``.

    python docs/examples/tianshou_dqn.py --epochs 5 --epoch-steps 2000

Prints one JSON line: the DQN seat's win rate against the random seat before and after training.
CI runs it on a tiny budget (tests/test_stacks.py).
"""

from __future__ import annotations

import argparse
import json
import logging

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import allfives_env

LEARNER = 0  # the DQN plays player_0; the random seat player_1


def make_env() -> PettingZooEnv:
    # short games with a win/loss reward keep the example quick; any env option works here
    return PettingZooEnv(allfives_env.env(num_players=2, target_score=100, reward="win"))


def win_rate(algorithm, episodes: int, seed: int) -> float:
    """Share of ``episodes`` games the DQN seat wins (reward +1 at the end), greedy in its Q-values."""
    envs = DummyVectorEnv([make_env for _ in range(4)])
    envs.seed(seed)
    collector = Collector[CollectStats](algorithm, envs, exploration_noise=False)
    stats = collector.collect(n_episode=episodes, reset_before_collect=True)
    return float(np.mean(stats.returns[:, LEARNER] > 0))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--epoch-steps", type=int, default=2000)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--test-episodes", type=int, default=40)
    args = parser.parse_args(argv)
    logging.getLogger("sensai").setLevel(logging.ERROR)  # Tianshou's per-step statistics notes
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    env = make_env()
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.99, n_step_return_horizon=3, target_update_freq=200)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    before = win_rate(algorithm, args.test_episodes, args.seed + 1)
    train_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    test_envs = DummyVectorEnv([make_env for _ in range(2)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 2)
    buffer = VectorReplayBuffer(20_000, len(train_envs))
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)
    train_collector.reset()
    train_collector.collect(n_step=64 * args.envs)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=args.epochs,
            epoch_num_steps=args.epoch_steps,
            collection_step_num_env_steps=10 * args.envs,
            test_step_num_episodes=4,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            show_progress=False,
            multi_agent_return_reduction=lambda returns: returns[:, LEARNER],
        )
    )
    after = win_rate(algorithm, args.test_episodes, args.seed + 1)
    stored = buffer.sample_indices(0)  # every transition in the buffer, both seats
    obs, acts = buffer.obs[stored], buffer.act[stored]
    legal = np.asarray(obs.mask)[np.arange(len(stored)), acts.astype(int)]
    report = {
        "env_steps": int(result.train_step),
        "gradient_steps": int(result.update_step),
        "win_rate_before": before,
        "win_rate_after": after,
        "test_episodes": args.test_episodes,
        "stored_transitions": int(len(stored)),
        "illegal_actions_stored": int((~legal).sum()),
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
