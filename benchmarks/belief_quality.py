"""How well a belief predicts the hidden hands: the Brier score and log loss of each unseen tile.

At positions of expert self-play (decisions with two or more legal moves, after at least one
choice of another seat this hand), or of a named player in game records (``--records FILE
--player NAME``: the seats it played, with the hands as they were), each belief gives every unseen tile a probability of being in
each other seat's hand: the weighted share of a pool of sampled worlds that put it there, as the
search draws its worlds (``allfives_agents.search.belief.HiddenSampler`` for the pool, ``allfives_agents.search.inference`` for the
weights). Those are scored against the true hands: the Brier score (the mean squared error; 0 is
knowing the hands) and the log loss, with the pool's mean effective size ``1 / sum(w**2)`` and the
milliseconds a position takes to sample the pool and to weigh it (what the search pays); with
partners, the Brier score of the partner's tiles alone too. All
beliefs see the same positions, so their rows compare directly. A row is ``uniform``, ``policy``
(the network ``--policy`` as the model of play, at ``--btemp``) or ``expert`` (the exact model of
these games' players), each at a pool size; ``--agents`` adds rows measured through an ``ismcts``
agent's own pool and weights (``ISMCTSAgent.belief_pool``), so its options (``bweights``,
``bpartner``, ``worlds``) are measured as the search uses them:

    python benchmarks/belief_quality.py --players 2 --positions 150 --beliefs uniform:100 policy:100 policy:1000 expert:300
    python benchmarks/belief_quality.py --players 4 --records runs/x/games.jsonl --player SPEC --positions 100 \
        --beliefs uniform:200 --agents ismcts:belief=expert,worlds=200 ismcts:belief=expert,worlds=200,bpartner=FILE
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

from allfives_agents.search.belief import HiddenSampler, unseen_mask  # noqa: E402
from allfives_agents.expert import ExpertAgent  # noqa: E402
from allfives_agents.search.inference import DEFAULT_EPS, PlayEvidence  # noqa: E402
from allfives_agents.search.ismcts import load_policy  # noqa: E402
from allfives_agents.search.play_fit import player_games  # noqa: E402
from allfives_agents.nets.policy import check_trained_players  # noqa: E402
from allfives_agents import make_agent  # noqa: E402
from allfives_env.engine import Game  # noqa: E402
from allfives_env.engine.errors import RecordError  # noqa: E402
from allfives_env.engine.record import replay_steps  # noqa: E402
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


def recorded_positions(paths, player: str, count: int, seed: int) -> list[tuple]:
    """``count`` (view, true hands) pairs at the seats named ``player`` in the records of ``paths``,
    chosen as ``positions`` chooses; ``RecordError`` for a bad record, ``ValueError`` when there are too few."""
    found = []
    for game, seats in player_games(paths, player):
        for _, _, again, _ in replay_steps(game):
            view = again.view(again.current_player)
            if view.seat in seats and len(view.legal_actions) > 1 and len(PlayEvidence(view)):
                found.append((view, list(again.hands)))
    if len(found) < count:
        raise ValueError(f"{len(found)} positions of player {player!r} in {', '.join(map(str, paths))}, fewer than --positions {count}")
    return random.Random(seed).sample(found, count)


def parse_belief(text: str) -> tuple[str, int]:
    model, _, size = text.partition(":")
    if model not in MODELS or not size.isdigit() or int(size) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected MODEL:WORLDS with MODEL one of {', '.join(MODELS)} and WORLDS >= 1")
    return model, int(size)


class _Scores:
    """Running totals of a belief's scores over positions."""

    def __init__(self) -> None:
        self.brier = self.loss = self.ess = 0.0
        self.count = self.partner_brier = self.partner_count = 0
        self.n = 0

    def add(self, view, hands: list[int], pool: list[list[int]], w: np.ndarray) -> None:
        w = w / w.sum()
        self.ess += 1 / float(np.sum(w**2))
        self.n += 1
        brier, loss, count = tile_errors(view, hands, pool, w)
        self.brier, self.loss, self.count = self.brier + brier, self.loss + loss, self.count + count
        partners = [s for s in range(view.rules.num_players) if s != view.seat and view.rules.side_of[s] == view.rules.side_of[view.seat]]
        if partners:
            brier, _, count = tile_errors(view, hands, pool, w, partners)
            self.partner_brier, self.partner_count = self.partner_brier + brier, self.partner_count + count

    def row(self, belief: str) -> dict:
        partner = self.partner_brier / self.partner_count if self.partner_count else None
        return dict(belief=belief, brier=self.brier / self.count, log_loss=self.loss / self.count, mean_ess=self.ess / self.n, partner_brier=partner)


