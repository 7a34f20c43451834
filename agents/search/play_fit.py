"""Fit a model of play to a player's records: the ``expert`` weights that make its choices likeliest.

Opponent modelling from what a player was seen to do. Every placement the player chose among two
or more moves in the records (replayed through the engine: ``replay_positions``) is one
observation; the model is ``expert`` with other weights, a conditional logit over its terms
(``ExpertAgent.terms``): the chance of a move is ``exp(score / scale)`` over the moves allowed,
``score`` the move's ``expert`` score under the weights. The weights that maximise the likelihood
of the recorded choices, less an L2 penalty (which keeps them finite when the choices are all
explained, as they are for a deterministic player), are found by Newton's method (the problem is
concave); the fitted weights are rescaled so that ``points`` is 1, as in ``expert``, and the factor
taken out is the model's ``scale``: its chance of each move is ``softmax(scale * score)``
(``PlayModel.chances``). The model plays as ``expert`` does, its best move.

A fitted model is a JSON file (``allfives-play-model/1``: the weights, the scale, the player and the
fit's figures) that ``ismcts:belief=expert,bweights=FILE`` takes as the model of the other sides' play
(and ``opp=model`` as their moves in the search), and ``bpartner=FILE`` as the model of a partner's
choices, by their chances. ``allfives fit-play`` writes one.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from allfives_env.engine.events import play_end
from allfives_env.engine.files import MODEL_OF_PLAY_MAX_BYTES, refusal
from allfives_env.engine.record import read_records, replay_positions, replay_record
from allfives_env.engine.tiles import action_id

from ..expert import DEFAULT_WEIGHTS, ExpertAgent

FORMAT = "allfives-play-model/1"
#: the weights fitted, in the order of ``ExpertAgent.terms``
TERMS = tuple(DEFAULT_WEIGHTS)


class PlayModelError(ValueError):
    """A play model file or a fit that cannot be used; the message names the file and the problem."""


class Choices:
    """The recorded choices of one player: per choice, the rows of its moves' terms and the chosen row."""

    def __init__(self) -> None:
        self.fixed: list[float] = []  # per move: the part of the score no weight scales
        self.terms: list[list[float]] = []  # per move: the terms
        self.starts: list[int] = []  # per choice: its first move's row
        self.chosen: list[int] = []  # per choice: the chosen move's row
        self.games = 0

    def __len__(self) -> int:
        return len(self.starts)

    def add(self, view, action: int) -> None:
        """One choice: ``action`` from ``view`` (ignored when it was the only legal move)."""
        legal = view.legal_actions
        if len(legal) < 2:
            return
        fixed, rows = _TERMS.terms(view)
        self.starts.append(len(self.terms))
        self.chosen.append(len(self.terms) + legal.index(action))
        self.fixed += fixed
        self.terms += rows

    def split(self, fraction: float, seed: int) -> tuple["Choices", "Choices"]:
        """Two sets of the choices, at random: about ``1 - fraction`` of them and the rest."""
        rng = random.Random(seed)
        parts = (Choices(), Choices())
        ends = self.starts[1:] + [len(self.terms)]
        for start, end, chosen in zip(self.starts, ends, self.chosen):
            part = parts[rng.random() < fraction]
            part.starts.append(len(part.terms))
            part.chosen.append(len(part.terms) + chosen - start)
            part.fixed += self.fixed[start:end]
            part.terms += self.terms[start:end]
        return parts

    def arrays(self):
        terms = np.array(self.terms, np.float64).reshape(-1, len(TERMS))
        return np.array(self.fixed), terms, np.array(self.starts), np.array(self.chosen)


_TERMS = ExpertAgent()


def player_games(paths, player: str, names: set[str] | None = None):
    """``(game, seats)`` for every record in ``paths`` in which ``player`` sat: the game replayed
    through the engine and the seats named ``player`` (``RecordError`` for a bad file or record);
    every player name the records give is added to ``names``."""
    for path in paths:
        for where, record in read_records(path):
            players = record.get("players") if isinstance(record, dict) else None
            if not isinstance(players, list):
                continue  # a record without player names cannot say whose choices are whose
            if names is not None:
                names.update(map(str, players))
            seats = {s for s, name in enumerate(players) if name == player}
            if seats:
                yield replay_record(record, name=where), seats


def read_choices(paths, player: str) -> Choices:
    """Every choice of the seats named ``player`` in the records of ``paths`` (``RecordError`` for a
    bad file or record, ``PlayModelError`` when the player never chose between two moves)."""
    out = Choices()
    names: set[str] = set()
    for game, seats in player_games(paths, player, names):
        out.games += 1
        for _, placement, view, event in replay_positions(game):
            if view.seat in seats:
                out.add(view, action_id(event[2], play_end(event[3], placement == 0)))
    if not out:
        known = ", ".join(sorted(names)) or "none named"
        raise PlayModelError(f"no choice of player {player!r} between two or more moves in {', '.join(map(str, paths))}; players there: {known}")
    return out


@dataclass(frozen=True)
class Fit:
    """A fit's weights of ``TERMS`` (``points`` 1) and the ``scale`` of the scores they give."""

    weights: dict[str, float]
    scale: float


