"""Load test of the bot server: concurrent clients POSTing real positions to ``/move``.

The server runs in its own process (``python -m allfives serve --quiet --port 0``); the clients are
asyncio connections in this one, speaking HTTP/1.1 over raw sockets. Two connection modes:

- ``keepalive``: each client opens one connection and sends its requests on it, one after another;
- ``new``: each request opens (and closes) a new connection.

Every request is a position from a real game (the public history of the hand, as a frontend sends
it). An error is a request that did not get a 200: a reset or refused connection, a timeout, another
status. Reported per mode: requests, errors, requests/s and the latency's p50 and p99 (ms).

``--slow-clients N`` opens N slow sockets first (from ``--slow-source``, another loopback address,
so they are another client than the measured ones), a quarter of each kind: ``silent`` (connects,
sends nothing), ``headers`` (a request line and headers, a byte every ``--slow-interval`` seconds,
never finished), ``body`` (a whole head, then a 1000-byte body a byte at a time) and ``big-body``
(the same over the body limit). They trickle while the clients measure and until ``--slow-seconds``;
reported: how many the server closed, after how many seconds (median and most, per kind), what it
answered them, and how many were still open at the end. ``--server-nofile N`` starts the server with
that open-file limit (``ulimit -n``), as a small deployment has it:

    python benchmarks/server_load.py --clients 32 --slow-clients 1100 --server-nofile 1024

``--baseline REF`` also measures the server of a git revision (``git archive REF``, run from a
temporary folder with the compiled observation accelerator copied over when its C source is the
same), interleaved with the working tree's in the same run:

    python benchmarks/server_load.py --baseline main --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from allfives_env.engine import Game, Rules  # noqa: E402
from allfives_env.engine.events import event_to_dict, public_event  # noqa: E402
from allfives_env.engine.tiles import TILES, mask_tiles  # noqa: E402
from revision import export_revision  # noqa: E402


def requests_from_games(rules: Rules, count: int, seed: int) -> list[bytes]:
    """``count`` move requests (JSON bodies) at decisions of random games."""
    rng = random.Random(seed)
    out: list[bytes] = []
    while len(out) < count:
        game = Game(rules, rng.randrange(2**31))
        while not game.over and len(out) < count:
            seat = game.current_player
            body = {
                "rules": rules.to_dict(),
                "seat": seat,
                "hand": [list(TILES[t]) for t in mask_tiles(game.hands[seat])],
                "history": [event_to_dict(public_event(e, seat)) for e in game.events],
                "scores": list(game.hand_logs[-1].scores_before),
            }
            out.append(json.dumps(body).encode())
            game.step(rng.choice(game.legal_actions()))
    return out


def http_request(host: str, port: int, body: bytes) -> bytes:
    return (
        f"POST /move HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    """The status of one response (its body read and dropped)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


async def client(host: str, port: int, bodies: list[bytes], keepalive: bool, timeout: float,
                 latencies: list[float], errors: list[str]) -> None:
    conn = None
    for body in bodies:
        start = time.perf_counter()
        try:
            if conn is None:
                conn = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            reader, writer = conn
            writer.write(http_request(host, port, body))
            status = await asyncio.wait_for(read_response(reader), timeout)
            if status != 200:
                errors.append(f"status {status}")
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
            errors.append(type(exc).__name__)
            if conn is not None:
                conn[1].close()
            conn = None
            continue
        finally:
            latencies.append(time.perf_counter() - start)
        if not keepalive:
            conn[1].close()
            conn = None
    if conn is not None:
        conn[1].close()


async def load(url: str, bodies: list[bytes], clients: int, per_client: int, keepalive: bool, timeout: float) -> dict:
    host, port = re.match(r"http://([^:/]+):(\d+)", url).groups()
    port = int(port)
    latencies: list[float] = []
    errors: list[str] = []
    start = time.perf_counter()
    await asyncio.gather(*(
        client(host, port, [bodies[(c * per_client + k) % len(bodies)] for k in range(per_client)], keepalive,
               timeout, latencies, errors)
        for c in range(clients)
    ))
    wall = time.perf_counter() - start
    ms = sorted(x * 1000.0 for x in latencies)
    return {
        "requests": len(ms),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "requests_per_s": round(len(ms) / wall, 1),
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1),
    }


SLOW_KINDS = ("silent", "headers", "body", "big-body")


def slow_bytes(kind: str, host: str, port: int) -> tuple[bytes, bytes]:
    """What a slow socket of ``kind`` sends at once, and what it then trickles a byte at a time."""
    head = f"POST /move HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\nContent-Length: {{}}\r\n\r\n"
    if kind == "silent":
        return b"", b""
    if kind == "headers":
        return b"", (head.format(1000) + "X-Padding: " + "x" * 4000).encode()
    size = 1000 if kind == "body" else 200_000
    return head.format(size).encode(), b" " * size


