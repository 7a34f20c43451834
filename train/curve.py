"""A run's learning curve: the win rate against each evaluated opponent by steps and by wall time,
from ``RUN/evals.jsonl``, drawn as ``RUN/learning_curve.png`` (matplotlib, the ``plot`` extra that
``train`` brings) and kept as points in the run's card."""

from __future__ import annotations

import os
from pathlib import Path

from . import history

CURVE_PNG = "learning_curve.png"


def points(run_dir) -> list[dict]:
    """One point per evaluation, in step order: ``{"steps", "wall_seconds" (None for rows of older
    runs), "win_rates": {opponent: [rate, ci_low, ci_high]}}``."""
    rows, _ = history.read_rows(Path(run_dir) / history.EVALS)
    out = []
    for _, row in sorted(rows, key=lambda item: item[1]["steps"]):
        results = row.get("results") or {}
        out.append({
            "steps": row["steps"],
            "wall_seconds": row.get("wall_seconds"),
            "win_rates": {name: [r["a_win_rate"], r["ci_low"], r["ci_high"]] for name, r in results.items()},
        })
    return out


def draw(curve: list[dict], path: str | os.PathLike, title: str = "") -> bool:
    """Draws ``curve`` (``points``) as a PNG: win rate with its 95% interval by steps, and by wall
    time where the rows have it. ``False`` (nothing written) without matplotlib or points."""
    if not curve:
        return False
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return False
    timed = all(p["wall_seconds"] is not None for p in curve)
    axes_x = [("steps", "learner steps", 1.0)] + ([("wall_seconds", "wall time (minutes)", 60.0)] if timed else [])
    fig = Figure(figsize=(4.2 * len(axes_x) + 0.6, 3.4), dpi=100)
    FigureCanvasAgg(fig)
    opponents = sorted({name for p in curve for name in p["win_rates"]})
    for k, (key, label, unit) in enumerate(axes_x):
        ax = fig.add_subplot(1, len(axes_x), k + 1)
        for name in opponents:
            pts = [(p[key] / unit, *p["win_rates"][name]) for p in curve if name in p["win_rates"]]
            xs = [x for x, *_ in pts]
            line, = ax.plot(xs, [r for _, r, _, _ in pts], marker="o", markersize=3, label=f"vs {name}")
            ax.fill_between(xs, [lo for *_, lo, _ in pts], [hi for *_, hi in pts], color=line.get_color(), alpha=0.15)
        ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        ax.set_ylim(0, 1)
        ax.set_xlabel(label)
        if key == "steps":
            ax.xaxis.set_major_formatter(FuncFormatter(_short))
        ax.set_ylabel("win rate (95% interval)")
        ax.grid(alpha=0.3)
        if k == 0:
            ax.legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.fspath(path))
    return True


def _short(x: float, _pos=None) -> str:
    """Step counts on an axis: 250k, 1.5M."""
    if abs(x) >= 1e6:
        return f"{x / 1e6:g}M"
    return f"{x / 1e3:g}k" if abs(x) >= 1e3 else f"{x:g}"


def write(run_dir, title: str = "") -> list[dict]:
    """The run's ``points``, drawn to ``RUN/learning_curve.png`` where matplotlib is installed."""
    curve = points(run_dir)
    draw(curve, Path(run_dir) / CURVE_PNG, title)
    return curve