def fit(choices: Choices, l2: float = 1e-2, steps: int = 100) -> Fit:
    """The weights of ``TERMS`` that maximise the penalised likelihood of ``choices`` (module
    docstring), rescaled so that ``points`` is 1, and the scale taken out."""
    fixed, x, starts, chosen = choices.arrays()
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(x))))
    fixed = np.minimum(fixed, 50.0)  # reaching the target: certain, without overflowing
    penalty = l2 * len(starts)

    def objective(w):
        """The penalised log-likelihood, the moves' probabilities and the per-choice term means."""
        log_p = _log_chances(fixed + x @ w, starts, group)
        p = np.exp(log_p)
        value = log_p[chosen].sum() - penalty * (w @ w) / 2
        return value, p, np.add.reduceat(p[:, None] * x, starts)

    w = np.zeros(len(TERMS))
    value, p, mean = objective(w)
    for _ in range(steps):
        grad = x[chosen].sum(0) - mean.sum(0) - penalty * w
        centred = x - mean[group]
        hessian = (centred * p[:, None]).T @ centred + penalty * np.eye(len(TERMS))
        step = np.linalg.solve(hessian, grad)
        scale = 1.0
        while True:  # Newton's step, halved until it climbs (it always can: the problem is concave)
            new = objective(w + scale * step)
            if new[0] >= value or scale < 1e-6:
                break
            scale /= 2
        w = w + scale * step
        gain = new[0] - value
        value, p, mean = new
        if gain < 1e-9 * max(1.0, abs(value)):
            break
    if w[0] <= 0:
        raise PlayModelError("the fit gives the points a move scores no positive weight: the records do not look like a player who scores")
    return Fit({k: round(float(v / w[0]), 6) + 0.0 for k, v in zip(TERMS, w)}, round(float(w[0]), 6))


def log_loss(choices: Choices, model: Fit) -> float:
    """The mean negative log chance ``model`` gives the move chosen, over ``choices``."""
    fixed, x, starts, chosen = choices.arrays()
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(x))))
    z = np.minimum(fixed, 50.0) + model.scale * (x @ np.array([model.weights[k] for k in TERMS]))
    return float(-np.mean(_log_chances(z, starts, group)[chosen]))


def _log_chances(z: np.ndarray, starts: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per move, the log of its softmax over its choice's moves (``z`` the moves' logits, ``starts``
    each choice's first move, ``group`` each move's choice)."""
    z = z - np.maximum.reduceat(z, starts)[group]
    return z - np.log(np.add.reduceat(np.exp(z), starts))[group]


def agreement(choices: Choices, weights: dict[str, float]) -> float:
    """The share of ``choices`` whose chosen move is the best by ``weights`` (ties: the lower action
    id, as ``expert``: its first legal move)."""
    fixed, x, starts, chosen = choices.arrays()
    score = fixed + x @ np.array([weights[k] for k in TERMS])
    hits = 0
    ends = np.append(starts[1:], len(x))
    for start, end, row in zip(starts, ends, chosen):
        hits += start + int(np.argmax(score[start:end])) == row
    return hits / len(starts)


def save_model(path, model: Fit, **facts) -> None:
    """Write a play model file (``FORMAT``), whole or not at all (a temporary file renamed over it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": FORMAT, "weights": model.weights, "scale": model.scale, **facts}, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class PlayModel:
    """A play model file's ``expert`` (``agent``) and the chances it gives each move (``chances``)."""

    def __init__(self, agent: ExpertAgent, scale: float | None, path) -> None:
        self.agent = agent
        self.scale = scale
        self.path = path

    def check_chances(self) -> None:
        """``PlayModelError`` unless the file gives the scale that ``chances`` needs."""
        if self.scale is None:
            raise PlayModelError(f"play model {self.path} has no scale, so no chances of moves (it was fitted before fit-play kept one): fit it again with allfives fit-play")

    def chances(self, view) -> np.ndarray:
        """The chance of each of ``view.legal_actions``: ``softmax(scale * score)`` (a move that
        reaches the target is all but certain, as in the fit)."""
        z = self.scale * np.asarray(self.agent.scores(view), np.float64)
        e = np.exp(z - z.max())
        return e / e.sum()


def load_model(path) -> ExpertAgent:
    """The ``expert`` of a play model file; ``PlayModelError`` names a missing or malformed file."""
    return load_play_model(path).agent


def load_play_model(path) -> PlayModel:
    """A play model file's ``PlayModel``; ``PlayModelError`` names a missing or malformed file."""
    refused = refusal(path, MODEL_OF_PLAY_MAX_BYTES)
    if refused:
        raise PlayModelError(f"play model {path}: {refused}")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlayModelError(f"play model {path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PlayModelError(f"play model {path}: not a JSON file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("weights"), dict):
        raise PlayModelError(f"play model {path}: not an {FORMAT} file (a JSON object with format {FORMAT!r} and weights)")
    scale = data.get("scale")
    if scale is not None and not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and 0 < scale < float("inf")):
        raise PlayModelError(f"play model {path}: scale must be a positive number, got {scale!r}")
    try:
        return PlayModel(ExpertAgent(**data["weights"]), scale, path)
    except ValueError as exc:
        raise PlayModelError(f"play model {path}: {exc}") from None
