"""Move analysis: every legal move of a position with its estimated value and a 95% interval.

For a seat's ``PlayerView``, ``analyze`` samples ``worlds`` possible worlds consistent with the
view (hidden hands and boneyard order, ``allfives_agents.search.belief.determinize``: only what the seat can see
is used) and, for each legal move, plays the move and then the rest of the hand in every world
with a playout policy (an agent spec: ``greedy``, ``expert``, ``ppo:allfives_2p``, ...) at every
seat. All moves are played out in the same worlds (common random numbers), so their differences
are sharper than their values.

Per move it reports:

- ``points``: what the move scores now (the engine's count);
- ``value``: the mean over the worlds of the viewer's side's zero-summed score change from the
  position to the end of the hand (the move's points included; a hand that a side's reaching the
  target ends counts as it stands), with a 95% normal interval ``[value_low, value_high]``;
- ``win``: when the game can end in this hand, the share of worlds in which the viewer's side
  wins the game, with its 95% Wilson interval; ``None`` when no world ended the game.

When nothing is hidden from the seat (every unseen tile's place is known: an empty boneyard and
one other hand), there is one world: a deterministic playout policy (greedy, expert, a trained
policy) then gives the exact result, and the intervals have zero width.

With ``belief`` (a trained policy: a file or a shipped model's name) the worlds are weighted by
how likely that network finds the placements the other seats chose this hand in each of them
(``allfives_agents.search.inference``, as ``ismcts:belief=policy`` does): the values and win shares are weighted
means, and their intervals use the effective number of worlds ``(sum w)^2 / sum w^2``
(``effective_worlds`` in the result), so a few heavy worlds give wide intervals.
"""

from __future__ import annotations

import functools
import math
import random
import time

from allfives_env.engine.rewards import zero_sum
from allfives_env.engine.rules import Rules
from allfives_env.lookahead import unseen_mask

from .search.belief import determinize
from .factory import make_agent
from .search.options import SearchOptions
from .intervals import wilson_interval

#: the inference's softmax temperature: ``ismcts``'s ``btemp`` default
BELIEF_TEMP = SearchOptions.btemp
#: the most worlds one analysis may sample (``allfives analyze`` and the server cap requests by it)
MAX_WORLDS = 2000


def hidden_is_known(view) -> bool:
    """Whether every tile the seat has not seen has a known place (one world only)."""
    others = [s for s in range(view.rules.num_players) if s != view.seat and view.tile_counts[s]]
    return unseen_mask(view) == 0 or (view.boneyard_size == 0 and len(others) <= 1)


def analyze(view, policy: str = "greedy", worlds: int = 200, seed: int = 0, seconds: float | None = None, belief: str | None = None) -> dict:
    """The analysis of ``view`` (see the module docstring). ``seconds`` caps the wall time: fewer
    worlds are played if it runs out (at least one), and ``worlds`` in the result says how many.
    ``belief`` names the network that weighs the worlds (none: every world weighs the same)."""
    if type(worlds) is not int or not 1 <= worlds <= MAX_WORLDS:
        raise ValueError(f"worlds must be an integer in 1..{MAX_WORLDS}, got {worlds!r}")
    if not view.legal_actions:
        raise ValueError("the seat has no move to analyse: it is not its turn")
    network = _belief_network(belief, view.rules) if belief else None
    rng = random.Random(seed)
    exact = hidden_is_known(view)
    count = 1 if exact else worlds
    rules = view.rules
    side = rules.side_of[view.seat]
    agents = [make_agent(policy, seed=rng.getrandbits(63), rules=rules) for _ in range(rules.num_players)]
    legal = list(view.legal_actions)
    values: dict[int, list[float]] = {a: [] for a in legal}
    wins: dict[int, list[float]] = {a: [] for a in legal}  # 1 when the side won the game in that world
    ended = dict.fromkeys(legal, False)
    root = list(view.scores)
    deadline = None if seconds is None else time.perf_counter() + seconds
    played = 0
    world_hands: list[list[int]] = []  # each world's hands, for the weights
    for w in range(count):
        if deadline is not None and played and time.perf_counter() > deadline:
            break
        world_seed = rng.getrandbits(63)
        for a in legal:
            game = determinize(view, random.Random(world_seed))
            if a == legal[0]:
                world_hands.append(list(game.hands))
            for s, agent in enumerate(agents):
                agent.reset(world_seed + s)
            game.step(a)
            while not game.over:
                seat = game.current_player
                game.step(agents[seat].act(game.view(seat)))
            values[a].append(zero_sum([x - y for x, y in zip(game.scores, root)])[side])
            wins[a].append(1.0 if game.winner == side else 0.0)
            ended[a] |= game.winner is not None
        played += 1
    weights = _world_weights(view, network, world_hands, rng) if network is not None and not exact else [1.0] * played
    effective = sum(weights) ** 2 / sum(w * w for w in weights)
    moves = []
    for a, points in zip(legal, view.move_points()):
        mean, half = _weighted_mean(values[a], weights, effective)
        move = dict(view.describe(a, points), value=round(mean, 3), value_low=round(mean - half, 3), value_high=round(mean + half, 3), win=None)
        if ended[a]:
            share, _ = _weighted_mean(wins[a], weights, effective)
            n = max(1, round(effective))
            low, high = wilson_interval(share * n, n)
            move.update(win=round(share, 4), win_low=round(low, 4), win_high=round(high, 4))
        moves.append(move)
    moves.sort(key=lambda m: (-m["value"], m["action"]))
    result = {"seat": view.seat, "policy": str(policy), "worlds": played, "exact": exact, "moves": moves}
    if belief:
        result.update(belief=belief, effective_worlds=round(effective, 1))
    return result


