"""Load test of the bot server: concurrent clients POSTing real positions to ``/move``.

The server runs in its own process (``python -m allfives serve --quiet --port 0``); the clients are
asyncio connections in this one, speaking HTTP/1.1 over raw sockets. Two connection modes:

- ``keepalive``: each client opens one connection and sends its requests on it, one after another;
- ``new``: each request opens (and closes) a new connection.

Every request is a position from a real game (the public history of the hand, as a frontend sends
it). An error is a request that did not get a 200: a reset or refused connection, a timeout, another
status. Reported per mode: requests, errors, requests/s and the latency's p50 and p99 (ms).

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


class Server:
    """``python -m allfives serve`` in a subprocess, run from ``source`` (a checkout)."""

    def __init__(self, source: Path, policy: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(source))
        cmd = [sys.executable, "-m", "allfives", "serve", "--policy", policy, "--port", "0", "--quiet"]
        self.proc = subprocess.Popen(cmd, cwd=source, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if not modes or set(modes) - {"keepalive", "new"} or args.clients < 1 or args.requests < 1 or args.rounds < 1:
        parser.error("--modes takes keepalive and/or new; --clients, --requests and --rounds must be at least 1")

    from allfives_agents import make_agent
    from allfives_agents.nets.policy import trained_rules

    rules = trained_rules(make_agent(args.policy)) or Rules.make()
    bodies = requests_from_games(rules, 400, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"current": ROOT}
        if args.baseline:
            sources[args.baseline] = export_revision(args.baseline, Path(tmp))
        runs: dict[str, dict[str, list[dict]]] = {name: {m: [] for m in modes} for name in sources}
        for _ in range(args.rounds):
            for name, source in sources.items():
                server = Server(source, args.policy)
                try:
                    for mode in modes:
                        result = asyncio.run(load(server.url, bodies, args.clients, args.requests, mode == "keepalive", args.timeout))
                        runs[name][mode].append(result)
                finally:
                    server.stop()
    import importlib.util

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"  # what uvicorn runs on here
    report: dict = {"policy": args.policy, "clients": args.clients, "requests_per_client": args.requests,
                    "rounds": args.rounds, "event_loop": loop}
    print(f"uvicorn's event loop: {loop}")
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
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
