"""Evaluate a policy against baseline agents with duplicate games (through the tournament code)."""

from __future__ import annotations

import os
import tempfile

from allfives_agents import Agent
from allfives_agents.tournament import run_tournament

from .checkpoint import atomic_write

#: the final evaluation plays the deals of ``seed + FINAL_SEED_OFFSET`` (``seed``: the run's)
FINAL_SEED_OFFSET = 424242


def evaluate(agent: Agent | str, opponents: list[str], rules, games: int, seed: int, workers: int = 1) -> list[dict]:
    """One duplicate match per opponent; per opponent the pairing seen from ``agent``.

    With ``workers > 1`` the games run in processes: ``agent`` is then a spec string (``ppo:PATH``)
    or an agent with a numpy ``policy`` (``PPOAgent``), which is saved to a temporary ``.npz``.
    """
    if workers > 1 and not isinstance(agent, str) and hasattr(getattr(agent, "policy", None), "save"):
        with tempfile.TemporaryDirectory(prefix="allfives-eval-") as folder:
            path = os.path.join(folder, "learner.npz")
            agent.policy.save(path)
            return evaluate(f"ppo:{path}", opponents, rules, games, seed, workers)
    rows = []
    for i, opponent in enumerate(opponents):
        result = run_tournament([agent, opponent], rules, games=games, seed=seed + 7919 * i, duplicate=True, workers=workers)
        me, them = result.config["agents"]  # labels, e.g. "greedy#2" when both share a name
        row = result.pairing(me, them)
        row["opponent"] = opponent
        rows.append(row)
    return rows


def format_table(rows: list[dict], title: str = "evaluation") -> str:
    """A fixed-width table: opponent, games, wins, win rate with its 95% CI, mean score difference."""
    lines = [
        title,
        f"{'opponent':<24} {'games':>6} {'wins':>6} {'win rate':>9} {'95% CI':>17} {'score diff':>11}",
    ]
    for r in rows:
        ci = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(
            f"{r['opponent']:<24} {r['games']:>6} {r['a_wins']:>6} {r['a_win_rate']:>9.3f} {ci:>17} {r['mean_score_diff']:>11.1f}"
        )
    return "\n".join(lines)


def final_evaluation(agent: Agent | str, cfg, rules, run_dir, label) -> list[dict]:
    """A run's final evaluation (either trainer): ``cfg.eval.final_games`` duplicate games against
    each of ``cfg.eval.opponents``; the table is printed and written to ``RUN/eval.txt``."""
    rows = evaluate(agent, cfg.eval.opponents, rules, cfg.eval.final_games, seed=cfg.seed + FINAL_SEED_OFFSET, workers=cfg.eval.workers)
    table = format_table(rows, f"final evaluation of {label} ({cfg.eval.final_games} duplicate games each)")
    print(table)
    atomic_write(run_dir / "eval.txt", (table + "\n").encode())
    return rows


#: what a run's card keeps of each final-evaluation row
CARD_FIELDS = ("opponent", "games", "a_wins", "a_win_rate", "ci_low", "ci_high", "mean_score_diff")


def card_rows(rows: list[dict]) -> list[dict]:
    """The final evaluation's rows as a run's card keeps them (``CARD_FIELDS``)."""
    return [{k: r[k] for k in CARD_FIELDS} for r in rows]
