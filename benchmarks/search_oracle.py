"""What hidden information is worth to a search bot: duplicate matches where agent A's ``ismcts`` may
see what its seat cannot (a diagnostic, never a way to play).

The search samples "possible worlds" for what its seat cannot see (``allfives_agents.search.belief``). Here A's
search may instead be handed the truth, to measure the ceiling that better inference could reach:

- ``--see all``: the other hands and the boneyard order;
- ``--see hands``: the other hands; the boneyard order stays sampled;
- ``--see partner`` / ``--see opponents`` (partnerships): those seats' hands; the rest stays sampled
  (among the tiles they leave, with the public facts as the search has them);
  (both with the default ``belief=uniform``: a ``belief=policy`` search samples its own pool)
- ``--see none`` (default): the agent as it plays.

An exact model of an ``expert`` opponent as the model of play is an agent option now
(``belief=expert``, ``allfives_agents.search.ismcts``); the tournament plays it. ``--value-scale`` changes
the hand value's scale, ``allfives_agents.search.ismcts.VALUE_SCALE`` (40). Games are those of ``allfives
tournament`` for the same seed (``allfives_agents.tournament.run.make_schedule``): the same deals, seats swapped
within each pair.

    python benchmarks/search_oracle.py ismcts:iters=100,policy=allfives_2p expert --games 400 --see hands
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from threadpoolctl import threadpool_limits  # noqa: E402

import allfives_agents.search.ismcts as ismcts  # noqa: E402
from allfives_agents import make_agent  # noqa: E402
from allfives_agents.tournament import make_schedule  # noqa: E402
from allfives_agents.search.belief import HiddenSampler  # noqa: E402
from allfives_agents.tournament.stats import wilson_interval  # noqa: E402
from allfives_env.engine import Game, Rules  # noqa: E402

_TRUE_GAME: Game | None = None
_UNIFORM = ismcts.determinizer


class _PartlySeen(HiddenSampler):
    """``HiddenSampler`` for a view that also knows the true hands of ``seen`` seats."""

    def __init__(self, view, hands: list[int], seen: set[int]) -> None:
        super().__init__(view)
        self.known = {s: hands[s] for s in seen}
        for hand in self.known.values():
            self.unseen &= ~hand
        self.order = [s for s in self.order if s not in seen]

    def __call__(self, rng):
        hands, boneyard = super().__call__(rng)
        for s, hand in self.known.items():
            hands[s] = hand
        return hands, boneyard


def _seeing(see: str):
    """A ``determinizer`` for A's search that hands it the true world (``see`` says how much)."""

    def determinizer(view, max_hands=1):
        if see in ("partner", "opponents"):
            side_of = view.rules.side_of
            mine = side_of[view.seat]
            seen = {s for s in range(len(side_of)) if s != view.seat and (side_of[s] == mine) == (see == "partner")}
            sample = _PartlySeen(view, list(_TRUE_GAME.hands), seen)
            return lambda rng: ismcts.world_game(view, *sample(rng), rng, max_hands)

        def world(rng):
            game = _TRUE_GAME
            boneyard = list(game.boneyard[game.draw_pos :])
            if see == "hands":
                rng.shuffle(boneyard)
            return ismcts.world_game(view, list(game.hands), boneyard, rng, max_hands)

        return world

    return determinizer


def _setup(options: dict) -> None:
    threadpool_limits(1)
    if options["value_scale"]:
        ismcts.VALUE_SCALE = options["value_scale"]


def _play(task) -> float:
    """A's share of game ``index`` of the match (1, 0, or 0.5 for a game with no winner)."""
    global _TRUE_GAME
    options, index = task
    rules = Rules.make(num_players=options["players"])
    schedule = make_schedule([options["a"], options["b"]], rules, options["games"], options["seed"])
    plan = schedule.plan(0, index)
    agents = [make_agent([options["a"], options["b"]][x]) for x in plan.seating]
    for agent, seed in zip(agents, plan.agent_seeds):
        agent.reset(seed)
    game = _TRUE_GAME = Game(rules, plan.seed, max_hands=schedule.max_hands)
    seeing = _seeing(options["see"]) if options["see"] != "none" else _UNIFORM
    while not game.over:
        seat = game.current_player
        ismcts.determinizer = seeing if plan.seating[seat] == 0 else _UNIFORM
        game.step(agents[seat].act(game.view(seat)))
    if game.winner is None:
        return 0.5
    winners = [s for s in range(rules.num_players) if rules.side_of[s] == game.winner]
    return 1.0 if plan.seating[winners[0]] == 0 else 0.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="agent A (an ismcts spec)")
    parser.add_argument("b", help="agent B")
    parser.add_argument("--see", choices=("none", "hands", "all", "partner", "opponents"), default="none")
    parser.add_argument("--value-scale", type=float, default=0.0, help="the hand value's tanh scale (default: the agent's 40)")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.see in ("partner", "opponents") and args.players != 4:
        parser.error(f"--see {args.see} is for partnerships: --players 4")
    options = dict(vars(args))
    games = make_schedule([args.a, args.b], Rules.make(num_players=args.players), args.games, args.seed).games_per_pairing
    start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.workers, initializer=_setup, initargs=(options,)) as pool:
        shares = pool.map(_play, [(options, g) for g in range(games)], chunksize=4)
    wins = sum(shares)
    low, high = wilson_interval(wins, games)
    report = dict(a=args.a, b=args.b, see=args.see, value_scale=args.value_scale or None,
                  games=games, a_wins=wins, a_win_rate=round(wins / games, 4), ci_low=round(low, 4), ci_high=round(high, 4),
                  seconds=round(time.perf_counter() - start, 1))
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.a} vs {args.b} (sees {args.see}): {wins:g}/{games} = "
              f"{100 * wins / games:.1f}% [{100 * low:.1f}, {100 * high:.1f}] in {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