async def slow_socket(host: str, port: int, source: str | None, kind: str, interval: float, seconds: float) -> dict:
    """One slow client: ``{"kind", "closed_after" (None: still open at the end), "status"}``."""
    start = time.perf_counter()
    result = {"kind": kind, "closed_after": None, "status": "no answer"}
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, local_addr=(source, 0) if source else None), 30)
    except (OSError, asyncio.TimeoutError) as exc:
        result.update(closed_after=time.perf_counter() - start, status=f"no connection ({type(exc).__name__})")
        return result
    first, rest = slow_bytes(kind, host, port)

    async def trickle() -> None:
        try:
            writer.write(first)
            for i in range(len(rest)):
                await asyncio.sleep(interval)
                writer.write(rest[i:i + 1])
                await writer.drain()
            await asyncio.sleep(seconds)
        except (OSError, RuntimeError):
            pass  # the server closed it: the reader sees that

    async def watch() -> None:
        data = b""
        try:
            while chunk := await reader.read(4096):
                data += chunk
        except OSError:
            result["status"] = "reset"
        result["closed_after"] = time.perf_counter() - start
        if data:
            result["status"] = data.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")[2][:3] or "?"

    sender = asyncio.ensure_future(trickle())
    try:
        await asyncio.wait_for(watch(), seconds)
    except asyncio.TimeoutError:
        pass
    sender.cancel()
    writer.close()
    return result


def slow_summary(results: list[dict], seconds: float) -> dict:
    """How many slow sockets the server closed, when, and what it answered them, per kind."""
    out: dict = {"slow_clients": len(results), "watched_s": seconds,
                 "closed": sum(r["closed_after"] is not None for r in results),
                 "answers": dict(Counter(str(r["status"]) for r in results if r["closed_after"] is not None))}
    for kind in SLOW_KINDS:
        mine = [r for r in results if r["kind"] == kind]
        times = sorted(r["closed_after"] for r in mine if r["closed_after"] is not None)
        out[kind] = {"sockets": len(mine), "closed": len(times),
                     "median_closed_s": round(statistics.median(times), 2) if times else None,
                     "max_closed_s": round(times[-1], 2) if times else None}
    out["open_at_end"] = out["slow_clients"] - out["closed"]
    return out


def nth_address(first: str | None, n: int) -> str | None:
    """The ``n``-th address after ``first`` (``127.0.0.2``, 2 -> ``127.0.0.4``)."""
    import ipaddress

    return None if first is None else str(ipaddress.ip_address(first) + n)


async def load_with_slow(url: str, bodies: list[bytes], args, modes: list[str], source: str | None) -> tuple[dict, dict]:
    """The slow sockets opened first, then each mode's load while they trickle."""
    host, port = re.match(r"http://([^:/]+):(\d+)", url).groups()
    slow = [asyncio.ensure_future(slow_socket(host, int(port), nth_address(source, i % args.slow_sources),
                                              SLOW_KINDS[i % len(SLOW_KINDS)], args.slow_interval, args.slow_seconds))
            for i in range(args.slow_clients)]
    if slow:
        await asyncio.sleep(1.0)  # let them connect and start
    results = {mode: await load(url, bodies, args.clients, args.requests, mode == "keepalive", args.timeout) for mode in modes}
    return results, slow_summary(await asyncio.gather(*slow), args.slow_seconds)


def usable_source(address: str | None) -> str | None:
    """``address`` if this machine can send from it (Linux: all of 127.0.0.0/8), else ``None``."""
    import socket

    if not address:
        return None
    try:
        with socket.socket() as sock:
            sock.bind((address, 0))
    except OSError:
        print(f"cannot send from {address}: the slow sockets come from the same address as the clients")
        return None
    return address


