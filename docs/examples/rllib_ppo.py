"""RLlib PPO with action masking on the All Fives PettingZoo env (RLlib's new API stack).

Every seat is played by one shared policy (self-play, parameter sharing), an RLlib
``ActionMaskingTorchRLModule`` (from RLlib's own examples), so a masked-out action is never
sampled. The env goes through RLlib's own ``PettingZooEnv`` wrapper; the one adapter
``allfives_env.rllib_env`` only renames the observation keys to the ones that module reads.

    python docs/examples/rllib_ppo.py --iterations 5

Prints one JSON line: env steps sampled, the iterations' mean episode returns, and the share of
the trained module's greedy moves that are legal on fresh positions (always 1 with the mask).
CI runs it on a tiny budget (tests/test_stacks.py).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import allfives_env

ENV_OPTIONS = {"num_players": 2, "target_score": 100}


def make_env(config=None) -> PettingZooEnv:
    return PettingZooEnv(allfives_env.rllib_env(**dict(ENV_OPTIONS, **(config or {}))))


def legal_share(module, positions: int, seed: int) -> float:
    """Share of ``positions`` fresh decisions where the module's argmax action is legal."""
    env = allfives_env.rllib_env(**ENV_OPTIONS)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    legal = 0
    for _ in range(positions):
        obs = env.observe(env.agent_selection)
        batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs.items()}}
        with torch.no_grad():
            logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        action = int(torch.argmax(logits))
        legal += bool(obs["action_mask"][action])
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not env.agents or any(env.terminations.values()) or any(env.truncations.values()):
            env.reset(seed=int(rng.integers(2**31)))
    return legal / positions


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    register_env("allfives", make_env)
    probe = make_env()
    agents = probe.possible_agents
    config = (
        PPOConfig()
        # RLlib's env check steps random actions, which are mostly illegal here (they end the game)
        .environment("allfives", disable_env_checking=True)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        observation_space=probe.observation_space[agents[0]],
                        action_space=probe.action_space[agents[0]],
                        model_config={"head_fcnet_hiddens": [64, 64]},
                    )
                }
            )
        )
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(256, args.batch), num_epochs=2, lr=3e-4)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    returns, steps = [], 0
    for _ in range(args.iterations):
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = int(runners.get("num_env_steps_sampled_lifetime", steps))
        returns.append(runners.get("episode_return_mean"))
    module = algo.get_module("shared")
    report = {
        "iterations": args.iterations,
        "env_steps": steps,
        "episode_return_mean": returns,
        "legal_share": legal_share(module, 300, args.seed),
    }
    algo.stop()
    ray.shutdown()
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
