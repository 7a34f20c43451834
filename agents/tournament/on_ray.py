"""The tournament's games as Ray tasks: ``run_tournament(..., ray="auto")`` (``allfives tournament --ray``).

The schedule is cut into chunks of consecutive games; each chunk is one Ray task that plays its
games exactly as a local worker process does (``allfives_agents.tournament.games.Runner``), so the results are the same
for the same seed. A task whose worker dies (a killed process, a lost node) is run again by Ray
(``MAX_RETRIES``); a chunk's results count once, when its task returns, so retried games are neither
lost nor counted twice. Results and records are put back in schedule order. At most ``workers``
chunks are in flight. Ray is imported only here, and only when a tournament asks for it.

The Ray driver runs in a child process (``_drive``) that sends every game back as it is played,
and this process keeps the records: when the driver's node dies (its raylet, or an agent the
raylet shares its fate with, killed), Ray ends the driver at once, exit status 1 and no exception
to catch, so only a process outside it can tell. That, and any error of Ray's own, is ``RayLost``:
one line, the games played so far kept. A Ray the caller started itself (a notebook, a test) is
used in this process, as it is.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import threading
import uuid

import allfives_env

from ..registry import AGENTS
from ..spec import AgentSpec
from . import cluster
from .games import Runner, TournamentError

#: how often Ray runs a chunk again after its worker died (application errors are not retried)
MAX_RETRIES = 3

_RUNNERS: dict = {}  # in a Ray worker process: the runner of the current tournament, by run token


class RayLost(TournamentError):
    """Ray failed under the tournament (its node, a worker, the driver lost); the games returned
    before it are kept, so a run with records can be resumed."""


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
    cluster's CPUs). Raises ``cluster.ClusterError`` (no ray, bad address), the agents' own
    ``TournamentError`` and ``RayLost``, without Ray's traceback around them."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return _play(schedule, specs, tasks, address, workers, keep_records, collect)
    cluster.check_address(address)
    cluster.import_ray()
    return _supervise(schedule, specs, tasks, address, workers, keep_records, collect)


def _play(schedule, specs, tasks, address, workers, keep_records, collect, tidy: bool = True) -> tuple[list, int]:
    """``play_on_ray`` in this process, the Ray driver. ``tidy``: cancel the chunks in flight after an
    error and shut down a Ray started here (the child driver leaves both to its exit, after it has
    sent its outcome: Ray ends a finished driver's tasks, and a force-cancel racing a chunk's return
    can crash the driver)."""
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
        return collect(_in_order(ray, remote, token, setup, chunks, workers, TournamentError, tidy)), workers
    except Exception as exc:
        if isinstance(exc, TournamentError) or not _of_ray(ray, exc):
            raise
        raise _lost(exc) from None
    finally:
        if started and tidy:
            ray.shutdown()


def _in_order(ray, remote, token, setup, chunks, workers, error_type, cancel: bool = True):
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
        for ref in pending if cancel else ():
            try:
                ray.cancel(ref, force=True)
            except Exception:  # a Ray that is gone has nothing left to cancel  # noqa: S110
                pass


def _get(ray, ref, error_type):
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, error_type):
            raise error_type(str(cause)) from None
        raise error_type(f"a Ray task failed: {type(cause).__name__}: {cause}") from None


def _of_ray(ray, exc: BaseException) -> bool:
    """Whether ``exc`` is one of Ray's own errors (``RayError`` and its family: a node, a worker, an
    object or the raylet lost), or any error raised from Ray's package."""
    return isinstance(exc, ray.exceptions.RayError) or type(exc).__module__.split(".")[0] == "ray"


def _lost(exc: BaseException) -> RayLost:
    lines = str(exc).strip().splitlines()
    return RayLost(f"Ray failed under the tournament ({type(exc).__name__}: {lines[0][:300] if lines else 'no message'})")


# the driver in a child process -----------------------------------------------------------------------


def _supervise(schedule, specs, tasks, address, workers, keep_records, collect) -> tuple[list, int]:
    """``_play`` in a child process (``_drive``); its games come back through a pipe to ``collect``."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    registry = {spec.kind: AGENTS[spec.kind] for spec in specs}  # agent kinds registered at run time
    child = context.Process(target=_drive, args=(sender, schedule, specs, tasks, address, workers, keep_records, registry),
                            name="allfives-ray-driver")
    child.start()
    sender.close()
    outcome: dict = {}
    try:
        played = collect(_received(receiver, child, len(tasks), outcome))
    finally:
        receiver.close()  # a driver still playing stops at its next game
        _stop(child, grace=60 if "workers" in outcome else 5)
    return played, outcome["workers"]


def _received(receiver, child, total: int, outcome: dict):
    """The games the driver sends, until it says it is done (``outcome["workers"]``) or fails."""
    played = 0
    while True:
        try:
            kind, value = receiver.recv()
        except EOFError:
            child.join(10)
            raise RayLost(f"the Ray driver stopped (exit status {child.exitcode}) after {played} of {total} games, with no error "
                          "of its own, as Ray stops a driver whose node died (its raylet, or an agent of it, killed or out of memory)") from None
        if kind == "game":
            played += 1
            yield value
        elif kind == "done":
            outcome["workers"] = value
            return
        else:
            raise {"lost": RayLost, "cluster": cluster.ClusterError}.get(kind, TournamentError)(value)


def _drive(sender, schedule, specs, tasks, address, workers, keep_records, registry) -> None:
    """In the child process: play on Ray, sending ``("game", (result, line))`` for every game, then
    ``("done", workers)``, or one error: ``("lost" | "cluster" | "error", message)``."""
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    AGENTS.update(registry)

    def send_all(games) -> None:
        for game in games:
            sender.send(("game", game))

    try:
        _, workers = _play(schedule, specs, tasks, address, workers, keep_records, send_all, tidy=False)
        message = ("done", workers)
    except RayLost as exc:
        message = ("lost", str(exc))
    except TournamentError as exc:
        message = ("error", str(exc))
    except cluster.ClusterError as exc:
        message = ("cluster", str(exc))
    except (KeyboardInterrupt, BrokenPipeError):  # the tournament itself was stopped
        return
    except Exception as exc:  # anything else: one line, not a traceback in a child process
        message = ("error", f"the Ray driver failed: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    try:
        sender.send(message)
    except OSError:
        pass
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def _exit_with_parent() -> None:
    """In the child process: end it (and so its Ray) once the tournament is gone (killed, it cannot stop it)."""
    multiprocessing.parent_process().join()
    os._exit(1)


def _stop(child, grace: float) -> None:
    """Wait ``grace`` seconds for the driver to end, then end it."""
    child.join(grace)
    if child.is_alive():
        child.terminate()
        child.join(5)
    if child.is_alive():
        child.kill()
        child.join()
