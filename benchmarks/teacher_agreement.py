"""How often a search teacher agrees with itself, and how often networks agree with it.

Expert iteration fits a network to a search's moves (train/imitate.py); the student's agreement
with the teacher on held-out positions tops out where the teacher's own choices do. This plays
``--games`` games of a training config's environment (its seats, pool and rewards) with the teacher
(seed 1) in the learner's seats, and at every position with more than one legal move asks a second
copy of the teacher (seed 2) and each ``--agent`` for its move. It prints JSON: the teacher's
agreement with itself, and per agent its agreement with the teacher overall, where the two copies
agree (the teacher's consistent choices) and where they do not.

    python benchmarks/teacher_agreement.py --config configs/ppo_4p.yaml --teacher strong --games 30 --agent ppo:models/allfives_4p.zip
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from allfives_agents import make_agent  # noqa: E402
from allfives_train.config import load_config  # noqa: E402
from allfives_train.envs import make_env_fn  # noqa: E402
from allfives_train.imitate import visit_shares  # noqa: E402


def measure(config: str, teacher: str, agents: list[str], games: int, seed: int) -> dict:
    cfg = load_config(config, [f"imitate.teacher={teacher}", "imitate.target=visits", f"seed={seed}"])
    rules = cfg.game.rules()
    first, second = (make_agent(teacher, rules=rules, seed=s) for s in (1, 2))
    players = [make_agent(spec, rules=rules, seed=seed) for spec in agents]
    env = make_env_fn(cfg, 0, list(cfg.pool.heuristics), list(cfg.pool.heuristics.values()))()
    rng = random.Random(seed)
    positions = same = 0
    hits = {spec: {"all": 0, "consistent": 0, "inconsistent": 0} for spec in agents}
    for _ in range(games):
        env.reset(seed=rng.getrandbits(63))
        done = False
        while not done:
            view = env.view()
            move = view.legal_actions[0]
            if len(view.legal_actions) > 1:
                move, _ = visit_shares(first, view)
                other, _ = visit_shares(second, view)
                positions += 1
                same += move == other
                for spec, player in zip(agents, players):
                    hit = player.act(view) == move
                    hits[spec]["all"] += hit
                    hits[spec]["consistent" if move == other else "inconsistent"] += hit
            _, _, terminated, truncated, _ = env.step(move)
            done = terminated or truncated
    share = lambda n, d: round(n / d, 4) if d else None  # noqa: E731
    return {
        "config": config, "teacher": teacher, "games": games, "seed": seed, "positions": positions,
        "teacher_self_agreement": share(same, positions),
        "agents": {spec: {"agreement": share(h["all"], positions), "where_consistent": share(h["consistent"], same),
                          "where_inconsistent": share(h["inconsistent"], positions - same)} for spec, h in hits.items()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="a training config: its game, seats and pool")
    parser.add_argument("--teacher", required=True, help="a search agent spec (ismcts:..., strong)")
    parser.add_argument("--agent", action="append", default=[], help="an agent to compare (repeatable)")
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.config, args.teacher, args.agent, args.games, args.seed), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
