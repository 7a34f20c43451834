"""Round-robin tournaments between agents: running the schedule here, in worker processes or on Ray, and the results.

``run_tournament(["random", "greedy", "ismcts:iters=200"], Rules.make(num_players=2), games=1000, seed=1)``
plays every pairing (or group, in 3-4 player cut-throat games) ``games`` times and returns a
``TournamentResult`` with pairwise win rates, confidence intervals and Elo ratings
(``allfives_agents.tournament.stats``). Game ``g`` of a pairing is a pure function of the base seed, its
deal index and the seating, so results and records do not depend on ``workers``; every pairing
plays the same deals.
docs/tournament.md describes the schedule and the statistics.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Sequence

from threadpoolctl import threadpool_limits

from allfives_env.engine import Rules
from allfives_env.episode import DEFAULT_MAX_HANDS, EpisodeSpec
from allfives_env.progress import progress as progress_bar

from ..base import Agent
from ..factory import make_agent
from ..registry import AGENTS
from ..spec import AgentSpec, parse_specs
from .games import Runner, Schedule, TournamentError, agent_labels, make_schedule
from .resume import ResumeError, kept_results
from .stats import GameResult, summarize

RESULT_FORMAT = "allfives-tournament/1"


def check_specs(specs: Sequence[AgentSpec | str], rules: Rules | None = None) -> None:
    """``TournamentError`` for a bad spec, a missing policy file or, given ``rules``, a named bot
    with no setting for them."""
    for spec in specs:
        try:
            spec = AgentSpec.parse(spec)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        missing = spec.missing_files()
        if missing:
            raise TournamentError(missing[0])
        if rules is not None:
            try:
                spec.for_game(rules.num_players, rules.partnerships)
            except ValueError as exc:
                raise TournamentError(str(exc)) from None


_WORKER: Runner | None = None


def _init_worker(schedule: Schedule, specs: list[AgentSpec], registry: dict, keep_records: bool) -> None:
    global _WORKER
    # one process per core: a BLAS thread pool per worker on top would fight the others for the
    # cores (a search with batched network calls played 3.5x fewer games a second). threadpoolctl
    # limits the libraries loaded, so numpy's BLAS is loaded first.
    import numpy  # noqa: F401

    threadpool_limits(1)
    AGENTS.update(registry)  # agent kinds registered at run time in the parent (plugins, tests)
    _WORKER = Runner(schedule, specs, keep_records)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """Stop this worker once the tournament that started it is gone (killed: it cannot shut its workers
    down), instead of playing its games for nobody; on POSIX an orphan's parent becomes another process."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _play_in_worker(task: tuple[int, int]):
    return _WORKER.play(task)


# ---------------------------------------------------------------------------------------------- results
@dataclass
class TournamentResult:
    """What a tournament produced: configuration, pairings, per-agent statistics, ratings, speed.

    ``pairings`` items have ``a, b, games, a_wins, b_wins, draws, a_win_rate, ci_low, ci_high,
    mean_score_diff, a_points_per_hand, b_points_per_hand``; ``agents`` items (in the order given)
    ``agent, rank, rating, rating_se, games, wins, win_rate, ci_low, ci_high, points_per_hand``; ``ratings``
    maps agent to Elo rating, best first; ``results`` holds every game's ``GameResult`` in order.
    """

    config: dict
    pairings: list[dict]
    agents: list[dict]
    ratings: dict[str, float]
    games: int
    hands: int
    seconds: float
    results: list[GameResult] = field(repr=False, default_factory=list)

    @property
    def games_per_s(self) -> float | None:
        """Games played per second by this run (the games kept by a resume took no time in it)."""
        played = self.games - self.config.get("resumed_games", 0)
        return played / self.seconds if self.seconds > 0 and played else None

    def pairing(self, a: str, b: str) -> dict:
        """The pairing of ``a`` and ``b``, seen from ``a`` (rates and scores swapped if stored as ``b`` vs ``a``)."""
        for p in self.pairings:
            if (p["a"], p["b"]) == (a, b):
                return dict(p)
            if (p["a"], p["b"]) == (b, a):
                return {
                    **p,
                    "a": a,
                    "b": b,
                    "a_wins": p["b_wins"],
                    "b_wins": p["a_wins"],
                    "a_win_rate": 1 - p["a_win_rate"],
                    "ci_low": 1 - p["ci_high"],
                    "ci_high": 1 - p["ci_low"],
                    "mean_score_diff": -p["mean_score_diff"],
                    "a_points_per_hand": p["b_points_per_hand"],
                    "b_points_per_hand": p["a_points_per_hand"],
                }
        raise KeyError(f"{a!r} and {b!r} did not meet")

    def ranked(self) -> list[dict]:
        """Per-agent statistics from the best rating to the worst."""
        return sorted(self.agents, key=lambda s: s["rank"])

    def to_dict(self) -> dict:
        """Everything as plain JSON-ready data (the ``results.json`` of ``allfives tournament --out``)."""
        return {
            "format": RESULT_FORMAT,
            "config": self.config,
            "games": self.games,
            "hands": self.hands,
            "seconds": round(self.seconds, 4),
            "games_per_s": round(self.games_per_s, 2) if self.games_per_s else None,
            "ratings": {name: round(r, 2) for name, r in self.ratings.items()},
            "agents": [_rounded(s) for s in self.agents],
            "pairings": [_rounded(p) for p in self.pairings],
        }