@functools.lru_cache(maxsize=4)
def _load_network(belief: str):
    """The network a ``belief`` names, read once per process (the server analyses many positions)."""
    from .search.ismcts import load_policy

    return load_policy(belief)


def _belief_network(belief: str, rules):
    """The network ``belief`` names, refused (``ValueError``) for another number of players."""
    from .nets.policy import check_trained_players

    network = _load_network(belief)
    trained = Rules.from_dict(network.rules) if network.rules else None
    check_trained_players(belief, trained, rules, "this position")
    return network


def _world_weights(view, network, world_hands: list[list[int]], rng: random.Random) -> list[float]:
    """The weight of each world (its hands) under the inference of ``allfives_agents.search.inference``, largest 1."""
    from .search.inference import PlayEvidence

    evidence = PlayEvidence(view)
    if not len(evidence):
        return [1.0] * len(world_hands)
    logw = evidence.log_weights(world_hands, network, rng, BELIEF_TEMP)
    top = max(logw)
    return [math.exp(x - top) for x in logw]


def _weighted_mean(xs: list[float], weights: list[float], effective: float) -> tuple[float, float]:
    """The weighted mean and the half width of its 95% normal interval over ``effective`` worlds."""
    total = sum(weights)
    mean = sum(w * x for w, x in zip(weights, xs)) / total
    if len(xs) < 2 or effective <= 1:
        return mean, 0.0
    var = sum(w * (x - mean) ** 2 for w, x in zip(weights, xs)) / total * effective / (effective - 1)
    return mean, 1.96 * math.sqrt(var / effective)


def format_analysis(result: dict) -> str:
    """A table of the analysis, best move first."""
    worlds = "1 world: nothing is hidden" if result["exact"] else f"{result['worlds']} sampled worlds"
    if result.get("belief") and not result["exact"]:
        worlds += f" weighted by {result['belief']} (as many as {result['effective_worlds']:g} equal ones)"
    lines = [
        f"seat {result['seat']}, playouts by {result['policy']}, {worlds}",
        f"{'move':<14} {'points':>6} {'value':>8} {'95% interval':>18} {'win':>7} {'95% interval':>16}",
    ]
    for m in result["moves"]:
        where = "lead" if m["end"] == "lead" else f"on {m['end']}"
        move = f"{m['tile'][0]}-{m['tile'][1]} {where}"
        interval = f"[{m['value_low']:+.1f}, {m['value_high']:+.1f}]"
        win = "" if m["win"] is None else f"{100 * m['win']:.1f}%"
        win_ci = "" if m["win"] is None else f"[{100 * m['win_low']:.1f}, {100 * m['win_high']:.1f}]"
        lines.append(f"{move:<14} {m['points']:>6} {m['value']:>+8.1f} {interval:>18} {win:>7} {win_ci:>16}")
    return "\n".join(lines)
