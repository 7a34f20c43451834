"""``allfives serve``: answer moves over HTTP with a trained policy or any agent, and with ``--ui``
a web page to play against the bots on the same server (docs/frontends.md)."""

from __future__ import annotations

import argparse
import signal
import sys

from .common import CLIError


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(
        name,
        help="HTTP bot server: POST a position to /move, get the policy's move (docs/frontends.md)",
        description="Serve a policy over HTTP (JSON): GET /health, /schema, /openapi.json; POST /move, /analyze. "
        "With --ui, also a web page at / to play whole games against bots chosen in the page.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  allfives serve --policy models/allfives_2p.onnx\n"
        "  allfives serve --policy ismcts:iters=200,rollout=greedy --port 8080 --quiet\n"
        "  allfives serve --ui                # then open http://127.0.0.1:8000/",
    )
    p.add_argument(
        "--policy",
        metavar="PATH_OR_SPEC",
        help="a policy file (.onnx -> onnx agent, .zip/.npz -> ppo agent) or any agent spec "
        "(greedy, ismcts:iters=100, onnx:PATH) answering /move; required unless --ui (then default expert)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port (default %(default)s; 0 picks a free one)")
    p.add_argument("--seed", type=int, default=None, help="seed of the agent's own randomness (random, ismcts)")
    p.add_argument("--max-body", type=int, default=None, metavar="BYTES", help="largest request body (default 65536)")
    p.add_argument(
        "--cors", metavar="ORIGIN", help="send Access-Control-Allow-Origin: ORIGIN (e.g. '*') for browser frontends"
    )
    p.add_argument("--analyze-worlds", type=int, default=None, metavar="N",
                   help="most sampled worlds one POST /analyze may ask for (default 200)")
    p.add_argument("--analyze-seconds", type=float, default=None, metavar="S",
                   help="most seconds of playouts per POST /analyze (default 2)")
    p.add_argument("--quiet", action="store_true", help="no log line per request")
    ui = p.add_argument_group("web page (--ui)")
    ui.add_argument("--ui", action="store_true", help="also serve the web page at / (play against bots in a browser)")
    ui.add_argument("--ui-games", type=int, default=None, metavar="N", help="most live games at once (default 64)")
    ui.add_argument("--ui-idle", type=float, default=None, metavar="S",
                    help="seconds after which an idle game is dropped (default 1800)")
    p.set_defaults(run=run)


def run(args) -> int:
    try:
        from allfives.server import BotService, make_server
        from allfives.server.httpd import MAX_BODY
    except ImportError as exc:
        raise CLIError(f"allfives serve needs the web extra (pip install 'allfives[web]'): {exc}") from None

    if args.policy is None and not args.ui:
        raise CLIError("--policy is required (or --ui, which serves the web page and expert on /move)")
    if not args.ui and (args.ui_games is not None or args.ui_idle is not None):
        raise CLIError("--ui-games and --ui-idle go with --ui")
    policy = args.policy or "expert"
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be 0..65535, got {args.port}")
    max_body = MAX_BODY if args.max_body is None else args.max_body
    if max_body < 1:
        raise CLIError(f"--max-body must be at least 1, got {max_body}")
    from allfives_agents.analysis import MAX_WORLDS
    from allfives.server.service import ANALYZE_SECONDS, ANALYZE_WORLDS

    worlds = ANALYZE_WORLDS if args.analyze_worlds is None else args.analyze_worlds
    seconds = ANALYZE_SECONDS if args.analyze_seconds is None else args.analyze_seconds
    if not 1 <= worlds <= MAX_WORLDS:
        raise CLIError(f"--analyze-worlds must be in 1..{MAX_WORLDS}, got {worlds}")
    if not (seconds > 0 and seconds <= 60):
        raise CLIError(f"--analyze-seconds must be in (0, 60], got {seconds}")
    extra_routes = _web_routes(args, worlds, seconds) if args.ui else None
    try:
        service = BotService(policy, seed=args.seed)
    except ValueError as exc:
        raise CLIError(f"--policy {policy}: {exc}") from None
    try:
        server = make_server(service, args.host, args.port, quiet=args.quiet, max_body=max_body, cors=args.cors,
                             analyze_worlds=worlds, analyze_seconds=seconds, extra_routes=extra_routes)
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc}") from None
    trained = f" (trained for {service.policy_rules.to_dict()})" if service.policy_rules else ""
    previous = signal.signal(signal.SIGTERM, _interrupt)  # stop cleanly on SIGTERM too (containers, kill)
    try:
        page = f"; the web page at {server.url}/" if args.ui else ""
        print(f"serving {service.name}{trained} on {server.url}{page} (Ctrl-C stops)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
        signal.signal(signal.SIGTERM, previous)
    return 0


def _web_routes(args, worlds: int, seconds: float):
    from allfives.web.routes import web_routes
    from allfives.web.store import IDLE_SECONDS, MAX_GAMES, GameStore

    games = MAX_GAMES if args.ui_games is None else args.ui_games
    idle = IDLE_SECONDS if args.ui_idle is None else args.ui_idle
    if games < 1:
        raise CLIError(f"--ui-games must be at least 1, got {games}")
    if not idle > 0:
        raise CLIError(f"--ui-idle must be more than 0 seconds, got {idle}")
    return web_routes(GameStore(games, idle), worlds, seconds)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
