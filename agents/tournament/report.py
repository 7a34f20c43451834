"""A tournament's results for people and files: text tables, CSV and JSON files, the win-rate heatmap."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

from .run import TournamentResult

PAIRING_COLUMNS = (
    "a",
    "b",
    "games",
    "a_wins",
    "b_wins",
    "draws",
    "a_win_rate",
    "ci_low",
    "ci_high",
    "mean_score_diff",
    "a_points_per_hand",
    "b_points_per_hand",
)
RATING_COLUMNS = (
    "rank",
    "agent",
    "rating",
    "rating_se",
    "games",
    "wins",
    "win_rate",
    "ci_low",
    "ci_high",
    "points_per_hand",
)


def _table(header: list[str], rows: list[list[str]], left: int) -> str:
    """Columns padded to width; the first ``left`` columns left-aligned, the rest right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_summary(result: TournamentResult) -> str:
    """A few lines: what was played and how fast."""
    c = result.config
    rules = c["rules"]
    count = len(c["lineups"])
    kind = {"pairs": "pairing", "teams": "team pairing", "groups": "group"}[c["schedule"]] + ("s" if count != 1 else "")
    mode = f"duplicate deals, blocks of {c['block_size']}" if c["duplicate"] else "a fresh deal every game"
    players = f"{rules['num_players']} players" + (" in partnerships" if rules["partnerships"] else "")
    lines = [
        f"{count} {kind} x {c['games_per_pairing']} games = {result.games} games, {result.hands} hands "
        f"({players}, target {rules['target_score']}, {mode}, seed {c['seed']})",
        f"played in {result.seconds:.2f} s with {c['workers']} worker{'s' if c['workers'] != 1 else ''}: "
        f"{result.games_per_s or 0:.1f} games/s",
    ]
    if c.get("resumed_games"):
        lines[-1] += f" ({c['resumed_games']} games kept from the earlier run, not timed)"
    if c["games_per_pairing"] != c["games_requested"]:
        lines.append(
            f"(--games {c['games_requested']} rounded up to {c['games_per_pairing']}: whole blocks of {c['block_size']})"
        )
    return "\n".join(lines)


def format_ratings(result: TournamentResult) -> str:
    """The ranked table: rank, agent, Elo rating (± standard error), games, game wins, game win rate."""
    rows = [
        [str(s["rank"]), s["agent"], f"{s['rating']:.0f}", f"±{s['rating_se']:.0f}", str(s["games"]), str(s["wins"]),
         _pct(s["win_rate"])]
        for s in result.ranked()
    ]
    return _table(["rank", "agent", "rating", "±se", "games", "wins", "win rate"], rows, left=2)


def format_pairings(result: TournamentResult) -> str:
    """The pairing table: a's results against b with the 95% interval, score difference and points per hand."""
    draws = any(p["draws"] for p in result.pairings)
    header = ["a", "b", "games", "a wins", *(["draws"] if draws else []), "b wins", "a win rate", "95% CI",
              "score diff", "pts/hand a", "pts/hand b"]
    rows = [
        [
            p["a"],
            p["b"],
            str(p["games"]),
            str(p["a_wins"]),
            *([str(p["draws"])] if draws else []),
            str(p["b_wins"]),
            _pct(p["a_win_rate"]),
            f"{100 * p['ci_low']:.1f}-{_pct(p['ci_high'])}",
            f"{p['mean_score_diff']:+.1f}",
            f"{p['a_points_per_hand']:.2f}",
            f"{p['b_points_per_hand']:.2f}",
        ]
        for p in result.pairings
    ]
    text = _table(header, rows, left=2)
    if result.config["schedule"] == "groups":
        text += (
            "\n(cut-throat: a \"win\" of a over b is finishing ahead of b; "
            + ("a repeated agent meets another once per seat it holds, so games counts those meetings; " if any(
                len(set(lineup)) < len(lineup) for lineup in result.config["lineups"]) else "")
            + "draws count half)"
        )
    return text


def format_report(result: TournamentResult) -> str:
    """Summary, ratings and pairings, ready to print."""
    return "\n\n".join([format_summary(result), format_ratings(result), format_pairings(result)])


def prepare_out_dir(path: str | os.PathLike) -> Path:
    """Create ``path`` (and parents) if needed; ``OSError``/``NotADirectoryError`` if it cannot hold files."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(f"{out} is not writable")
    return out


def write_csv(rows: list[dict], columns: tuple[str, ...], path: Path) -> None:
    """Rows as CSV with a header; floats with 6 decimals."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([f"{row[c]:.6f}" if isinstance(row[c], float) else row[c] for c in columns])


#: how to get the plots
PLOT_INSTALL = "pip install 'allfives[plot]'"


def win_rate_matrix(result: TournamentResult) -> list[list[float]]:
    """``m[i][j]``: the win rate of agent ``i`` against agent ``j`` (draws half), NaN where they did not meet."""
    names = result.config["agents"]
    index = {name: i for i, name in enumerate(names)}
    m = [[math.nan] * len(names) for _ in names]
    for p in result.pairings:
        i, j = index[p["a"]], index[p["b"]]
        m[i][j] = p["a_win_rate"]
        m[j][i] = 1 - p["a_win_rate"]
    return m


def plot_winrates(result: TournamentResult, path: str | os.PathLike) -> None:
    """A heatmap of pairwise win rates (row agent against column agent), agents in rating order, as PNG.
    Needs matplotlib (the ``plot`` extra): ``ImportError`` with the install line without it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"the win-rate plot needs matplotlib: {PLOT_INSTALL}") from None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = result.config["agents"]
    order = [names.index(s["agent"]) for s in result.ranked()]
    full = win_rate_matrix(result)
    m = [[full[i][j] for j in order] for i in order]
    labels = [names[i] for i in order]
    k = len(labels)
    size = max(4.0, 1.0 + 0.9 * k)
    fig = Figure(figsize=(size + 1.5, size))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    cmap = matplotlib.colormaps["RdYlGn"].copy()
    cmap.set_bad("#dddddd")
    image = ax.imshow(m, cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), labels, rotation=35, ha="right")
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(k):
        for j in range(k):
            if not math.isnan(m[i][j]):
                ax.text(j, i, f"{100 * m[i][j]:.0f}%", ha="center", va="center", fontsize=9)
    rules = result.config["rules"]
    ax.set_title(
        f"win rate of row agent vs column agent\n{rules['num_players']} players"
        + (" (partnerships)" if rules["partnerships"] else "")
        + f", {result.games} games",
        fontsize=10,
    )
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def can_plot() -> bool:
    """Whether matplotlib, which only the plots need (the ``plot`` extra), is installed."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def write_outputs(result: TournamentResult, out: str | os.PathLike) -> list[Path]:
    """Write ``results.json``, ``pairings.csv``, ``ratings.csv`` and ``winrates.png`` into ``out``; return the paths.
    Without matplotlib (``can_plot``) the plot is left out.

    (``games.jsonl`` is written while the games are played: ``run_tournament(records=...)``.)
    """
    out = Path(out)
    data = result.to_dict()
    paths = [out / "results.json", out / "pairings.csv", out / "ratings.csv", out / "winrates.png"]
    with open(paths[0], "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    write_csv(data["pairings"], PAIRING_COLUMNS, paths[1])
    write_csv(sorted(data["agents"], key=lambda s: s["rank"]), RATING_COLUMNS, paths[2])
    if not can_plot():
        return paths[:3]
    plot_winrates(result, paths[3])
    return paths
