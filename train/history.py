"""A run's evaluations, ``RUN/evals.jsonl`` and ``RUN/best.zip``, kept in step with its checkpoints.

An evaluation appends its row to ``evals.jsonl`` at once; a new best model goes to
``checkpoints/best.pending.zip`` and becomes ``best.zip`` only once a checkpoint holding that
evaluation is written (``commit_best``). A run killed between an evaluation and its checkpoint
resumes from the checkpoint before, so ``rewind`` takes it back there first: rows past the
checkpoint's step go (they would be evaluated again, by another model), as does a partial last
row of a write that was killed; the pending best is taken up if the checkpoint counts it and
dropped if not, and a ``best.zip`` of another branch goes (runs of older versions wrote it at once).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from allfives_agents.nets.policy import METADATA_NAME

from .checkpoint import CHECKPOINT_DIR, CheckpointError, atomic_write

EVALS = "evals.jsonl"
BEST = "best.zip"
PENDING = "best.pending.zip"


def append_row(run_dir, row: dict) -> None:
    """Append an evaluation's row (one JSON line)."""
    with open(Path(run_dir) / EVALS, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def pending_best(run_dir) -> Path:
    """Where a new best model waits for the next checkpoint (``save_model`` writes it atomically)."""
    directory = Path(run_dir) / CHECKPOINT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    return directory / PENDING


def commit_best(run_dir) -> None:
    """After a checkpoint: the pending best model, if any, becomes ``best.zip``."""
    pending = Path(run_dir) / CHECKPOINT_DIR / PENDING
    if pending.exists():
        os.replace(pending, Path(run_dir) / BEST)


def rewind(run_dir, steps: int, tracker: dict) -> None:
    """Take the evaluations back to a checkpoint of step ``steps`` whose evaluation ``tracker``
    (``best``, ``best_steps``) is given; ``tracker`` is reset when its best model is gone."""
    run_dir = Path(run_dir)
    rows, partial = read_rows(run_dir / EVALS)
    kept = [line for line, row in rows if row["steps"] <= steps]
    if partial or len(kept) < len(rows):
        atomic_write(run_dir / EVALS, "".join(kept).encode())
        dropped = len(rows) - len(kept)
        print(f"{EVALS}: kept the {len(kept)} evaluations up to step {steps}"
              + (f", dropped {dropped} made after it" if dropped else "") + (", dropped a partial last line" if partial else ""))
    pending = run_dir / CHECKPOINT_DIR / PENDING
    if pending.exists():
        if best_steps(pending) == tracker.get("best_steps"):
            commit_best(run_dir)
        else:
            pending.unlink()
    best = run_dir / BEST
    if best.exists() and (found := best_steps(best)) != tracker.get("best_steps"):
        best.unlink()
        print(f"{BEST} was the model of step {found}, not the best the checkpoint of step {steps} knows: removed")
    if not best.exists() and tracker.get("best_steps") is not None:
        tracker.update(best=-1.0, best_steps=None)  # the next evaluation makes a new best


def check_rows(run_dir) -> None:
    """``CheckpointError`` naming ``evals.jsonl`` and its line when a row other than a partial last
    one is unreadable (a partial last line is a killed write, which ``rewind`` repairs)."""
    read_rows(Path(run_dir) / EVALS)


def read_rows(path: Path) -> tuple[list[tuple[str, dict]], bool]:
    """The rows of ``evals.jsonl`` (each line and its row), and whether a partial last line follows them."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], False
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path} cannot be read ({exc})") from None
    lines = text.splitlines(keepends=True)
    partial = bool(lines) and not lines[-1].endswith("\n")
    rows = []
    for number, line in enumerate(lines[:-1] if partial else lines, 1):
        try:
            row = json.loads(line)
            if not isinstance(row.get("steps"), int):
                raise ValueError("no integer steps")
        except (ValueError, AttributeError) as exc:
            raise CheckpointError(f"{path} line {number} is not an evaluation row ({exc}): repair or remove it") from None
        rows.append((line, row))
    return rows, partial


def best_steps(path: Path) -> int | None:
    """The step of a best model (its ``allfives.json``); ``None`` if the file does not say."""
    try:
        with zipfile.ZipFile(path) as zf:
            steps = json.loads(zf.read(METADATA_NAME)).get("steps")
    except (OSError, KeyError, ValueError, AttributeError, zipfile.BadZipFile):
        return None
    return steps if isinstance(steps, int) else None