def raise_open_files(need: int) -> None:
    """This process's soft open-file limit raised to ``need`` where the hard one allows."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need if hard == resource.RLIM_INFINITY else min(need, hard), hard))


class Server:
    """``python -m allfives serve`` in a subprocess, run from ``source`` (a checkout), with ``flags``
    and the open-file limit ``nofile`` (``None``: this process's)."""

    def __init__(self, source: Path, policy: str, flags: list[str] = (), nofile: int | None = None) -> None:
        env = dict(os.environ, PYTHONPATH=str(source))
        cmd = [sys.executable, "-m", "allfives", "serve", "--policy", policy, "--port", "0", "--quiet", *flags]

        def limit_files() -> None:
            if nofile is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

        self.proc = subprocess.Popen(cmd, cwd=source, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=limit_files)
        line = self.proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if not found:
            self.proc.kill()
            raise SystemExit(f"the server in {source} did not start: {line}{self.proc.stderr.read()[-2000:]}")
        self.url = found.group(0)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="onnx:allfives_2p", help="the agent spec served (default %(default)s)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=100, help="requests per client")
    parser.add_argument("--modes", default="keepalive,new", help="keepalive, new or both (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; the median of each figure is reported")
    parser.add_argument("--baseline", metavar="REF", help="also measure the server of this git revision (e.g. main)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds a request may take before it counts as an error")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object on the last line")
    parser.add_argument("--slow-clients", type=int, default=0, metavar="N",
                        help="slow sockets open while the clients measure (silent, trickled headers, trickled bodies)")
    parser.add_argument("--slow-source", default="127.0.0.2", metavar="ADDR",
                        help="the loopback address the slow sockets come from (default %(default)s: another client)")
    parser.add_argument("--slow-sources", type=int, default=1, metavar="K",
                        help="spread the slow sockets over K addresses from --slow-source on (K clients; default 1)")
    parser.add_argument("--slow-interval", type=float, default=1.0, metavar="S", help="seconds between trickled bytes")
    parser.add_argument("--slow-seconds", type=float, default=30.0, metavar="S", help="how long the slow sockets are watched")
    parser.add_argument("--server-nofile", type=int, default=None, metavar="N", help="the server's open-file limit (ulimit -n)")
    parser.add_argument("--server-flags", default="", metavar="FLAGS",
                        help="more allfives serve flags for this checkout's server (e.g. '--header-timeout 5')")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if not modes or set(modes) - {"keepalive", "new"} or args.clients < 1 or args.requests < 1 or args.rounds < 1:
        parser.error("--modes takes keepalive and/or new; --clients, --requests and --rounds must be at least 1")
    if args.slow_clients < 0 or args.slow_sources < 1 or args.slow_interval <= 0 or args.slow_seconds <= 0:
        parser.error("--slow-clients must be at least 0, --slow-sources 1, --slow-interval and --slow-seconds more than 0")
    source = usable_source(args.slow_source) if args.slow_clients else None
    # every client is 127.0.0.1 here: the server's per-client cap must let them all in (the slow
    # sockets come from another address, whose cap stays the default)
    flags = ["--max-client-connections", str(max(64, 2 * args.clients))] + args.server_flags.split()
    raise_open_files(args.clients + args.slow_clients + 256)

    from allfives_agents import make_agent
    from allfives_agents.nets.policy import trained_rules

    rules = trained_rules(make_agent(args.policy)) or Rules.make()
    bodies = requests_from_games(rules, 400, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"current": ROOT}
        if args.baseline:
            sources[args.baseline] = export_revision(args.baseline, Path(tmp))
        runs: dict[str, dict[str, list[dict]]] = {name: {m: [] for m in modes} for name in sources}
        slow_runs: dict[str, list[dict]] = {name: [] for name in sources}
        for _ in range(args.rounds):
            for name, tree in sources.items():
                server = Server(tree, args.policy, flags if name == "current" else [], args.server_nofile)
                try:
                    results, slow = asyncio.run(load_with_slow(server.url, bodies, args, modes, source))
                finally:
                    server.stop()
                for mode, result in results.items():
                    runs[name][mode].append(result)
                if args.slow_clients:
                    slow_runs[name].append(slow)
    import importlib.util

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"  # what uvicorn runs on here
    report: dict = {"policy": args.policy, "clients": args.clients, "requests_per_client": args.requests,
                    "rounds": args.rounds, "event_loop": loop, "server_flags": flags, "server_nofile": args.server_nofile}
    print(f"uvicorn's event loop: {loop}; this checkout's server flags: {' '.join(flags)}"
          f"{f'; ulimit -n {args.server_nofile}' if args.server_nofile else ''}")
    for name, by_mode in runs.items():
        for mode, results in by_mode.items():
            summary = {key: statistics.median(r[key] for r in results) for key in ("requests_per_s", "p50_ms", "p99_ms")}
            summary["errors"] = sum(r["errors"] for r in results)
            summary["requests"] = sum(r["requests"] for r in results)
            kinds = sorted({k for r in results for k in r["error_kinds"]})
            report[f"{name}_{mode}"] = summary
            print(f"{name:>10} {mode:>9}: {summary['requests']} requests, {summary['errors']} errors"
                  f"{' (' + ', '.join(kinds) + ')' if kinds else ''}, {summary['requests_per_s']:.0f} requests/s, "
                  f"p50 {summary['p50_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms")
    for name, slows in slow_runs.items():
        for k, slow in enumerate(slows):
            report.setdefault(f"{name}_slow", []).append(slow)
            kinds = ", ".join(f"{kind} {slow[kind]['closed']}/{slow[kind]['sockets']}"
                              f" (median {slow[kind]['median_closed_s']} s, most {slow[kind]['max_closed_s']} s)" for kind in SLOW_KINDS)
            print(f"{name:>10} slow sockets, round {k + 1}: {slow['closed']} of {slow['slow_clients']} closed by the server "
                  f"within {slow['watched_s']:g} s, {slow['open_at_end']} still open; answers {slow['answers']}; {kinds}")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
