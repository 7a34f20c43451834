"""Cost of the lookahead pieces: µs per view of ``encode_follow_up_net`` (observation version 4),
``encode_follow_up`` (version 3), ``encode_lookahead`` (version 2), the version-1 ``encode`` and
``expert``'s ``act``, on the same views.

The views are the decisions of seeded games played by random legal moves in the four variants
(2 and 3 players, 4 in partnerships, 4 cut-throat), each taken from a copy of its game that is
never stepped (sharing its ``Rules``), so every view sees its layout as the environment's views do. Each round times every
view with each function in turn (so machine noise hits all alike); the figure of a function is the
median over rounds of its mean µs per view, ``ratio`` that of ``encode_lookahead`` / ``encode``,
``ratio_follow_up_v2`` that of ``encode_follow_up`` / ``encode_lookahead`` and ``ratio_v4_v3`` that of
``encode_follow_up_net`` / ``encode_follow_up``.

    python benchmarks/lookahead_speed.py --views 2000 --rounds 7
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allfives_agents import make_agent  # noqa: E402
from allfives_env.engine import Game  # noqa: E402
from allfives_env.engine.rules import Rules  # noqa: E402
from allfives_env.observation import ACCELERATED, encode, encode_follow_up, encode_follow_up_net, encode_lookahead  # noqa: E402

VARIANTS = (dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False))


def views(count: int, seed: int) -> list:
    """``count`` views of the seat to act, a quarter from each variant, from random-move games."""
    rng = random.Random(seed)
    found = []
    for i, options in enumerate(VARIANTS):
        rules = Rules.make(**options)
        want = count * (i + 1) // len(VARIANTS)
        game_seed = seed * 1000 + 100 * i
        while len(found) < want:
            game = Game(rules, seed=game_seed, max_hands=2)
            game_seed += 1
            while not game.over and len(found) < want:
                found.append(copy.deepcopy(game, {id(rules): rules}).view(game.current_player))
                game.step(rng.choice(game.legal_actions()))
    return found


def mean_us(fn, items) -> float:
    """Mean µs of ``fn`` per item, over one pass."""
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    items = views(args.views, args.seed)
    expert = make_agent("expert")
    contestants = {"encode_follow_up_net": encode_follow_up_net, "encode_follow_up": encode_follow_up, "encode_lookahead": encode_lookahead, "encode": encode, "expert_act": expert.act}
    times: dict[str, list[float]] = {name: [] for name in contestants}
    for _ in range(args.rounds):
        for name, fn in contestants.items():
            times[name].append(mean_us(fn, items))
    med = {name: statistics.median(t) for name, t in times.items()}
    ratio = statistics.median(a / b for a, b in zip(times["encode_lookahead"], times["encode"]))
    ratio3 = statistics.median(a / b for a, b in zip(times["encode_follow_up"], times["encode_lookahead"]))
    ratio4 = statistics.median(a / b for a, b in zip(times["encode_follow_up_net"], times["encode_follow_up"]))
    encoder = "C encoder" if ACCELERATED else "Python encoder"
    for name, us in med.items():
        print(f"{name:<18} {us:>8.2f} µs/view")
    print(f"encode_lookahead / encode ({encoder}): {ratio:.1f}x, encode_follow_up / encode_lookahead: {ratio3:.2f}x, "
          f"encode_follow_up_net / encode_follow_up: {ratio4:.2f}x"
          f" over {len(items)} views, {args.rounds} rounds")
    if args.json:
        print(json.dumps({"us_per_view": {k: round(v, 2) for k, v in med.items()}, "ratio_lookahead_v1": round(ratio, 2), "ratio_follow_up_v2": round(ratio3, 2), "ratio_v4_v3": round(ratio4, 2),
                          "views": len(items), "rounds": args.rounds, "accelerated": ACCELERATED}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
