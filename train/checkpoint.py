"""Checkpoints written atomically, and resuming from the latest one without unpickling anything.

A checkpoint is three files in ``RUN/checkpoints/``:

- ``step_N.zip``: the SB3 model (weights, optimizer, step count);
- ``step_N.state.json``: ``steps``, the opponent pool (``pool.snapshots``: paths relative to the
  run directory), the evaluation ``tracker`` and the recent ``episodes`` SB3 logs from;
- ``step_N.rng.npz``: the random generator states as arrays (python's ``random``, numpy's global
  generator, torch's CPU generator), read with ``allow_pickle=False``.

``latest.json`` names the newest three and is replaced last, so a run killed while writing still
resumes from the previous complete checkpoint. Every file is written to a temporary name, flushed
to disk, then renamed, the state last of the three; the newest ``keep`` checkpoints are kept. A run
killed while writing its first ``latest.json`` resumes from the newest checkpoint whose three files
are all there (``resume_point``). The step latest.json gives, the state's and the model's must agree.

Reading never runs code from the files: the state is JSON, the arrays come from ``.npz`` without
pickles, ``torch.load`` (inside SB3) runs with ``weights_only=True``, and every object SB3 would
unpickle from the model's ``data`` member is replaced by one the trainer builds itself
(``load_model``); a model with any other pickled member is refused. The files latest.json names
must lie inside the checkpoints directory, and pool snapshots inside the run directory. Legacy
``step_N.state.pkl`` files are refused, not read.
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import zipfile
from collections import deque
from pathlib import Path
from typing import NamedTuple

import numpy as np

CHECKPOINT_DIR = "checkpoints"
LATEST = "latest.json"
#: what each checkpoint file ends with, by its key in latest.json
SUFFIXES = {"model": ".zip", "state": ".state.json", "rng": ".rng.npz"}
#: files of older versions, removed with their checkpoint
LEGACY_SUFFIXES = (".state.pkl",)
#: keys of the tracker saved in the state (numbers, or null)
TRACKER_KEYS = ("best", "best_steps", "evals", "wall_seconds")
#: members of an SB3 model's ``data`` that SB3 would unpickle; ``load_model`` supplies each itself
MODEL_OBJECTS = (
    "policy_class", "policy_kwargs", "observation_space", "action_space", "learning_rate", "lr_schedule",
    "clip_range", "clip_range_vf", "rollout_buffer_class", "rollout_buffer_kwargs", "action_noise",
    "_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer", "ep_success_buffer",
)


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, unsafe or cannot be read; the message names the file."""


class Checkpoint(NamedTuple):
    """The files of one checkpoint, as latest.json names them, and its step."""

    model: Path
    state: Path
    rng: Path
    steps: int
    #: the latest.json that names it; ``None`` for one found on disk without it (its step from its names)
    index: Path | None = None


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt included: leave no half-written temporary
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# random generators -------------------------------------------------------------------------------


def rng_state() -> dict:
    """The states of python's ``random``, numpy's global generator and torch's CPU generator."""
    import torch

    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict) -> None:
    """Put back what ``rng_state`` (or ``load_state(...)["rng"]``) returned."""
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(torch.as_tensor(state["torch"], dtype=torch.uint8))


def _rng_arrays(state: dict) -> dict[str, np.ndarray]:
    version, internal, gauss_next = state["python"]
    _, keys, pos, has_gauss, cached = state["numpy"]
    return {
        "python_version": np.array(version, dtype=np.int64),
        "python_state": np.array(internal, dtype=np.uint32),
        "python_gauss_next": np.array([] if gauss_next is None else [gauss_next], dtype=np.float64),
        "numpy_keys": np.asarray(keys, dtype=np.uint32),
        "numpy_pos": np.array(pos, dtype=np.int64),
        "numpy_has_gauss": np.array(has_gauss, dtype=np.int64),
        "numpy_cached_gaussian": np.array(cached, dtype=np.float64),
        "torch": np.asarray(state["torch"].numpy(), dtype=np.uint8),
    }


