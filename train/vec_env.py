"""``BatchedVecEnv``: Stable-Baselines3's ``VecEnv`` over many games per process.

The games are split into ``workers`` contiguous groups, each a ``allfives_env.vector.GameVector``
in a process of its own (``workers=0``: all in this process). Each step the learner's actions go to
every worker at once; the workers play their games (the ``ppo:`` snapshots of the pool once per
round for all the games waiting on them) and write the next observations and masks straight into
arrays shared with this process, so only rewards, flags and infos travel through the pipes.

It behaves as SB3's ``DummyVecEnv`` over the same environment constructors: the same resets
(seeds from ``seed()`` once, then each env's own generator), the same autoreset with
``terminal_observation`` and ``TimeLimit.truncated`` in the infos, and ``env_method``, ``get_attr``
and ``set_attr`` on the envs themselves (tests/test_vector.py checks the trajectories step by step).
``env_method("action_masks")``, which MaskablePPO calls every step, reads the shared masks.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
from copy import deepcopy
from typing import Any, Callable, Sequence

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper, VecEnv
from threadpoolctl import threadpool_limits

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.vector import GameVector

MASKS_METHOD = "action_masks"


class _Games:
    """One group of games with DummyVecEnv's autoreset; run by a worker or by ``BatchedVecEnv`` itself."""

    def __init__(self, env_fns: Sequence[Callable], obs: np.ndarray, masks: np.ndarray, first: int = 0) -> None:
        self.vector = GameVector([fn() for fn in env_fns], first)
        self.vector.obs, self.vector.masks = obs, masks  # the shared rows of this group
        self.envs = self.vector.envs

    def spaces(self):
        return self.envs[0].observation_space, self.envs[0].action_space

    def step(self, actions) -> tuple:
        vector = self.vector
        rewards, terminated, truncated, infos = vector.step(actions)
        dones = terminated | truncated
        reset_infos = {}
        for i, info in enumerate(infos):
            info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            if dones[i]:
                info["terminal_observation"] = vector.obs[i].copy()
                reset_infos[i] = vector.reset(i)
        return rewards, dones, infos, reset_infos

    def raising_on(self) -> list[bool]:
        """Per game: whether an illegal action raises (rather than ending its episode)."""
        return [env.illegal_action == "raise" for env in self.envs]

    def check(self, action, indices) -> None:
        self.vector.check(indices[0], action)

    def reset(self, seeds, options) -> list[dict]:
        return [self.vector.reset(i, seed=seed, options=opt) for i, (seed, opt) in enumerate(zip(seeds, options))]

    def env_method(self, name: str, indices, args, kwargs) -> list:
        return [getattr(self.envs[i], name)(*args, **kwargs) for i in indices]

    def get_attr(self, name: str, indices) -> list:
        return [getattr(self.envs[i], name) for i in indices]

    def set_attr(self, name: str, value, indices) -> None:
        for i in indices:
            setattr(self.envs[i], name, value)

    def env_is_wrapped(self, wrapper_class, indices) -> list[bool]:
        from stable_baselines3.common import env_util

        return [env_util.is_wrapped(self.envs[i], wrapper_class) for i in indices]

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _worker(remote, parent_remote, fns_wrapper, obs_raw, masks_raw, rows: slice, obs_shape) -> None:
    parent_remote.close()
    threadpool_limits(1, user_api="blas")  # a worker is one core's games: numpy's BLAS (snapshots' moves) spins otherwise
    games = None
    try:
        obs = np.frombuffer(obs_raw, np.float32).reshape(-1, *obs_shape)[rows]
        masks = np.frombuffer(masks_raw, np.int8).reshape(-1, NUM_ACTIONS)[rows]
        games = _Games(fns_wrapper.var, obs, masks, rows.start)
        remote.send(("ok", games.spaces()))
        while True:
            command, args = remote.recv()
            if command == "close":
                break
            try:
                remote.send(("ok", getattr(games, command)(*args)))
            except Exception as exc:  # the main process re-raises it
                remote.send(("error", _portable(exc)))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        pass
    except Exception as exc:  # building the environments failed
        try:
            remote.send(("error", _portable(exc)))
        except (BrokenPipeError, OSError):
            pass
    finally:
        if games is not None:
            games.close()
        remote.close()


