"""Environment speed: decisions/s of the All Fives AEC env beside PettingZoo connect_four_v3 and
OpenSpiel python_team_dominoes, in the same run.

Each contestant plays complete episodes with uniformly random legal actions and builds the
observation of the player to act at every decision: for the PettingZoo envs through the usual
``agent_iter`` / ``last`` / ``step`` loop (default wrappers, or ``--raw`` for the unwrapped envs on both
sides), for OpenSpiel with ``observation_tensor()``. Rounds are interleaved so machine noise hits
all alike; the medians and the ratios are printed. The All Fives observation and mask are built
from the game by the C accelerator where it was built (``allfives_env.observation.GameObserver``);
``--pure`` measures the pure-Python encoder of a ``PlayerView`` instead.

Two more rows compare gymnasium's vector API on ``--vector`` games (default 16) against the shipped
``ppo:`` network of that many players: ``allfives_env.gym_vector.AllFivesVectorEnv`` (the network
asked once for all the games waiting on it) and ``gymnasium.vector.SyncVectorEnv`` over the same
``SingleAgentEnv``\ s, counting the learner's decisions (random legal actions); ``--vector 0`` skips them.

    python benchmarks/env_speed.py --seconds 15
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages


def pettingzoo_decisions(make_env, seconds: float, seed: int) -> tuple[int, float]:
    env = make_env()
    rng = random.Random(seed)
    decisions = 0
    episode = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.randrange(len(legal))])
                decisions += 1
            env.step(action)
    return decisions, time.perf_counter() - start


def openspiel_decisions(seconds: float, seed: int) -> tuple[int, float]:
    import pyspiel
    from open_spiel.python.games import team_dominoes  # noqa: F401  (registers the python game)

    game = pyspiel.load_game("python_team_dominoes")
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                np.asarray(state.observation_tensor(state.current_player()), dtype=np.float32)
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
    return decisions, time.perf_counter() - start


def vector_decisions(make_vec, seconds: float, seed: int) -> tuple[int, float]:
    envs = make_vec()
    rng = np.random.default_rng(seed)
    _, info = envs.reset(seed=seed)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = info["action_mask"]
        actions = np.zeros(len(masks), np.int64)
        for i, mask in enumerate(masks):
            legal = np.flatnonzero(mask)
            if legal.size:  # none: the step that autoresets a game that ended
                actions[i] = legal[rng.integers(legal.size)]
                decisions += 1
        _, _, _, _, info = envs.step(actions)
    elapsed = time.perf_counter() - start
    envs.close()
    return decisions, elapsed


def vector_contestants(players: int, n: int):
    """``{label: make_vec}`` for the two vector envs against the shipped network, or ``{}``."""
    from gymnasium.vector import SyncVectorEnv

    from allfives_agents import make_agent
    from allfives_env.gym_vector import AllFivesVectorEnv
    from allfives_env.single_agent import SingleAgentEnv

    model = Path(__file__).resolve().parents[1] / "models" / f"allfives_{players}p.zip"
    if n < 1 or not model.exists():
        return {}

    def single():
        return SingleAgentEnv(opponents=make_agent(f"ppo:{model}"), num_players=players)

    return {
        "AllFivesVectorEnv": lambda: AllFivesVectorEnv(env_fns=[single] * n),
        "SyncVectorEnv": lambda: SyncVectorEnv([single] * n),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per contestant in all (default 15)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--players", type=int, default=4, help="All Fives players (default 4, as team dominoes)")
    parser.add_argument("--raw", action="store_true", help="unwrapped PettingZoo envs on both sides")
    parser.add_argument("--pure", action="store_true", help="the pure-Python observation encoder, not the C accelerator")
    parser.add_argument("--vector", type=int, default=16, help="games in the vector-env rows (0: skip them)")
    parser.add_argument("--obs-version", type=int, default=None,
                        help="the All Fives observation version (default: the environments' default, OBS_VERSION)")
    parser.add_argument("--info-events", default="array", help="the AEC env's info_events (array, the default, or list)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        import pyspiel  # noqa: F401
        from pettingzoo.classic import connect_four_v3
    except ImportError as exc:
        parser.exit(2, f"missing a peer ({exc.name}): pip install -e '.[bench]'\n")
    if args.pure:
        os.environ["ALLFIVES_PURE_PYTHON"] = "1"  # read when allfives_env.observation is first imported
    import allfives_env.aec as aec
    from allfives_env.observation import GAME_ACCELERATED, OBS_VERSION

    obs_version = OBS_VERSION if args.obs_version is None else args.obs_version
    options = dict(num_players=args.players, obs_version=obs_version, info_events=args.info_events)

    if args.raw:
        ours = lambda: aec.raw_env(**options)  # noqa: E731
        c4 = lambda: connect_four_v3.raw_env()  # noqa: E731
    else:
        ours = lambda: aec.env(**options)  # noqa: E731
        c4 = lambda: connect_four_v3.env()  # noqa: E731
    vectors = vector_contestants(args.players, args.vector)
    per_round = args.seconds / args.rounds
    rates = {"allfives": [], "connect_four_v3": [], "python_team_dominoes": [], **{k: [] for k in vectors}}
    for r in range(args.rounds):
        d, s = pettingzoo_decisions(ours, per_round, args.seed + 1000 * r)
        rates["allfives"].append(d / s)
        d, s = pettingzoo_decisions(c4, per_round, args.seed + 1000 * r)
        rates["connect_four_v3"].append(d / s)
        d, s = openspiel_decisions(per_round, args.seed + r)
        rates["python_team_dominoes"].append(d / s)
        for label, make_vec in vectors.items():
            d, s = vector_decisions(make_vec, per_round, args.seed + 1000 * r)
            rates[label].append(d / s)
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratio_c4 = statistics.median(a / b for a, b in zip(rates["allfives"], rates["connect_four_v3"]))
    ratio_os = statistics.median(a / b for a, b in zip(rates["allfives"], rates["python_team_dominoes"]))
    kind = "raw" if args.raw else "wrapped"
    encoder = "C observation" if GAME_ACCELERATED else "Python encoder"
    rows = [
        (f"All Fives AEC ({args.players}p, {kind}, {encoder}, obs v{obs_version}, {args.info_events} events)", med["allfives"], ""),
        (f"PettingZoo connect_four_v3 ({kind})", med["connect_four_v3"], f"   ratio {ratio_c4:.2f}x"),
        ("OpenSpiel python_team_dominoes", med["python_team_dominoes"], f"   ratio {ratio_os:.2f}x"),
    ]
    if vectors:
        ratio_vec = statistics.median(a / b for a, b in zip(rates["AllFivesVectorEnv"], rates["SyncVectorEnv"]))
        rows += [
            (f"AllFivesVectorEnv ({args.vector} games vs ppo)", med["AllFivesVectorEnv"], f"   ratio {ratio_vec:.2f}x"),
            (f"gymnasium SyncVectorEnv ({args.vector} games vs ppo)", med["SyncVectorEnv"], ""),
        ]
    for label, rate, ratio in rows:
        print(f"{label:<72} {rate:>10,.0f} decisions/s{ratio}")
    if args.json:
        print(json.dumps({"decisions_per_s": {k: round(v) for k, v in med.items()}, "ratio_connect_four": round(ratio_c4, 2),
                          "ratio_team_dominoes": round(ratio_os, 2), "wrapped": not args.raw, "players": args.players,
                          "obs_version": obs_version, "info_events": args.info_events,
                          "accelerated": GAME_ACCELERATED,
                          **({"ratio_vector_env": round(ratio_vec, 2), "vector_games": args.vector} if vectors else {})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