def score(items, model: str, size: int, network, btemp: float, eps: float, seed: int) -> dict:
    """The belief's Brier score (all other seats' tiles, and a partner's alone), log loss, mean
    effective pool size and mean times over ``items``."""
    rng, expert = random.Random(seed), ExpertAgent()
    scores, sampling, weighing = _Scores(), 0.0, 0.0
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
        scores.add(view, hands, pool, w)
    n = len(items)
    return dict(scores.row(f"{model}:{size}"), sample_ms=1000 * sampling / n, weigh_ms=1000 * weighing / n)


def score_agent(items, spec: str, seed: int) -> dict:
    """``score`` for the belief of ``ismcts`` agent ``spec``: its own pool and weights at each position
    (a uniform pool of ``worlds`` where it has none)."""
    agent = make_agent(spec, seed=seed)
    rng = random.Random(seed)
    scores, elapsed = _Scores(), 0.0
    for view, hands in items:
        start = time.perf_counter()
        pool, logw = agent.belief_pool(view)
        elapsed += time.perf_counter() - start
        if pool is None:
            sample = HiddenSampler(view)
            worlds, w = [sample(rng)[0] for _ in range(agent.worlds or agent.iters)], None
        else:
            worlds, w = [hands_ for hands_, _ in pool], np.exp(logw - logw.max())
        scores.add(view, hands, worlds, np.ones(len(worlds)) if w is None else w)
    return dict(scores.row(spec), pool_ms=1000 * elapsed / len(items))


def tile_errors(view, hands: list[int], pool: list[list[int]], w: np.ndarray, seats=None) -> tuple[float, float, int]:
    """Summed squared error and log loss of each (other seat, unseen tile) probability, and their
    count (with ``seats``, those seats' only)."""
    brier = loss = 0.0
    count = 0
    for seat in range(view.rules.num_players) if seats is None else seats:
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


def _partner(row: dict) -> str:
    return "-" if row["partner_brier"] is None else f"{row['partner_brier']:.4f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="4: partnerships")
    parser.add_argument("--positions", type=int, default=150)
    parser.add_argument("--beliefs", nargs="*", type=parse_belief, default=[("uniform", 100), ("policy", 100), ("expert", 100)])
    parser.add_argument("--agents", nargs="+", default=[], metavar="SPEC", help="ismcts specs whose own belief is measured too")
    parser.add_argument("--records", nargs="+", default=[], metavar="FILE", help="take the positions from these game records (with --player)")
    parser.add_argument("--player", default="", help="with --records: the player (its name in the records) whose seats give the positions")
    parser.add_argument("--policy", default="", help="the network of the policy rows (default: the shipped allfives_Np)")
    parser.add_argument("--btemp", type=float, default=0.5)
    parser.add_argument("--eps", type=float, default=DEFAULT_EPS)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    if args.positions < 1:
        parser.error(f"--positions must be at least 1, got {args.positions}")
    if bool(args.records) != bool(args.player):
        parser.error("--records and --player go together: the records to take positions from and the player whose seats they are")
    for spec in args.agents:
        if not spec.startswith("ismcts"):
            parser.error(f"--agents: {spec!r} is not an ismcts spec")
        try:
            make_agent(spec)
        except ValueError as exc:
            parser.error(f"--agents: {exc}")
    rules = Rules.make(num_players=args.players)
    network = None
    if any(m == "policy" for m, _ in args.beliefs):
        name = args.policy or f"allfives_{args.players}p"
        try:
            network = load_policy(name)
            check_trained_players(name, Rules.from_dict(network.rules) if network.rules else None, rules, "--players")
        except ValueError as exc:  # PolicyFileError, PolicyPlayersError
            parser.error(f"--policy: {exc}")
    if args.records:
        try:
            items = recorded_positions(args.records, args.player, args.positions, args.seed)
        except (RecordError, ValueError) as exc:
            parser.error(f"--records: {exc}")
        if items[0][0].rules.num_players != args.players:
            parser.error(f"--records: the games have {items[0][0].rules.num_players} players; --players is {args.players}")
    else:
        items = positions(rules, args.positions, args.seed)
    print(f"{args.players} players, {len(items)} positions (0 is knowing the hands)")
    print("| belief:worlds | Brier | log loss | mean effective worlds | sample ms | weigh ms | partner's Brier |\n|---|---|---|---|---|---|---|")
    for model, size in args.beliefs:
        row = score(items, model, size, network, args.btemp, args.eps, args.seed)
        print(f"| {row['belief']} | {row['brier']:.4f} | {row['log_loss']:.4f} | {row['mean_ess']:.1f} | {row['sample_ms']:.2f} | {row['weigh_ms']:.2f} | {_partner(row)} |", flush=True)
    for spec in args.agents:
        row = score_agent(items, spec, args.seed)
        print(f"| {row['belief']} | {row['brier']:.4f} | {row['log_loss']:.4f} | {row['mean_ess']:.1f} | {row['pool_ms']:.2f} (both) | | {_partner(row)} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
