"""The opponent pool of self-play: heuristic agents plus frozen snapshots of the learner.

Snapshots are the learner's actor saved as ``.npz`` (numpy only; the SB3 trainer) or as ONNX
(the RLlib trainer), so the environment processes load them in milliseconds without torch. The
pool hands the environments agent specs (``greedy``, ``ppo:runs/x/pool/snap_000050000.npz``,
``onnx:runs/y/pool/snap_000050000.onnx``) with their sampling weights: the heuristics
keep their configured weights and ``self_play`` is shared evenly by the snapshots kept. A resume
loads each snapshot once before any process starts (``check_snapshots``), so a damaged or replaced
file is one error naming it rather than a traceback in every environment's process.
"""

from __future__ import annotations

import os
from pathlib import Path

from allfives_agents.nets.policy import NumpyPolicy


class OpponentPool:
    """Heuristic specs with weights, and up to ``max_snapshots`` learner snapshots (oldest dropped)."""

    def __init__(self, heuristics: dict[str, float], self_play: float, max_snapshots: int, directory) -> None:
        self.heuristics = {spec: float(w) for spec, w in heuristics.items() if w > 0}
        self.self_play = float(self_play)
        self.max_snapshots = max_snapshots
        self.directory = Path(directory)
        self.snapshots: list[str] = []

    def entries(self) -> tuple[list[str], list[float]]:
        """Agent specs and their (unnormalised) weights, as the environments take them."""
        specs = list(self.heuristics)
        weights = list(self.heuristics.values())
        if self.snapshots and self.self_play > 0:
            share = self.self_play / len(self.snapshots)
            specs += [snapshot_spec(path) for path in self.snapshots]
            weights += [share] * len(self.snapshots)
        return specs, weights

    def add_snapshot(self, policy: NumpyPolicy, steps: int, suffix: str = ".npz") -> str | None:
        """Save the learner's actor (``policy.save(path)``) and add it to the pool; returns its path (None if
        snapshots are off). ``suffix``: ``.npz`` (a ``NumpyPolicy``, the ``ppo`` agent) or ``.onnx`` (an
        exported graph, the ``onnx`` agent)."""
        if self.max_snapshots <= 0 or self.self_play <= 0:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        path = str(self.directory / f"snap_{steps:010d}{suffix}")
        policy.save(path)
        self.snapshots.append(path)
        while len(self.snapshots) > self.max_snapshots:
            old = self.snapshots.pop(0)
            try:
                os.remove(old)
            except OSError:
                pass
        return path

    def state(self) -> dict:
        return {"snapshots": list(self.snapshots)}

    def restore(self, state: dict) -> None:
        """Take back the snapshots of a checkpoint (those whose files still exist)."""
        self.snapshots = [p for p in state.get("snapshots", []) if os.path.exists(p)]


def snapshot_spec(path: str) -> str:
    """The agent spec that plays a snapshot: ``ppo:PATH`` (``.npz``) or ``onnx:PATH``."""
    return f"{'onnx' if path.endswith('.onnx') else 'ppo'}:{path}"


def check_snapshots(paths) -> None:
    """``CheckpointError`` naming the first snapshot (of those still there) that its agent cannot
    load: a damaged file, a pickle or an object array in place of the weights (never unpickled)."""
    from allfives_agents import AgentSpec, make_agent

    from .checkpoint import CheckpointError

    for path in filter(os.path.exists, paths):
        try:
            make_agent(AgentSpec.parse(snapshot_spec(path)))
        except Exception as exc:  # whatever the file holds, it is not a snapshot
            reason = " ".join(str(exc).split())[:200]
            raise CheckpointError(f"pool snapshot {path} cannot be loaded ({type(exc).__name__}: {reason}); "
                                  "delete it to resume without it") from None
