"""The tournament's games as Ray tasks: ``run_tournament(..., ray="auto")`` (``allfives tournament --ray``).

The schedule is cut into chunks of consecutive games; each chunk is one Ray task that plays its
games exactly as a local worker process does (``allfives_agents.tournament.games.Runner``), so the results are the same
for the same seed. A task whose worker dies (a killed process, a lost node) is run again by Ray
(``MAX_RETRIES``); a chunk's results count once, when its task returns, so retried games are neither
lost nor counted twice. Results and records are put back in schedule order. At most ``workers``
chunks are in flight. Ray is imported only here, and only when a tournament asks for it.
"""

from __future__ import annotations

import importlib
import uuid

import allfives_env

from ..registry import AGENTS
from ..spec import AgentSpec
from . import cluster
from .games import Runner, TournamentError

#: how often Ray runs a chunk again after its worker died (application errors are not retried)
MAX_RETRIES = 3

_RUNNERS: dict = {}  # in a Ray worker process: the runner of the current tournament, by run token


def _play_chunk(token: str, setup, tasks: list[tuple[int, int]]) -> list:
    """In a Ray worker: play ``tasks``; the runner (and its agents) is built once per process and tournament."""
    runner = _RUNNERS.get(token)
    if runner is None:
        schedule, specs, sources, registry, keep_records = setup
        AGENTS.update(registry)  # agent kinds registered at run time in the driver (plugins, tests)
        _RUNNERS.clear()
        runner = _RUNNERS[token] = Runner(schedule, specs, keep_records, sources=sources)
    return [runner.play(task) for task in tasks]


def resolve(spec: AgentSpec) -> AgentSpec:
    """What a worker builds for ``spec``: every policy file by its absolute path, so that a relative
    path or a shipped model's name (``onnx:allfives_2p``, ``ismcts:policy=allfives_2p``) means the
    driver's file on every node."""
    return spec.with_absolute_files()


def play_on_ray(schedule, specs, tasks, address: str, workers: int | None, keep_records: bool, collect) -> tuple[list, int]:
    """Play ``tasks`` on Ray; feed the chunks' results, in schedule order, to ``collect(iterable)``.

    Returns what ``collect`` returned and the number of chunks kept in flight (``workers``, or the
    cluster's CPUs). Raises ``cluster.ClusterError`` (no ray, bad address) and the agents' own
    ``TournamentError``, without Ray's traceback around it."""
    agents_package = importlib.import_module("allfives_agents")
    ray, started = cluster.connect(address, num_cpus=workers, modules=(allfives_env, agents_package))
    try:
        workers = workers or cluster.cluster_cpus(ray)
        workers = min(workers, len(tasks))
        size = max(1, min(32, len(tasks) // (workers * 16)))
        chunks = [tasks[i : i + size] for i in range(0, len(tasks), size)]
        registry = {spec.kind: AGENTS[spec.kind] for spec in specs}
        setup = ray.put((schedule, specs, [resolve(s) for s in specs], registry, keep_records))
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(_play_chunk)
        token = uuid.uuid4().hex
        return collect(_in_order(ray, remote, token, setup, chunks, workers, TournamentError)), workers
    finally:
        if started:
            ray.shutdown()


def _in_order(ray, remote, token, setup, chunks, workers, error_type):
    """Yield every game's ``(result, line)`` in schedule order, with at most ``workers`` chunks running."""
    pending, done, next_chunk, next_out = {}, {}, 0, 0
    try:
        while next_out < len(chunks):
            while next_chunk < len(chunks) and len(pending) < workers:
                pending[remote.remote(token, setup, chunks[next_chunk])] = next_chunk
                next_chunk += 1
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                done[pending.pop(ref)] = _get(ray, ref, error_type)
            while next_out in done:
                yield from done.pop(next_out)
                next_out += 1
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


def _get(ray, ref, error_type):
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, error_type):
            raise error_type(str(cause)) from None
        raise error_type(f"a Ray task failed: {type(cause).__name__}: {cause}") from None
    except ray.exceptions.RayError as exc:
        first = str(exc).strip().splitlines()[0]
        raise error_type(f"a Ray task was lost after {MAX_RETRIES} retries: {type(exc).__name__}: {first}") from None
