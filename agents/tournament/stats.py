"""Statistics of a tournament: Wilson intervals, pairwise results from games, Elo ratings by maximum likelihood.

Definitions (docs/tournament.md has them with examples):

- A *comparison* between agents ``a`` and ``b`` is one game seen from a side of ``a`` and a side
  of ``b``: ``a`` wins it when its side won the game, or (in 3-4 player cut-throat games, where
  neither won) when it finished with the higher score; equal scores are a draw. Two-player and
  partnership games give one comparison per game.
- Win rates count draws as half a win; the confidence interval is Wilson's score interval.
- Ratings are a Bradley–Terry model on the Elo scale, ``P(a beats b) = 1 / (1 + 10**((Rb - Ra) / 400))``,
  fitted to all comparisons by maximum likelihood, with a weak prior (one virtual draw per agent
  against a fixed 1500 opponent) so that unbeaten agents stay finite.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from ..intervals import Z95, wilson_interval  # noqa: F401  (the tournament's intervals)


class GameResult(NamedTuple):
    """The outcome of one tournament game, as much as the statistics need."""

    pairing: int  #: index of the pairing (or group) in the schedule
    game: int  #: index of the game within its pairing
    seed: int  #: the game's seed
    seating: tuple[int, ...]  #: agent index per seat
    final_scores: tuple[int, ...]  #: score per side
    winner: int | None  #: winning side, None if the game did not finish
    hands: int  #: hands played


def _graph_connected(scores: Sequence[Sequence[float]]) -> bool:
    """Whether every agent can be reached from every other along "scored against" edges (Zermelo's condition)."""
    k = len(scores)
    for forward in (True, False):
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            for j in range(k):
                if j not in seen and (scores[i][j] if forward else scores[j][i]) > 0:
                    seen.add(j)
                    todo.append(j)
        if len(seen) < k:
            return False
    return True


def _loglik_parts(theta, scores, counts, prior_games: float):
    """Log-likelihood, gradient and Hessian of the Bradley–Terry model in natural-log strengths ``theta``."""
    import numpy as np

    diff = theta[:, None] - theta[None, :]
    p = 1 / (1 + np.exp(-diff))  # p[i, j] = P(i beats j)
    logp = -np.logaddexp(0, -diff)  # log p[i, j], stable
    loglik = float((scores * logp).sum())
    grad = (scores - counts * p).sum(axis=1)
    w = counts * p * (1 - p)
    hess = w - np.diag(w.sum(axis=1))
    if prior_games > 0:
        q = 1 / (1 + np.exp(-theta))  # against the virtual opponent of strength 1 (theta 0)
        loglik += float(prior_games / 2 * (-np.logaddexp(0, -theta) - np.logaddexp(0, theta)).sum())
        grad += prior_games * (0.5 - q)
        hess -= np.diag(prior_games * q * (1 - q))
    return loglik, grad, hess


class EloFit(NamedTuple):
    """Ratings of ``fit_elo`` and their standard errors (relative to the mean rating), in agent order."""

    ratings: list[float]
    errors: list[float]


def fit_elo(
    scores: Sequence[Sequence[float]],
    counts: Sequence[Sequence[float]],
    prior_games: float = 1.0,
    anchor: float = 1500.0,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> EloFit:
    """Elo ratings from pairwise results by maximum likelihood (Bradley–Terry model).

    ``scores[i][j]`` is what agent ``i`` scored against ``j`` (wins plus half the draws) and
    ``counts[i][j]`` how many comparisons they had (symmetric). ``prior_games`` virtual draws of
    every agent against a fixed opponent of strength 1 (rating ``anchor`` before centring) keep
    unbeaten and winless agents finite; ``prior_games=0`` is the plain maximum likelihood
    estimate, which exists only when every agent is linked to every other by a chain of
    "scored against" results (else ``ValueError``).

    The log-likelihood is concave; it is maximised by Newton's method with step halving (the MM
    iteration reaches the same maximum, but very slowly along the direction that only the weak
    prior pins down). Ratings are ``400·log10(strength)``, shifted so that their mean is
    ``anchor``. ``errors`` come from the inverse Hessian of the log-likelihood and assume
    independent comparisons.
    """
    import numpy as np

    k = len(scores)
    if k == 0:
        return EloFit([], [])
    if prior_games <= 0 and not _graph_connected(scores):
        raise ValueError(
            "without a prior the ratings are infinite: some agents never scored against the others; use prior_games > 0"
        )
    s = np.asarray(scores, float)
    c = np.asarray(counts, float)
    theta = np.zeros(k)
    ones = np.ones((k, k))
    loglik, grad, hess = _loglik_parts(theta, s, c, prior_games)
    for _ in range(max_iter):
        # without a prior the likelihood is flat along (1, ..., 1); subtracting ones makes the
        # system regular without changing the step, which stays orthogonal to that direction
        step = np.linalg.solve(hess - ones if prior_games <= 0 else hess, -grad)
        t = 1.0
        while True:
            candidate = theta + t * step
            new = _loglik_parts(candidate, s, c, prior_games)
            if new[0] >= loglik - 1e-12 * abs(loglik) or t < 1e-8:
                break
            t /= 2
        theta = candidate
        loglik, grad, hess = new
        if np.abs(t * step).max() < tol:
            break
    scale = 400 / math.log(10)
    ratings = scale * theta
    ratings = ratings - ratings.mean() + anchor
    centre = np.eye(k) - 1 / k  # each rating minus the mean rating
    cov = np.linalg.inv(-hess) if prior_games > 0 else np.linalg.pinv(-hess)
    var = np.einsum("ij,jk,ik->i", centre, cov, centre)
    return EloFit([float(r) for r in ratings], [float(e) for e in scale * np.sqrt(np.maximum(var, 0))])


def meeting_share(winner: int | None, final_scores: Sequence[float], u: int, v: int) -> float:
    """1 if side ``u`` finished ahead of side ``v`` (the winner is ahead of every other side; else
    the higher final score), 0 if behind, 0.5 if level: one meeting of a tournament's pairing."""
    if winner == u:
        return 1.0
    if winner == v:
        return 0.0
    su, sv = final_scores[u], final_scores[v]
    return 1.0 if su > sv else 0.0 if su < sv else 0.5


def summarize(
    results: Sequence[GameResult], names: Sequence[str], side_of: Sequence[int], prior_games: float = 1.0
) -> tuple[list[dict], list[dict], dict[str, float]]:
    """Pairing statistics, per-agent statistics and ratings of a tournament's games.

    Returns ``(pairings, agents, ratings)``: ``pairings`` for every pair of agents that met, in
    the order of ``names``; ``agents`` in the order of ``names`` (with ``rating`` and ``rank``);
    ``ratings`` as ``{name: rating}`` from best to worst. ``side_of`` maps seats to sides.
    """
    k = len(names)
    # per pair (x < y): comparisons, x wins, y wins, draws, sum of score differences, points of x, of y, hands
    pair: dict[tuple[int, int], list[float]] = {}
    agent_games = [0] * k
    agent_wins = [0] * k
    agent_points = [0] * k
    agent_hands = [0] * k
    for r in results:
        sides: dict[int, list[int]] = {}
        for seat, x in enumerate(r.seating):
            side = side_of[seat]
            held = sides.setdefault(x, [])
            if side not in held:
                held.append(side)
        for x, held in sides.items():
            agent_games[x] += 1
            agent_wins[x] += r.winner in held
            agent_points[x] += sum(r.final_scores[s] for s in held)
            agent_hands[x] += r.hands * len(held)
        agents_here = sorted(sides)
        for i, x in enumerate(agents_here):
            for y in agents_here[i + 1 :]:
                acc = pair.setdefault((x, y), [0, 0, 0, 0, 0, 0, 0, 0])
                for u in sides[x]:
                    for v in sides[y]:
                        outcome = meeting_share(r.winner, r.final_scores, u, v)
                        acc[0] += 1
                        if outcome == 1.0:
                            acc[1] += 1
                        elif outcome == 0.0:
                            acc[2] += 1
                        else:
                            acc[3] += 1
                        acc[4] += r.final_scores[u] - r.final_scores[v]
                        acc[5] += r.final_scores[u]
                        acc[6] += r.final_scores[v]
                        acc[7] += r.hands

    scores = [[0.0] * k for _ in range(k)]
    counts = [[0.0] * k for _ in range(k)]
    pairings = []
    for (x, y), (n, xw, yw, draws, diff, xp, yp, hands) in sorted(pair.items()):
        scores[x][y] = xw + draws / 2
        scores[y][x] = yw + draws / 2
        counts[x][y] = counts[y][x] = n
        low, high = wilson_interval(xw + draws / 2, n)
        pairings.append(
            {
                "a": names[x],
                "b": names[y],
                "games": int(n),
                "a_wins": int(xw),
                "b_wins": int(yw),
                "draws": int(draws),
                "a_win_rate": (xw + draws / 2) / n,
                "ci_low": low,
                "ci_high": high,
                "mean_score_diff": diff / n,
                "a_points_per_hand": xp / hands if hands else 0.0,
                "b_points_per_hand": yp / hands if hands else 0.0,
            }
        )

    ratings, errors = fit_elo(scores, counts, prior_games=prior_games)
    order = sorted(range(k), key=lambda i: (-ratings[i], i))
    rank = {i: pos + 1 for pos, i in enumerate(order)}
    agents = []
    for i in range(k):
        low, high = wilson_interval(agent_wins[i], agent_games[i])
        agents.append(
            {
                "agent": names[i],
                "rank": rank[i],
                "rating": ratings[i],
                "rating_se": errors[i],
                "games": agent_games[i],
                "wins": agent_wins[i],
                "win_rate": agent_wins[i] / agent_games[i] if agent_games[i] else 0.0,
                "ci_low": low,
                "ci_high": high,
                "points_per_hand": agent_points[i] / agent_hands[i] if agent_hands[i] else 0.0,
            }
        )
    return pairings, agents, {names[i]: ratings[i] for i in order}