def _rng_from_arrays(arrays) -> dict:
    """The states from the ``.npz`` arrays, each tried on a scratch generator (``ValueError`` if bad)."""
    import torch

    def scalar(name, kind):
        value = arrays[name]
        if value.shape != ():
            raise ValueError(f"{name} must be a scalar")
        return kind(value)

    gauss = arrays["python_gauss_next"]
    if gauss.ndim != 1 or len(gauss) > 1:
        raise ValueError("python_gauss_next must hold at most one number")
    python = (scalar("python_version", int), tuple(int(x) for x in arrays["python_state"]), float(gauss[0]) if len(gauss) else None)
    numpy = ("MT19937", arrays["numpy_keys"].astype(np.uint32), scalar("numpy_pos", int), scalar("numpy_has_gauss", int), scalar("numpy_cached_gaussian", float))
    torch_state = arrays["torch"]
    if torch_state.dtype != np.uint8 or torch_state.ndim != 1:
        raise ValueError("torch must be a 1-d uint8 array")
    random.Random().setstate(python)
    np.random.RandomState().set_state(numpy)
    torch.Generator().set_state(torch.as_tensor(torch_state))
    return {"python": python, "numpy": numpy, "torch": torch_state.copy()}


# saving ------------------------------------------------------------------------------------------


def _relative_to_run(path, run_dir: Path) -> str:
    if not _inside(Path(path), run_dir):
        raise ValueError(f"pool snapshot {path} is outside the run directory {run_dir}")
    return Path(path).resolve().relative_to(run_dir.resolve()).as_posix()


def _plain(value):
    """numpy scalars as Python numbers, for JSON."""
    return value.item() if isinstance(value, np.generic) else value


def save_checkpoint(run_dir, model, extra: dict, keep: int = 3) -> Path:
    """Save the model, ``extra`` (``pool`` and ``tracker``) and the RNG states at the model's step.

    Keeps the newest ``keep`` checkpoints and removes temporaries a killed run left behind."""
    run_dir = Path(run_dir)
    directory = run_dir / CHECKPOINT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.tmp"):
        stale.unlink(missing_ok=True)
    steps = int(model.num_timesteps)
    stem = f"step_{steps:010d}"
    names = {key: f"{stem}{suffix}" for key, suffix in SUFFIXES.items()}

    buffer = io.BytesIO()
    model.save(buffer)
    atomic_write(directory / names["model"], buffer.getvalue())
    buffer = io.BytesIO()
    np.savez(buffer, **_rng_arrays(rng_state()))
    atomic_write(directory / names["rng"], buffer.getvalue())
    pool = dict(extra.get("pool", {}))
    pool["snapshots"] = [_relative_to_run(p, run_dir) for p in pool.get("snapshots", [])]
    episodes = {
        "info": [{k: _plain(v) for k, v in e.items()} for e in getattr(model, "ep_info_buffer", None) or ()],
        "success": [_plain(v) for v in getattr(model, "ep_success_buffer", None) or ()],
    }
    state = dict(extra, steps=steps, pool=pool, episodes=episodes)
    atomic_write(directory / names["state"], json.dumps(state, indent=1).encode())
    atomic_write(directory / LATEST, json.dumps({"steps": steps, **names}).encode())

    stems = sorted({p.name.split(".")[0] for p in directory.glob("step_*.zip")})
    for old in stems[:-keep]:
        for suffix in (*SUFFIXES.values(), *LEGACY_SUFFIXES):
            (directory / f"{old}{suffix}").unlink(missing_ok=True)
    return directory / names["model"]


