"""``AllFivesVectorEnv``: gymnasium's ``VectorEnv`` over a ``GameVector``.

It returns, step by step, exactly what ``gymnasium.vector.SyncVectorEnv`` returns over the same
``SingleAgentEnv`` constructors (observations, rewards, flags, infos with their ``_key`` masks, the
seeding rule, both autoreset modes and ``options["reset_mask"]``), but it plays the games through
``allfives_env.vector.GameVector``: opponents of the batch protocol (``ppo:`` agents on one
network) are asked once for all the games waiting on them, which is where it is faster.

    envs = AllFivesVectorEnv(8, opponents=allfives_agents.make_agent("ppo:models/allfives_2p.zip"))
    envs = gymnasium.make_vec("AllFives-v0", 8, opponents=..., autoreset_mode=AutoresetMode.SAME_STEP)

``AllFivesVectorEnv(num_envs, opponents=..., partner=..., **kwargs)`` builds ``num_envs``
``SingleAgentEnv(**kwargs)``; each gets its own deep copy of ``opponents`` and ``partner`` (agents
keep per-game random state), except their ``batch_key`` objects (a ``PPOAgent``'s network), which
stay shared so that batching happens. ``AllFivesVectorEnv(env_fns=[...])`` takes constructors as
``SyncVectorEnv`` does; they must return bare ``SingleAgentEnv``\\ s (wrappers would be bypassed).
``max_episode_steps`` truncates as ``gymnasium.wrappers.TimeLimit`` does on each env.
"""

from __future__ import annotations

import copy as copy_module
from typing import Any, Callable, Sequence

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space


from .single_agent import SingleAgentEnv
from .vector import GameVector


def per_game_copy(agents: Any) -> Any:
    """A deep copy of an opponent (or a list of them) that shares the agents' ``batch_key`` objects."""
    items = agents if isinstance(agents, (list, tuple)) else [agents]
    memo = {}
    for agent in items:
        key = getattr(agent, "batch_key", None)
        if key is not None:
            memo[id(key)] = key
    return copy_module.deepcopy(agents, memo)


