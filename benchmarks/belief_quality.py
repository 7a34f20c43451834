"""How well a belief predicts the hidden hands: the Brier score and log loss of each unseen tile.

At positions of expert self-play (decisions with two or more legal moves, after at least one
choice of another seat this hand), each belief gives every unseen tile a probability of being in
each other seat's hand: the weighted share of a pool of sampled worlds that put it there, as the
search draws its worlds (``agents.belief.HiddenSampler`` for the pool, ``agents.inference`` for the
weights). Those are scored against the true hands: the Brier score (the mean squared error; 0 is
knowing the hands) and the log loss, with the pool's mean effective size ``1 / sum(w**2)`` and the
milliseconds a position takes to sample the pool and to weigh it (what the search pays). All
beliefs see the same positions, so their rows compare directly. A row is ``uniform``, ``policy``
(the network ``--policy`` as the model of play, at ``--btemp``) or ``expert`` (the exact model of
these games' players), each at a pool size:

    python benchmarks/belief_quality.py --players 2 --positions 150 --beliefs uniform:100 policy:100 policy:1000 expert:300
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.belief import HiddenSampler, unseen_mask  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from agents.inference import DEFAULT_EPS, PlayEvidence  # noqa: E402
from agents.ismcts import load_policy  # noqa: E402
from agents.policy import check_trained_players  # noqa: E402
from allfives_env.engine import Game  # noqa: E402
from allfives_env.engine.rules import Rules  # noqa: E402
from allfives_env.engine.tiles import mask_tiles  # noqa: E402

MODELS = ("uniform", "policy", "expert")


def positions(rules: Rules, count: int, seed: int) -> list[tuple]:
    """``count`` (view, true hands) pairs: decisions with two or more moves that follow a choice of another seat."""
    expert, found, game_seed = ExpertAgent(), [], seed
    while len(found) < count * 4:
        game = Game(rules, seed=game_seed)
        game_seed += 1
        while not game.over:
            view = game.view(game.current_player)
            if len(view.legal_actions) > 1 and len(PlayEvidence(view)):
                found.append((view, list(game.hands)))
            game.step(expert.act(view))
    return random.Random(seed).sample(found, count)


def parse_belief(text: str) -> tuple[str, int]:
    model, _, size = text.partition(":")
    if model not in MODELS or not size.isdigit() or int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected MODEL:WORLDS with MODEL one of {', '.join(MODELS)} and WORLDS >= 1")
    return model, int(size)


def score(items, model: str, size: int, network, btemp: float, eps: float, seed: int) -> dict:
    """The belief's Brier score, log loss, mean effective pool size and mean times over ``items``."""
    rng, expert = random.Random(seed), ExpertAgent()
    brier = loss = ess = sampling = weighing = 0.0
    count = 0
    for view, hands in items:
        start = time.perf_counter()
        sample = HiddenSampler(view)
        pool = [sample(rng)[0] for _ in range(size)]
        sampled = time.perf_counter()
        sampling += sampled - start
        if model == "uniform":
            w = np.ones(size)
        else:
            evidence = PlayEvidence(view)
            logw = evidence.log_weights(pool, network, rng, btemp, eps) if model == "policy" else evidence.agent_log_weights(pool, expert, rng, eps)
            w = np.exp(logw - logw.max())
            weighing += time.perf_counter() - sampled
        w /= w.sum()
        ess += 1 / float(np.sum(w**2))
        errors = tile_errors(view, hands, pool, w)
        brier, loss, count = brier + errors[0], loss + errors[1], count + errors[2]
    n = len(items)
    return dict(belief=f"{model}:{size}", brier=brier / count, log_loss=loss / count, mean_ess=ess / n, sample_ms=1000 * sampling / n, weigh_ms=1000 * weighing / n)


def tile_errors(view, hands: list[int], pool: list[list[int]], w: np.ndarray) -> tuple[float, float, int]:
    """Summed squared error and log loss of each (other seat, unseen tile) probability, and their count."""
    brier = loss = 0.0
    count = 0
    for seat in range(view.rules.num_players):
        if seat == view.seat:
            continue
        p = np.zeros(28)
        for weight, world in zip(w, pool):
            p[mask_tiles(world[seat])] += weight
        for t in mask_tiles(unseen_mask(view)):
            y = hands[seat] >> t & 1
            q = min(max(p[t], 1e-4), 1 - 1e-4)
            brier += (q - y) ** 2
            loss -= math.log(q if y else 1 - q)
            count += 1
    return brier, loss, count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="4: partnerships")
    parser.add_argument("--positions", type=int, default=150)
    parser.add_argument("--beliefs", nargs="+", type=parse_belief, default=[("uniform", 100), ("policy", 100), ("expert", 100)])
    parser.add_argument("--policy", default="", help="the network of the policy rows (default: the shipped allfives_Np)")
    parser.add_argument("--btemp", type=float, default=0.5)
    parser.add_argument("--eps", type=float, default=DEFAULT_EPS)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if args.positions < 1:
        parser.error(f"--positions must be at least 1, got {args.positions}")
    rules = Rules.make(num_players=args.players)
    network = None
    if any(m == "policy" for m, _ in args.beliefs):
        name = args.policy or f"allfives_{args.players}p"
        try:
            network = load_policy(name)
            check_trained_players(name, Rules.from_dict(network.rules) if network.rules else None, rules, "--players")
        except ValueError as exc:  # PolicyFileError, PolicyPlayersError
            parser.error(f"--policy: {exc}")
    items = positions(rules, args.positions, args.seed)
    print(f"{args.players} players, {len(items)} positions (0 is knowing the hands)")
    print("| belief:worlds | Brier | log loss | mean effective worlds | sample ms | weigh ms |\n|---|---|---|---|---|---|")
    for model, size in args.beliefs:
        row = score(items, model, size, network, args.btemp, args.eps, args.seed)
        print(f"| {row['belief']} | {row['brier']:.4f} | {row['log_loss']:.4f} | {row['mean_ess']:.1f} | {row['sample_ms']:.2f} | {row['weigh_ms']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