class BatchedVecEnv(VecEnv):
    """``len(env_fns)`` games in ``workers`` processes (0: this one); see the module docstring."""

    def __init__(self, env_fns: list[Callable], workers: int = 2, start_method: str | None = None) -> None:
        n = len(env_fns)
        if n < 1:
            raise ValueError("BatchedVecEnv needs at least one environment constructor")
        if workers < 0:
            raise ValueError(f"workers must be 0 (this process) or more, got {workers}")
        self.workers = min(workers, n)
        self.closed = False
        self.waiting = False
        probe = env_fns[0]()  # the shape of the shared arrays
        obs_shape = probe.observation_space.shape
        probe.close()
        groups = max(self.workers, 1)
        bounds = [round(g * n / groups) for g in range(groups + 1)]
        self._slices = [slice(bounds[g], bounds[g + 1]) for g in range(groups)]
        if self.workers == 0:
            self._obs = np.zeros((n, *obs_shape), np.float32)
            self._masks = np.zeros((n, NUM_ACTIONS), np.int8)
            self._local = _Games(env_fns, self._obs, self._masks)
            spaces = self._local.spaces()
        else:
            self._local = None
            ctx = mp.get_context(start_method or ("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"))
            obs_raw = ctx.RawArray("f", n * int(np.prod(obs_shape)))
            masks_raw = ctx.RawArray("b", n * NUM_ACTIONS)
            self._obs = np.frombuffer(obs_raw, np.float32).reshape(n, *obs_shape)
            self._masks = np.frombuffer(masks_raw, np.int8).reshape(n, NUM_ACTIONS)
            self._remotes, self._processes = [], []
            for rows in self._slices:
                remote, work_remote = ctx.Pipe()
                args = (work_remote, remote, CloudpickleWrapper(env_fns[rows]), obs_raw, masks_raw, rows, obs_shape)
                process = ctx.Process(target=_worker, args=args, daemon=True)
                process.start()
                work_remote.close()
                self._remotes.append(remote)
                self._processes.append(process)
            spaces = self._answers(range(self.workers))[0]
        super().__init__(n, *spaces)
        self._raising = np.array([r for answer in self._call("raising_on", lambda g, rows: ()) for r in answer])

    # ------------------------------------------------------------------ the workers
    def _answers(self, groups) -> list:
        """The answers of the workers ``groups``, all read (so none is left in a pipe); then the
        first error among them is raised."""
        answers, error = [], None
        for g in groups:
            try:
                status, value = self._remotes[g].recv()
            except EOFError:
                status, value = "error", RuntimeError(f"BatchedVecEnv worker {g} died (its games: {self._slices[g]})")
            if status == "error" and error is None:
                error = value
            answers.append(value)
        if error is not None:
            raise error
        return answers

    def _call(self, command: str, per_group: Callable[[int, slice], tuple]) -> list:
        """Run ``command`` on every group (at once, in the workers); one answer per group."""
        if self._local is not None:
            return [getattr(self._local, command)(*per_group(0, self._slices[0]))]
        for g, rows in enumerate(self._slices):
            self._remotes[g].send((command, per_group(g, rows)))
        return self._answers(range(self.workers))

    def _groups_of(self, indices) -> dict[int, list[int]]:
        """``{group: local indices}`` of the envs ``indices`` (all by default)."""
        out: dict[int, list[int]] = {}
        for i in self._get_indices(indices):
            g = next(g for g, rows in enumerate(self._slices) if rows.start <= i < rows.stop)
            out.setdefault(g, []).append(i - self._slices[g].start)
        return out

    def _call_some(self, command: str, indices, *args) -> list:
        """``command(local_indices, *args)`` on the groups holding ``indices``; one result per
        index, in the order of ``indices``."""
        order = list(self._get_indices(indices))
        groups = self._groups_of(order)
        if self._local is not None:
            answers = [getattr(self._local, command)(*_ordered_args(command, groups.get(0, []), args))]
        else:
            for g, local in groups.items():
                self._remotes[g].send((command, _ordered_args(command, local, args)))
            answers = self._answers(groups)
        if all(answer is None for answer in answers):
            return []
        by_index = {}
        for (g, local), answer in zip(groups.items(), answers):
            by_index.update(zip((self._slices[g].start + i for i in local), answer))
        return [by_index[i] for i in order]

    # ------------------------------------------------------------------ VecEnv
    def step_async(self, actions: np.ndarray) -> None:
        actions = self._checked(actions)
        if self._local is None:
            for g, rows in enumerate(self._slices):
                self._remotes[g].send(("step", (actions[rows],)))
        else:
            self._pending = actions
        self.waiting = True

    def _checked(self, actions) -> np.ndarray:
        """The actions, refused before any game (in any worker) moves: one integer per game, and
        legal where the game raises on illegal moves (the worker of that game says why not)."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, one per game, got an array of shape {actions.shape}")
        if self._local is None:  # in this process GameVector.step checks every game first itself
            if not np.issubdtype(actions.dtype, np.integer):
                self._call_some("check", [0], actions[0])
            legal = np.zeros(self.num_envs, bool)
            inside = np.flatnonzero((actions >= 0) & (actions < NUM_ACTIONS))
            legal[inside] = self._masks[inside, actions[inside]]
            illegal = np.flatnonzero(self._raising & ~legal)
            if illegal.size:
                self._call_some("check", illegal[:1].tolist(), actions[illegal[0]])
        return actions

    def step_wait(self):
        try:
            answers = [self._local.step(self._pending)] if self._local is not None else self._answers(range(self.workers))
        finally:
            self.waiting = False
        rewards = np.concatenate([a[0] for a in answers]).astype(np.float32)
        dones = np.concatenate([a[1] for a in answers])
        infos = [info for a in answers for info in a[2]]
        for g, a in enumerate(answers):
            for i, reset_info in a[3].items():
                self.reset_infos[self._slices[g].start + i] = reset_info
        return self._obs.copy(), rewards, dones, infos

    def reset(self):
        seeds = list(self._seeds) if self._seeds else [None] * self.num_envs
        options = list(self._options) if self._options else [{}] * self.num_envs
        options = [opt or None for opt in options]
        answers = self._call("reset", lambda g, rows: (seeds[rows], options[rows]))
        self.reset_infos = [info for a in answers for info in a]
        self._reset_seeds()
        self._reset_options()
        return self._obs.copy()

    def close(self) -> None:
        if self.closed:
            return
        if self._local is not None:
            self._local.close()
        else:
            if self.waiting:
                try:
                    self._answers(range(self.workers))
                except Exception:
                    pass
            for remote in self._remotes:
                try:
                    remote.send(("close", None))
                except (BrokenPipeError, OSError):
                    pass
            for process in self._processes:
                process.join(timeout=10)
                if process.is_alive():
                    process.kill()
        self.closed = True

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name == MASKS_METHOD and not method_args and not method_kwargs:
            return list(self._masks[self._get_indices(indices)].copy())
        return self._call_some("env_method", indices, method_name, method_args, method_kwargs)

    def get_attr(self, attr_name: str, indices=None) -> list:
        return self._call_some("get_attr", indices, attr_name)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        self._call_some("set_attr", indices, attr_name, value)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return self._call_some("env_is_wrapped", indices, wrapper_class)

    def get_images(self) -> Sequence[np.ndarray | None]:
        return self._call_some("env_method", None, "render", (), {})


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else a ``RuntimeError`` with its type, message and notes."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        notes = "".join(f"\n{note}" for note in getattr(exc, "__notes__", ()))
        return RuntimeError(f"{type(exc).__name__}: {exc}{notes}")


def _ordered_args(command: str, local: list[int], args: tuple) -> tuple:
    """The arguments of ``_Games.command`` with the local indices in their place."""
    if command == "env_method":
        name, method_args, method_kwargs = args
        return (name, local, method_args, method_kwargs)
    if command == "set_attr":
        name, value = args
        return (name, value, local)
    return (*args, local)
