"""Checkpoints written atomically, and resuming from the latest one.

A checkpoint is two files in ``RUN/checkpoints/``: ``step_N.zip`` (the SB3 model with its
optimizer and step count) and ``step_N.state.pkl`` (pool, best score so far, random generator
states); ``latest.json`` names the newest pair and is replaced last, so a run killed while writing
still resumes from the previous complete checkpoint. Every file is written to a temporary name,
flushed to disk, then renamed.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import zipfile
from pathlib import Path

import numpy as np

CHECKPOINT_DIR = "checkpoints"
LATEST = "latest.json"


class CheckpointError(RuntimeError):
    """A checkpoint that is missing or cannot be read; the message names the file."""


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the whole new one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def rng_state() -> dict:
    import torch

    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(run_dir, model, extra: dict, keep: int = 3) -> Path:
    """Save the model and ``extra`` (plus RNG states) at the model's step; keep the newest ``keep``."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    steps = int(model.num_timesteps)
    stem = f"step_{steps:010d}"
    buffer = io.BytesIO()
    model.save(buffer)
    atomic_write(directory / f"{stem}.zip", buffer.getvalue())
    state = dict(extra, steps=steps, rng=rng_state())
    atomic_write(directory / f"{stem}.state.pkl", pickle.dumps(state))
    atomic_write(directory / LATEST, json.dumps({"steps": steps, "model": f"{stem}.zip", "state": f"{stem}.state.pkl"}).encode())
    stems = sorted({p.name.split(".")[0] for p in directory.glob("step_*.zip")})
    for old in stems[:-keep]:
        for suffix in (".zip", ".state.pkl"):
            try:
                (directory / f"{old}{suffix}").unlink()
            except FileNotFoundError:
                pass
    return directory / f"{stem}.zip"


def latest_checkpoint(run_dir) -> tuple[Path, Path, int]:
    """Paths of the newest checkpoint's model and state, and its step; ``CheckpointError`` if none."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    pointer = directory / LATEST
    if not pointer.exists():
        raise CheckpointError(f"nothing to resume: no checkpoint in {directory} (missing {pointer.name})")
    try:
        info = json.loads(pointer.read_text())
        model, state, steps = directory / info["model"], directory / info["state"], int(info["steps"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"checkpoint index {pointer} is corrupt ({type(exc).__name__}: {exc})") from None
    for path in (model, state):
        if not path.exists():
            raise CheckpointError(f"checkpoint file missing: {path} (named by {pointer})")
    return model, state, steps


def load_state(path: Path) -> dict:
    """The ``extra`` dict saved with a checkpoint (RNG states included)."""
    try:
        with open(path, "rb") as f:
            state = pickle.load(f)
        if not isinstance(state, dict) or "steps" not in state:
            raise ValueError("not a checkpoint state")
        return state
    except Exception as exc:  # truncated pickles raise several kinds
        raise CheckpointError(f"checkpoint state {path} is corrupt ({type(exc).__name__}: {exc})") from None


def load_model(path: Path, env, device: str, **kwargs):
    """``MaskablePPO.load`` with a clear error for a damaged file."""
    from sb3_contrib import MaskablePPO

    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
        if bad is not None:
            raise ValueError(f"damaged member {bad}")
        return MaskablePPO.load(path, env=env, device=device, **kwargs)
    except Exception as exc:
        raise CheckpointError(f"checkpoint {path} is corrupt ({type(exc).__name__}: {exc})") from None
