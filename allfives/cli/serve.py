"""``allfives serve``: answer moves over HTTP with a trained policy or any agent, and with ``--ui``
a web page to play against the bots on the same server (docs/frontends.md). The limits that keep
slow or greedy clients from locking others out (timeouts, connection caps, the analysis queue, the
Host check) are flags too, with the defaults of ``allfives.server.limits.Limits``."""

from __future__ import annotations

import argparse
import signal
import sys

from .common import CLIError

#: the flags of ``Limits``' fields: (metavar, type, help); the default is the field's
LIMIT_FLAGS = {
    "header_timeout": ("S", float, "seconds a request's line and headers may take from the connection's opening "
                                   "(or the request's first byte on a kept-alive one); then 408 and close"),
    "body_timeout": ("S", float, "seconds a request body may take to arrive; then 408 (413 if over --max-body) and close"),
    "idle_timeout": ("S", float, "seconds a kept-alive connection waits for its next request"),
    "max_connections": ("N", int, "open connections in all; a new one beyond gets a 503 and is closed "
                                  "(lowered to fit the open-file limit, ulimit -n)"),
    "max_client_connections": ("N", int, "open connections from one client address; 429 beyond "
                                         "(a --behind-proxy address is exempt)"),
    "analysis_workers": ("N", int, "threads working out move analyses (POST /analyze and the web page's hints)"),
    "analysis_queue": ("N", int, "analyses that may wait for a worker; 503 with Retry-After beyond"),
    "client_analyses": ("N", int, "analyses of one client running or waiting at once; 429 with Retry-After beyond"),
}


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
    _add_limits(p.add_argument_group("limits (slow or greedy clients cannot lock others out)"))
    ui = p.add_argument_group("web page (--ui)")
    ui.add_argument("--ui", action="store_true", help="also serve the web page at / (play against bots in a browser)")
    ui.add_argument("--ui-games", type=int, default=None, metavar="N", help="most live games at once (default 64)")
    ui.add_argument("--ui-client-games", type=int, default=None, metavar="N",
                    help="most live games of one client address (default 8; 429 beyond)")
    ui.add_argument("--ui-idle", type=float, default=None, metavar="S",
                    help="seconds after which an idle game is dropped (default 1800)")
    p.set_defaults(run=run)


def _add_limits(group) -> None:
    from allfives.server.limits import LOCAL_PROXY, Limits

    defaults = Limits()
    for name, (metavar, kind, text) in LIMIT_FLAGS.items():
        group.add_argument("--" + name.replace("_", "-"), type=kind, default=getattr(defaults, name), metavar=metavar,
                           help=f"{text} (default %(default)s)")
    group.add_argument("--allowed-hosts", metavar="NAMES", default=None,
                       help="more names the Host header may give, comma-separated (*.example.com: any name under it; "
                            "'*': any Host); by default only this machine's local names and the --host address "
                            "(with --host 0.0.0.0 also any IP address and the machine's name): the check stops DNS rebinding")
    group.add_argument("--behind-proxy", metavar="ADDRS", nargs="?", const=LOCAL_PROXY, default=None,
                       help=f"the server is reached through a reverse proxy at these addresses (comma-separated IPs or "
                            f"networks; alone: {LOCAL_PROXY}): its X-Forwarded-For names the client for the per-client "
                            f"limits, and it is exempt from --max-client-connections")


def run(args) -> int:
    try:
        from allfives.server import BotService, make_server
        from allfives.server.httpd import MAX_BODY
    except ImportError as exc:
        raise CLIError(f"allfives serve needs the web extra (pip install 'allfives[web]'): {exc}") from None

    if args.policy is None and not args.ui:
        raise CLIError("--policy is required (or --ui, which serves the web page and expert on /move)")
    if not args.ui and (args.ui_games is not None or args.ui_idle is not None or args.ui_client_games is not None):
        raise CLIError("--ui-games, --ui-client-games and --ui-idle go with --ui")
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
    limits, proxies = _limits(args)
    extra_routes = _web_routes(args, worlds, seconds) if args.ui else None
    try:
        service = BotService(policy, seed=args.seed)
    except ValueError as exc:
        raise CLIError(f"--policy {policy}: {exc}") from None
    try:
        server = make_server(service, args.host, args.port, quiet=args.quiet, max_body=max_body, cors=args.cors,
                             analyze_worlds=worlds, analyze_seconds=seconds, extra_routes=extra_routes, limits=limits,
                             allowed_hosts=args.allowed_hosts, behind_proxy=proxies)
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


def _limits(args):
    """The ``Limits`` of the flags and the proxies' addresses (``CLIError`` naming a bad one)."""
    from allfives.server.limits import AddressSet, HostCheck, Limits

    limits = Limits(**{name: getattr(args, name) for name in LIMIT_FLAGS})
    try:
        limits.check()
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.allowed_hosts is not None:
        if not args.allowed_hosts.strip(", "):
            raise CLIError("--allowed-hosts needs at least one name (or '*' for any)")
        try:
            HostCheck(args.host, tuple(args.allowed_hosts.split(",")))
        except ValueError as exc:
            raise CLIError(f"--allowed-hosts: {exc}") from None
    try:
        proxies = AddressSet(args.behind_proxy).text if args.behind_proxy is not None else None
    except ValueError as exc:
        raise CLIError(f"--behind-proxy: {exc}") from None
    return limits, proxies


def _web_routes(args, worlds: int, seconds: float):
    from allfives.web.routes import web_routes
    from allfives.web.store import IDLE_SECONDS, MAX_CLIENT_GAMES, MAX_GAMES, GameStore

    games = MAX_GAMES if args.ui_games is None else args.ui_games
    client_games = MAX_CLIENT_GAMES if args.ui_client_games is None else args.ui_client_games
    idle = IDLE_SECONDS if args.ui_idle is None else args.ui_idle
    if games < 1:
        raise CLIError(f"--ui-games must be at least 1, got {games}")
    if client_games < 1:
        raise CLIError(f"--ui-client-games must be at least 1, got {client_games}")
    if not idle > 0:
        raise CLIError(f"--ui-idle must be more than 0 seconds, got {idle}")
    return web_routes(GameStore(games, idle, max_client_games=client_games), worlds, seconds)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
