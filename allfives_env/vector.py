"""Many single-agent games in one process, stepped as one: the core of the vector environments.

``GameVector`` holds one ``SingleAgentEnv`` per game and plays them exactly as those envs play
alone (same seeds, same moves, same rewards and infos; tests/test_vector.py checks it step by step),
with two differences that make it fast:

- the learners' observations and masks are written into two arrays, ``obs`` ``(N, size)`` and
  ``masks`` ``(N, 112)``, that the caller reads (and copies if it keeps them);
- opponents that can decide for many games at once are asked once for all the games waiting on
  them (the **batch protocol**): an opponent whose ``batch_key`` is not ``None`` has
  ``act_batch(views) -> actions``, and opponents with equal keys answer for each other's views;
  one that also has ``act_games(pairs) -> actions`` is asked that instead, with ``(game, seat)``
  pairs, and no view is built. The ``ppo:`` agents (``allfives_agents.nets.policy.PPOAgent``) do:
  their key is their network, so every game waiting on the same snapshot costs one matrix product,
  on observations the engine's observer writes in C. Any other opponent plays as it does alone
  (``act_game(game, seat)`` where it has one: ``allfives_env.opponents``).

It does not reset games by itself: ``allfives_env.gym_vector.AllFivesVectorEnv`` (gymnasium's
vector API) and ``allfives_train.vec_env.BatchedVecEnv`` (Stable-Baselines3's ``VecEnv``) each add their
library's autoreset rule on top.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from allfives_env.engine.tiles import NUM_ACTIONS

from .single_agent import SingleAgentEnv


class GameVector:
    """``SingleAgentEnv``\\ s stepped together (see the module docstring); all must share one
    observation space. ``first``: the index of the first game in a larger vector (a worker's share)."""

    def __init__(self, envs: Sequence[SingleAgentEnv], first: int = 0) -> None:
        self.envs = list(envs)
        self.first = first  #: the index of game 0 in a larger vector, for error messages
        if not self.envs:
            raise ValueError("a GameVector needs at least one environment")
        shapes = {env.observation_space.shape for env in self.envs}
        if len(shapes) != 1:
            raise ValueError(f"the environments' observations differ in shape: {sorted(shapes)}")
        self.obs = np.zeros((len(self.envs), *shapes.pop()), np.float32)
        self.masks = np.zeros((len(self.envs), NUM_ACTIONS), np.int8)

    def __len__(self) -> int:
        return len(self.envs)

    def reset(self, i: int, seed: int | None = None, options: dict | None = None) -> dict:
        """Reset game ``i``; its observation and mask land in row ``i``; returns its info."""
        obs, info = self.envs[i].reset(seed=seed, options=options)
        self.obs[i] = obs
        self.masks[i] = info["action_mask"]
        return info

    def check(self, i: int, action) -> int:
        """``action`` as an int if game ``i`` may play it; else what ``step`` raises, its message
        starting ``game I:`` (``I`` counted from ``first``) and ``exc.game_index`` set. Changes nothing."""
        try:
            return self.envs[i]._checked(action)
        except (TypeError, ValueError, RuntimeError) as exc:
            index = self.first + i
            exc.args = (f"game {index}: {exc.args[0] if exc.args else exc}", *exc.args[1:])
            exc.game_index = index
            raise

    def step(self, actions, indices=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One learner move in every game (or in the games ``indices``, one action each):
        ``(rewards, terminated, truncated, infos)`` of those games, in their order; their next
        observations and masks are in ``obs`` and ``masks`` (those of the last position of a game
        that ended), the other rows are left as they are. A bad action raises as
        ``SingleAgentEnv.step`` does, its message starting ``game I:`` (and ``exc.game_index``),
        before any game has moved."""
        rows = range(len(self.envs)) if indices is None else [int(i) for i in indices]
        envs = [self.envs[i] for i in rows]
        if len(actions) != len(envs):
            raise ValueError(f"expected {len(envs)} actions, one per game, got {len(actions)}")
        actions = [self.check(i, action) for i, action in zip(rows, actions)]
        results: list = [env._play(action) for env, action in zip(envs, actions)]
        moving = [k for k, r in enumerate(results) if r is None]
        self._play_others([envs[k] for k in moving])
        for k in moving:
            env = envs[k]
            results[k] = env._outcome(env._obs(self.obs[rows[k]]))
        rewards = np.empty(len(envs), np.float64)
        terminated = np.empty(len(envs), bool)
        truncated = np.empty(len(envs), bool)
        infos = []
        encoded = set(moving)
        for k, (obs, reward, term, trunc, info) in enumerate(results):
            i = rows[k]
            if k not in encoded:
                self.obs[i] = obs
            self.masks[i] = info["action_mask"]
            rewards[k], terminated[k], truncated[k] = reward, term, trunc
            infos.append(info)
        return rewards, terminated, truncated, infos

    @staticmethod
    def _play_others(envs: list[SingleAgentEnv]) -> None:
        """Play every game up to its learner's next decision; the batch protocol's opponents are
        asked in rounds, once per key for all the games waiting on it."""
        waiting = envs
        while waiting:
            groups: dict = {}
            for env in waiting:
                game, mine, agents = env.game, env._mine, env._seat_agents
                while not game.over and game.current_player not in mine:
                    seat = game.current_player
                    agent = agents[seat]
                    key = getattr(agent, "batch_key", None)
                    if key is None:
                        act_game = getattr(agent, "act_game", None)
                        game.step(agent.act(game.view(seat)) if act_game is None else act_game(game, seat))
                    else:
                        groups.setdefault(key, []).append((env, agent, seat))
                        break
            waiting = []
            for items in groups.values():
                agent = items[0][1]
                if hasattr(agent, "act_games"):  # the views' observations without the views
                    actions = agent.act_games([(env.game, seat) for env, _, seat in items])
                else:
                    actions = agent.act_batch([env.game.view(seat) for env, _, seat in items])
                for (env, _, _), action in zip(items, actions):
                    env.game.step(action)
                    waiting.append(env)