# loading -----------------------------------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def latest_checkpoint(run_dir) -> Checkpoint:
    """The newest checkpoint's files and step; ``CheckpointError`` if none, or if latest.json is
    damaged, names a file outside the checkpoints directory, a missing file or a legacy pickle."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    pointer = directory / LATEST
    if not pointer.exists():
        raise CheckpointError(f"nothing to resume: no checkpoint in {directory} (missing {pointer.name})")
    try:
        info = json.loads(pointer.read_text(encoding="utf-8"))
        steps = info["steps"]
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
        if isinstance(info["state"], str) and info["state"].endswith(LEGACY_SUFFIXES):
            raise CheckpointError(
                f"checkpoint state {directory / info['state']} is a pickle written by an older version; "
                "it is not loaded because unpickling a file can run code: start a new run"
            )
        names = {key: info[key] for key in SUFFIXES}
    except CheckpointError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"checkpoint index {pointer} is corrupt ({type(exc).__name__}: {exc})") from None
    paths = {}
    for key, name in names.items():
        if not isinstance(name, str) or not name.endswith(SUFFIXES[key]):
            raise CheckpointError(f"checkpoint index {pointer} is corrupt: {key} must name a {SUFFIXES[key]} file, got {name!r}")
        path = directory / name
        if not _inside(path, directory):
            raise CheckpointError(f"checkpoint index {pointer} names {name!r}, outside {directory}: refused")
        if not path.is_file():
            raise CheckpointError(f"checkpoint file missing: {path} (named by {pointer})")
        paths[key] = path
    return Checkpoint(paths["model"], paths["state"], paths["rng"], steps, pointer)


def resume_point(run_dir) -> Checkpoint | None:
    """The checkpoint a resume continues from: the one latest.json names or, without latest.json (a
    run stopped while it wrote its first), the newest complete one on disk; ``None`` if there is none."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    if (directory / LATEST).exists():
        return latest_checkpoint(run_dir)
    return newest_complete(directory)


def newest_complete(directory: Path) -> Checkpoint | None:
    """The newest checkpoint in ``directory`` whose three files are all there (each is written whole
    or not at all, the state last); its step is the one of its names."""
    for state in sorted(directory.glob("step_*" + SUFFIXES["state"]), reverse=True):
        stem = state.name[: -len(SUFFIXES["state"])]
        model, rng = directory / f"{stem}{SUFFIXES['model']}", directory / f"{stem}{SUFFIXES['rng']}"
        if re.fullmatch(r"step_\d{10}", stem) and model.is_file() and rng.is_file():
            return Checkpoint(model, state, rng, int(stem[5:]))
    return None