def _rounded(stats: dict) -> dict:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in stats.items()}


def run_tournament(
    agents: str | Sequence,
    rules: Rules | dict | None = None,
    games: int = 100,
    seed: int = 0,
    duplicate: bool = True,
    workers: int | None = None,
    progress: bool = False,
    records: str | os.PathLike | None = None,
    prior_games: float = 1.0,
    max_hands: int | None = DEFAULT_MAX_HANDS,
    ray: str | None = None,
    resume: bool = False,
) -> TournamentResult:
    """Play a round-robin tournament and compute its statistics.

    ``agents``: spec strings (``"greedy"``, ``"ismcts:iters=200,rollout=greedy"``) or ``Agent``
    objects, or one comma-separated string; at least two. ``rules``: a ``Rules``, a dict of rule
    options, or ``None`` for the 2-player defaults. ``games``: per pairing (per group in 3-4 player
    cut-throat games), rounded up to whole blocks of seat rotations. ``duplicate``: replay each
    deal with the seats rotated. ``workers > 1`` plays in that many processes (specs only; default 1). ``ray``: play the
    games as Ray tasks instead (specs only; ``allfives_agents.tournament.on_ray``): ``"local"`` starts a Ray
    here with ``workers`` CPUs (default: every core), ``"auto"`` joins the cluster of
    ``RAY_ADDRESS``, ``"HOST:PORT"`` that one; ``workers`` is then the number of chunks in flight
    (default: the cluster's CPUs). The results are the same either way.
    ``records``: a path to write every game's ``allfives-record/1`` as JSON Lines, in schedule
    order, each as it finishes. ``resume``: keep the games ``records`` already holds from an earlier
    run of the same tournament (replayed and checked: ``allfives_agents.tournament.resume``) and play only the
    rest. ``prior_games``: the Elo prior (virtual draws against a fixed opponent per agent).
    Raises ``TournamentError`` for a bad argument or an agent that fails.
    """
    if isinstance(rules, dict):
        rules = Rules.from_dict(rules)
    elif rules is None:
        rules = Rules.make()
    try:  # the text at the edge parsed once; a named bot becomes its setting for these rules
        given = parse_specs(agents) if isinstance(agents, (str, AgentSpec)) else [
            a if isinstance(a, Agent) or (callable(a) and not isinstance(a, str)) else AgentSpec.parse(a) for a in agents
        ]
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    agents = given
    if len(agents) < 2:
        raise TournamentError(f"a tournament needs at least 2 agents, got {len(agents)}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise TournamentError(f"games must be a positive integer, got {games!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise TournamentError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TournamentError(f"seed must be an integer, got {seed!r}")
    if not prior_games >= 0:
        raise TournamentError(f"prior_games must be 0 or more, got {prior_games!r}")
    specs = [a for a in agents if isinstance(a, AgentSpec)]
    check_specs(specs, rules)
    for a in agents:
        if not isinstance(a, (AgentSpec, Agent)) and not callable(a):
            raise TournamentError(f"an agent must be a spec, an Agent or a function, got {a!r}")
    if (ray is not None or (workers or 1) > 1) and len(specs) < len(agents):
        where = "on Ray" if ray is not None else "with workers > 1"
        raise TournamentError(f"{where} every agent must be a spec string or AgentSpec (objects cannot be sent to workers)")
    agents = [a.for_game(rules.num_players, rules.partnerships) if isinstance(a, AgentSpec) else make_agent(a) for a in agents]

    names = agent_labels(agents)
    try:
        EpisodeSpec(max_hands=max_hands)  # a tournament plays whole games: only the hand limit applies
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    schedule = make_schedule(names, rules, games, seed, duplicate, max_hands)
    tasks = [(p, g) for p in range(len(schedule.lineups)) for g in range(schedule.games_per_pairing)]
    kept: list[GameResult] = []
    if resume:
        if records is None:
            raise TournamentError("resume needs the records file of the earlier run (records=, or --out DIR)")
        try:
            kept = kept_results(records, schedule, tasks)
        except ResumeError as exc:
            raise TournamentError(f"cannot resume: {exc}") from None
        tasks = tasks[len(kept):]
    if ray is None:
        workers = min(workers or 1, max(1, len(tasks)))

    out = None
    if records is not None:
        try:  # line-buffered: every finished game is on disk, for a later resume
            out = open(records, "a" if resume else "w", encoding="utf-8", buffering=1)
        except OSError as exc:
            raise TournamentError(f"cannot write records to {records}: {exc.strerror or exc}") from None

    results: list[GameResult] = []
    bar = progress_bar(len(tasks), "tournament", enabled=progress)
    start = time.perf_counter()
    try:
        if not tasks:
            pass  # every game was kept from the earlier run
        elif ray is not None:
            from . import cluster
            from .on_ray import play_on_ray

            collect = lambda played: _collect(played, out, bar)  # noqa: E731
            try:
                results, workers = play_on_ray(schedule, agents, tasks, ray, workers, out is not None, collect)
            except cluster.ClusterError as exc:
                raise TournamentError(str(exc)) from None
        elif workers == 1:
            played = map(Runner(schedule, agents, out is not None).play, tasks)
            results = _collect(played, out, bar)
        else:
            registry = {spec.kind: AGENTS[spec.kind] for spec in agents}
            results = _play_in_workers(schedule, agents, registry, tasks, workers, out, bar)
    finally:
        bar.close()
        if out is not None:
            out.close()
    seconds = time.perf_counter() - start
    results = kept + results

    pairings, agent_stats, ratings = summarize(results, names, rules.side_of, prior_games=prior_games)
    config = {
        "agents": names,
        "specs": [(a.text() if a.bot else a.label) if isinstance(a, AgentSpec) else getattr(a, "name", None) for a in agents],
        "rules": rules.to_dict(),
        "seed": seed,
        "duplicate": duplicate,
        "schedule": schedule.kind,
        "lineups": [[names[x] for x in lineup] for lineup in schedule.lineups],
        "block_size": schedule.rotations,
        "games_requested": games,
        "games_per_pairing": schedule.games_per_pairing,
        "workers": workers,
        "elo_prior_games": prior_games,
        "max_hands": max_hands,
        "resumed_games": len(kept),
    }
    return TournamentResult(
        config=config,
        pairings=pairings,
        agents=agent_stats,
        ratings=ratings,
        games=len(results),
        hands=sum(r.hands for r in results),
        seconds=seconds,
        results=results,
    )


def _play_in_workers(schedule, specs, registry, tasks, workers, out, bar) -> list[GameResult]:
    """Play ``tasks`` in ``workers`` spawned processes; results come back in task order."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunksize = max(1, min(32, len(tasks) // (workers * 16)))
    executor = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(schedule, specs, registry, out is not None),
    )
    try:
        return _collect(executor.map(_play_in_worker, tasks, chunksize=chunksize), out, bar)
    except BrokenProcessPool as exc:
        message = f"a worker process stopped unexpectedly ({exc}); run with one worker to see why"
        raise TournamentError(message) from None
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def _collect(played, out, bar) -> list[GameResult]:
    results = []
    for result, line in played:
        results.append(result)
        if out is not None:
            out.write(line)
            out.write("\n")
        bar.update()
    return results
