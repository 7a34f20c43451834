"""How many sampled worlds break what the other seats' earlier draws and passes tell.

The engine keeps, per seat, the pips it is known to lack (``missing_pips``); after a turn in which
the seat drew a tile it could not place, only that turn's open pips stay known, since the drawn
tile may show the older ones (``allfives_env.engine.turn.missing_after_turn``). The older turns
still say something: every tile the seat held at the end of a turn in which it drew or passed
lacked that turn's open pips, so of the tiles it holds now or placed (not straight after drawing)
since, at most as many as it drew and kept since can show them. This script samples worlds the
way the search does (``allfives_agents.search.belief.HiddenSampler``) at positions of expert self-play and counts
those that break that condition for some earlier turn: what a finer, per-draw sampler would remove.

    python benchmarks/belief_draws.py --players 2 --positions 600 --worlds 100
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_time import positions  # noqa: E402

from allfives_agents.search.belief import HiddenSampler  # noqa: E402
from allfives_env.engine.events import DRAW, PASS, PLAY, play_end  # noqa: E402
from allfives_env.engine.layout import Layout  # noqa: E402
from allfives_env.engine.rules import Rules  # noqa: E402
from allfives_env.lookahead import TILES_WITH_PIPS  # noqa: E402


def turns(history) -> list[tuple[int, int, int, int, int]]:
    """``(seat, last event index, open pips mask at the turn's start, draws, kind of the last event)`` per turn."""
    layout, out, start = Layout(), [], None
    for i, e in enumerate(history):
        if start is None:
            start, opens, draws = i, layout.open_pips_mask(), 0
        draws += e[0] == DRAW
        if e[0] == PLAY:
            layout.place(e[2], play_end(e[3], layout.num_tiles == 0))
        if e[0] in (PLAY, PASS):
            out.append((e[1], i, opens, draws, e[0]))
            start = None
    return out


def draw_constraints(view) -> list[tuple[int, int, int, int]]:
    """``(seat, tiles showing the turn's open pips, tiles placed by choice since, draws kept since)``
    for every earlier turn of another seat that drew or passed."""
    history, all_turns, out = view.history, turns(view.history), []
    for seat, last, opens, draws, kind in all_turns:
        if seat == view.seat or (draws == 0 and kind == PLAY):
            continue
        placed = kept = 0
        for s, i, _, d, k in all_turns:
            if s != seat or i <= last:
                continue
            if k == PLAY and d == 0:
                placed |= 1 << history[i][2]
            kept += d - 1 if k == PLAY and d else d
        out.append((seat, TILES_WITH_PIPS[opens], placed, kept))
    return out


def consistent(hands: list[int], constraints) -> bool:
    return all(((hands[s] | placed) & shows).bit_count() <= kept for s, shows, placed, kept in constraints)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=600)
    parser.add_argument("--worlds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    checked = broken = loose = with_facts = 0
    for view in positions(Rules.make(num_players=args.players), args.positions, args.seed):
        constraints = draw_constraints(view)
        if not constraints:
            continue
        with_facts += 1
        sample = HiddenSampler(view)
        for _ in range(args.worlds):
            checked += 1
            broken += not consistent(sample(rng)[0], constraints)
        sample.allow = [sample.unseen] * len(sample.allow)  # the control: known-missing pips ignored
        loose += sum(not consistent(sample(rng)[0], constraints) for _ in range(args.worlds))
    print(
        f"{args.players} players: {with_facts} of {args.positions} positions follow a draw or a pass; "
        f"{broken} of {checked} sampled worlds break an earlier turn "
        f"({loose} when the known-missing pips are ignored)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