def _number(value, nullable: bool = False) -> bool:
    if value is None:
        return nullable
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _read_state(path: Path, run_dir: Path) -> dict:
    """The JSON state, checked key by key; ``ValueError`` says what is wrong."""
    state = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(state, dict):
        raise ValueError("not a JSON object")
    steps = state.get("steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    pool = state.get("pool", {})
    snapshots = pool.get("snapshots", []) if isinstance(pool, dict) else None
    if not isinstance(snapshots, list):
        raise ValueError("pool.snapshots must be a list")
    restored = []
    for snap in snapshots:
        if not isinstance(snap, str) or Path(snap).is_absolute() or not snap.endswith(".npz") or not _inside(run_dir / snap, run_dir):
            raise ValueError(f"pool snapshot {snap!r} must be a .npz file given relative to, and inside, the run directory")
        restored.append(str(run_dir / snap))
    tracker = state.get("tracker", {})
    if not isinstance(tracker, dict) or any(k not in TRACKER_KEYS or not _number(v, nullable=True) for k, v in tracker.items()):
        raise ValueError(f"tracker must map {', '.join(TRACKER_KEYS)} to numbers")
    episodes = state.get("episodes", {})
    info = episodes.get("info", []) if isinstance(episodes, dict) else None
    success = episodes.get("success", []) if isinstance(episodes, dict) else None
    if not isinstance(info, list) or not all(isinstance(e, dict) and all(_number(v) for v in e.values()) for e in info):
        raise ValueError("episodes.info must be a list of mappings to numbers")
    if not isinstance(success, list) or not all(isinstance(s, (bool, int, float)) for s in success):
        raise ValueError("episodes.success must be a list of numbers")
    return {"steps": steps, "pool": dict(pool, snapshots=restored), "tracker": tracker, "episodes": {"info": info, "success": success}}


def load_state(checkpoint: Checkpoint, run_dir) -> dict:
    """``steps``, ``pool``, ``tracker``, ``episodes`` and ``rng`` of a checkpoint, all checked.

    Pool snapshot paths come back joined to ``run_dir``. ``CheckpointError`` names a damaged file."""
    run_dir = Path(run_dir)
    try:
        state = _read_state(checkpoint.state, run_dir)
    except (ValueError, TypeError, AttributeError, UnicodeDecodeError, OSError) as exc:
        raise CheckpointError(f"checkpoint state {checkpoint.state} is corrupt ({type(exc).__name__}: {exc})") from None
    if state["steps"] != checkpoint.steps:
        raise CheckpointError(f"checkpoint state {checkpoint.state} says steps {state['steps']}, but {_step_source(checkpoint)} says "
                              f"{checkpoint.steps}: the checkpoint's files disagree, refused")
    try:
        with np.load(checkpoint.rng, allow_pickle=False) as arrays:
            state["rng"] = _rng_from_arrays(arrays)
    except Exception as exc:  # zip, npy-format, missing-array and generator errors all mean a bad file
        raise CheckpointError(f"checkpoint random states {checkpoint.rng} are corrupt ({type(exc).__name__}: {exc})") from None
    return state


def _step_source(checkpoint: Checkpoint) -> str:
    """What gave a checkpoint its step: its latest.json, or its file names."""
    return str(checkpoint.index) if checkpoint.index is not None else f"its file name {checkpoint.state.name}"


def model_data(path: Path) -> dict:
    """The ``data`` member of an SB3 zip (JSON); ``CheckpointError`` for a damaged zip."""
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            if bad is not None:
                raise ValueError(f"damaged member {bad}")
            data = json.loads(zf.read("data"))
        if not isinstance(data, dict):
            raise ValueError("its data is not a JSON object")
    except Exception as exc:  # zipfile, key, JSON and decoding errors all mean a bad file
        raise CheckpointError(f"checkpoint {path} is corrupt ({type(exc).__name__}: {exc})") from None
    return data


def pickled_members(path: Path) -> list[str]:
    """Keys of an SB3 zip's ``data`` that SB3 would unpickle; ``CheckpointError`` for a damaged zip."""
    return _pickled(model_data(path))


def _pickled(data: dict) -> list[str]:
    return [key for key, value in data.items() if isinstance(value, dict) and ":serialized:" in value]


def check_model(path: Path, checkpoint: Checkpoint | None = None) -> None:
    """A readable model zip whose pickled members are all ones ``load_model`` replaces and, given the
    ``checkpoint`` it belongs to, whose step count is the checkpoint's."""
    data = model_data(path)
    unknown = [key for key in _pickled(data) if key not in MODEL_OBJECTS]
    if unknown:
        raise CheckpointError(f"checkpoint {path} holds pickled objects the trainer does not know ({', '.join(unknown)}): refused, as unpickling can run code")
    steps = data.get("num_timesteps")
    if checkpoint is not None and steps != checkpoint.steps:
        raise CheckpointError(f"checkpoint {path} is a model of step {steps}, but {_step_source(checkpoint)} says {checkpoint.steps}: "
                              "the checkpoint's files disagree, refused")


def load_model(path: Path, env, device: str, policy_class, policy_kwargs: dict, ppo: dict, episodes: dict | None = None, **kwargs):
    """``MaskablePPO.load`` that unpickles nothing: every object SB3 keeps pickled in the zip is
    built here from the run's config (``policy_class``, ``policy_kwargs``, the ``ppo`` values), the
    environment and the saved ``episodes``. ``CheckpointError`` for a damaged or unknown file."""
    import inspect

    from sb3_contrib import MaskablePPO

    check_model(path)
    defaults = {k: p.default for k, p in inspect.signature(MaskablePPO.__init__).parameters.items()}
    values = {**defaults, **ppo}
    episodes = episodes or {}
    window = values["stats_window_size"]
    objects = {
        "policy_class": policy_class,
        "policy_kwargs": dict(policy_kwargs),
        "observation_space": env.observation_space,
        "action_space": env.action_space,
        "learning_rate": values["learning_rate"],
        "lr_schedule": None,  # rebuilt from learning_rate when the model is set up
        "clip_range": values["clip_range"],
        "clip_range_vf": values["clip_range_vf"],
        "rollout_buffer_class": values["rollout_buffer_class"],
        "rollout_buffer_kwargs": {},
        "action_noise": None,
        "_last_obs": None,  # the environments restart their episodes
        "_last_episode_starts": None,
        "_last_original_obs": None,
        "ep_info_buffer": deque(episodes.get("info", []), maxlen=window),
        "ep_success_buffer": deque(episodes.get("success", []), maxlen=window),
    }
    assert set(objects) == set(MODEL_OBJECTS)
    try:
        return MaskablePPO.load(path, env=env, device=device, custom_objects=objects, **kwargs)
    except Exception as exc:
        raise CheckpointError(f"checkpoint {path} is corrupt ({type(exc).__name__}: {exc})") from None