class AllFivesVectorEnv(VectorEnv):
    """``num_envs`` games as one gymnasium vector env (see the module docstring).

    Args:
        num_envs: how many ``SingleAgentEnv(opponents=..., partner=..., **env_kwargs)`` to build.
        env_fns: instead, the constructors of the envs (``SingleAgentEnv`` instances, unwrapped).
        autoreset_mode: ``NEXT_STEP`` (default) or ``SAME_STEP``, as ``SyncVectorEnv``.
        copy: return copies of the observations (default), or the live array (``False``).
        max_episode_steps: truncate each episode after that many steps (``TimeLimit``).
    """

    def __init__(
        self,
        num_envs: int | None = None,
        *,
        env_fns: Sequence[Callable[[], SingleAgentEnv]] | None = None,
        opponents: Any = None,
        partner: Any = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        max_episode_steps: int | None = None,
        **env_kwargs,
    ) -> None:
        if env_fns is None:
            if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
                raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
            envs = [
                SingleAgentEnv(opponents=per_game_copy(opponents), partner=per_game_copy(partner), **env_kwargs)
                for _ in range(num_envs)
            ]
        else:
            if opponents is not None or partner is not None or env_kwargs:
                raise ValueError("give either env_fns or the SingleAgentEnv options, not both")
            envs = [fn() for fn in env_fns]
            if num_envs is not None and num_envs != len(envs):
                raise ValueError(f"num_envs={num_envs} but {len(envs)} env_fns")
            for env in envs:
                if not isinstance(env, SingleAgentEnv):
                    raise TypeError(
                        f"env_fns must return SingleAgentEnv instances, got {env!r}; "
                        "wrappers are not applied here (use gymnasium.vector.SyncVectorEnv for wrapped envs)"
                    )
        mode = AutoresetMode(autoreset_mode)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode must be NEXT_STEP or SAME_STEP, got {mode}")
        self.vector = GameVector(envs)
        self.envs = self.vector.envs
        self.num_envs = len(envs)
        self.autoreset_mode = mode
        self.copy = copy
        self.max_episode_steps = max_episode_steps
        self.metadata = dict(envs[0].metadata)
        self.metadata["autoreset_mode"] = mode
        self.render_mode = envs[0].render_mode
        self.single_observation_space = envs[0].observation_space
        self.single_action_space = envs[0].action_space
        for env in envs:
            if env.observation_space != self.single_observation_space:
                raise ValueError(
                    f"the envs' observation spaces differ: {env.observation_space} != {self.single_observation_space}"
                )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)
        self._elapsed = np.zeros(self.num_envs, np.int64)

    # ------------------------------------------------------------------ VectorEnv
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None):
        """Reset every game (or those of ``options["reset_mask"]``); an int seed gives game i ``seed + i``."""
        n = self.num_envs
        if seed is None:
            seeds = [None] * n
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(
                f"If seeds are passed as a list the length must match num_envs={n} but got length={len(seeds)}."
            )
        mask = np.ones(n, bool)
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = _check_reset_mask(options.pop("reset_mask"), n)
        infos: dict = {}
        for i in np.flatnonzero(mask):
            infos = self._add_info(infos, self._reset_game(int(i), seeds[i], options), int(i))
        return self._observations(), infos

    def step(self, actions):
        """One learner move per game: ``(obs, rewards, terminations, truncations, infos)``."""
        actions = self._checked(actions)
        n = self.num_envs
        rewards = np.zeros(n, np.float64)
        terminations = np.zeros(n, bool)
        truncations = np.zeros(n, bool)
        stepping = np.flatnonzero(~self._autoreset) if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.arange(n)
        step_infos = dict.fromkeys(range(n))
        if stepping.size:
            r, term, trunc, infos = self.vector.step([actions[i] for i in stepping], stepping)
            if self.max_episode_steps is not None:
                self._elapsed[stepping] += 1
                trunc = trunc | (self._elapsed[stepping] >= self.max_episode_steps)
            rewards[stepping], terminations[stepping], truncations[stepping] = r, term, trunc
            step_infos.update(zip(stepping.tolist(), infos))
        out: dict = {}
        for i in range(n):
            if step_infos[i] is None:  # NEXT_STEP: the game that ended last step starts again
                info = self._reset_game(i)
            elif terminations[i] or truncations[i]:
                if self.autoreset_mode == AutoresetMode.SAME_STEP:
                    final = {"final_obs": self.vector.obs[i].copy(), "final_info": step_infos[i]}
                    out = self._add_info(out, final, i)
                    info = self._reset_game(i)
                else:
                    info = step_infos[i]
            else:
                info = step_infos[i]
            out = self._add_info(out, info, i)
        self._autoreset = terminations | truncations
        return self._observations(), rewards, terminations, truncations, out

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game's current decision, ``(num_envs, 112)`` int8 (all 0
        for a game that just ended under ``NEXT_STEP``), as ``infos["action_mask"]``."""
        return self.vector.masks.copy() if self.copy else self.vector.masks

    def render(self) -> tuple:
        return tuple(env.render() for env in self.envs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple:
        results = []
        for env in self.envs:
            function = env.get_wrapper_attr(name)
            results.append(function(*args, **kwargs) if callable(function) else function)
        return tuple(results)

    def get_attr(self, name: str) -> tuple:
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {self.num_envs} environments."
            )
        for env, value in zip(self.envs, values):
            env.set_wrapper_attr(name, value)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()

    @property
    def np_random_seed(self) -> tuple:
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple:
        return self.get_attr("np_random")

    # ------------------------------------------------------------------ internals
    def _reset_game(self, i: int, seed: int | None = None, options: dict | None = None) -> dict:
        self._autoreset[i] = False
        self._elapsed[i] = 0
        return self.vector.reset(i, seed=seed, options=options)

    def _observations(self) -> np.ndarray:
        return self.vector.obs.copy() if self.copy else self.vector.obs

    def _checked(self, actions) -> list:
        """The actions as a list of one per game (``GameVector.step`` checks each one)."""
        if isinstance(actions, np.ndarray) and actions.ndim != 1:
            raise ValueError(f"expected actions of shape ({self.num_envs},), got an array of shape {actions.shape}")
        try:
            actions = list(actions)
        except TypeError:
            raise TypeError(f"expected a sequence of {self.num_envs} actions, one per game, got {actions!r}") from None
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, one per game, got {len(actions)}")
        return actions  # each one is checked by GameVector.step, before any game moves


def _check_reset_mask(mask, n: int) -> np.ndarray:
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (n,):
        raise ValueError(f"`options['reset_mask']` must have shape `({n},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError(
            f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}"
        )
    return mask
