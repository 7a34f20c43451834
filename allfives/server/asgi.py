"""The HTTP layer of the bot server as an ASGI application (Starlette), JSON in and out.

Routes: ``GET /health``, ``GET /schema``, ``GET /openapi.json``, ``POST /move``, ``POST /analyze``
(the move analysis, within the per-request caps ``analyze_worlds`` and ``analyze_seconds``), and,
with ``extra_routes`` (``allfives serve --ui``), the web page's. Every answer, errors included, is a
JSON object (errors are ``{"error": "..."}``); an unknown path is a 404, a method a path does not
take a 405, a body without Content-Length a 411, one over ``max_body`` bytes a 413, a
``Content-Type`` other than JSON a 415, a body slower than ``body_timeout`` a 408, a ``Host`` that
does not name this server a 400 (``limits.HostCheck``). Any unexpected exception becomes a 500 and
the server keeps serving. One line per request goes to the log (method, path, status, milliseconds)
unless ``quiet``.

The agent runs off the event loop, so a slow search never stalls it: ``/move`` requests in one
worker thread of their own, in order of arrival, and ``/analyze`` on the analysis queue
(``limits.WorkQueue``: one worker by default, shared with the web page's hints, bounded in all and
per client), so a long analysis does not hold up moves. One worker, not a pool: the agent is called
under a lock anyway, and threads contending for the GIL made the slowest answers several times
slower (p99 123 ms against 33 ms for 32 concurrent clients, benchmarks/server_load.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, request_response

from . import schema
from .limits import HostCheck, Limits, WorkQueue, flag
from .service import ANALYZE_SECONDS, ANALYZE_WORLDS, ApiError, BotService

MAX_BODY = 64 * 1024
#: bodies over the limit but under this are read and dropped, so the client sees the 413
#: instead of a reset connection; larger ones are not read at all
DRAIN_LIMIT = 1 << 20
#: the methods HTTP defines; any other is answered 501
KNOWN_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")


def encode_json(payload) -> bytes:
    """A response body: strict JSON (NaN is an error), one line."""
    return (json.dumps(payload, allow_nan=False, separators=(",", ":")) + "\n").encode()


class Log:
    """The request log: one line per answer to a stream (stderr by default), nothing when quiet."""

    def __init__(self, quiet: bool = False, stream=None) -> None:
        self.quiet = quiet
        self.stream = stream
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        if self.quiet:
            return
        stream = self.stream or sys.stderr
        with self._lock:
            try:
                stream.write(text + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass

    def failure(self) -> None:
        """The traceback of the exception being handled."""
        if not self.quiet:
            with self._lock:
                traceback.print_exc(file=self.stream or sys.stderr)


class Settings:
    """What every handler may need: the CORS origin, the body limit, the log, the limits, the
    analysis queue (``/analyze`` and the web page's hints) and the Host check (``None``: none)."""

    def __init__(self, max_body: int, cors: str | None, log: Log, limits: Limits | None = None,
                 hosts: HostCheck | None = None) -> None:
        self.max_body = max_body
        self.cors = cors
        self.log = log
        self.limits = limits = limits or Limits()
        self.body_timeout = limits.body_timeout
        self.hosts = hosts
        self.analysis = WorkQueue(limits.analysis_workers, limits.analysis_queue, limits.client_analyses, "analyses",
                                  (f"{flag('analysis_workers')} + {flag('analysis_queue')}", flag("client_analyses")))


def client_of(request: Request) -> str:
    """The client's address (behind a trusted proxy, the one it forwards), which per-client limits count."""
    return request.client.host if request.client else "-"


def json_response(status: int, payload, settings: Settings, method: str, headers: dict | None = None,
                  close: bool = False) -> Response:
    """An answer with the common headers (Cache-Control, CORS); ``payload`` ``None``: no body."""
    body = b"" if payload is None else encode_json(payload)
    out = dict(headers or {})
    if status != 204:
        out["Content-Type"] = "application/json; charset=utf-8"
    out["Cache-Control"] = "no-store"
    cors = settings.cors
    if cors:
        out["Access-Control-Allow-Origin"] = cors
        if cors != "*":
            out["Vary"] = "Origin"
        if method == "OPTIONS":
            out["Access-Control-Allow-Methods"] = "GET, HEAD, POST, DELETE, OPTIONS"
            out["Access-Control-Allow-Headers"] = "Content-Type"
            out["Access-Control-Max-Age"] = "600"
    if close:
        out["Connection"] = "close"
    if method == "HEAD":
        out["Content-Length"] = str(len(body))
        body = b""
    return Response(body, status_code=status, headers=out)


def require_json_type(request: Request) -> None:
    """``ApiError`` 415 unless the request says its body is JSON (``application/json`` or
    ``application/*+json``). Every POST must, with a body or without: a page on another site can
    send a POST without it (a "simple" request, no preflight) but cannot send one with it."""
    kind = request.headers.get("content-type")
    if kind is None:
        raise ApiError(415, "Content-Type must be application/json (a POST without one is refused: any web page could send it)")
    media = kind.split(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise ApiError(415, f"Content-Type must be application/json, got {kind[:80]!r}")


async def read_json_body(request: Request, settings: Settings) -> bytes:
    """The request body, within the size limit (``ApiError`` 400/408/411/413). Its Content-Type was
    checked before the handler ran (``require_json_type``, for every POST of an ``endpoint``). Most
    malformed framing (a bad or doubled Content-Length) is refused with a 400 by the HTTP parser
    before it gets here."""
    headers = request.headers
    path = request.url.path
    if "transfer-encoding" in headers:
        raise ApiError(411, "send the body with a Content-Length header (chunked transfer encoding is not supported)")
    values = headers.getlist("content-length")
    if not values:
        raise ApiError(411, f"Content-Length required: POST {path} takes a JSON body with a Content-Length header")
    if len({v.strip() for v in values}) > 1:
        raise ApiError(400, f"conflicting Content-Length headers: {', '.join(values)}")
    text = values[0].strip()
    if not text.isascii() or not text.isdigit():
        raise ApiError(400, f"invalid Content-Length {text[:40]!r}: expected a number of bytes")
    limit = settings.max_body
    length = int(text) if len(text) <= 15 else None  # None: too many digits to be worth reading
    if length is None or length > limit:
        if length is not None and length <= DRAIN_LIMIT:
            await _drain(request, settings.body_timeout)
        raise ApiError(413, f"request body of {text} bytes is over the limit of {limit} bytes")
    if length == 0:
        raise ApiError(400, f"empty body: POST {path} takes a JSON object")
    try:
        return await asyncio.wait_for(request.body(), settings.body_timeout)
    except asyncio.TimeoutError:
        raise ApiError(408, f"the body did not arrive within {settings.body_timeout:g} s "
                            f"({flag('body_timeout')})", {"Connection": "close"}) from None
    except ClientDisconnect:  # nobody reads the answer; the log shows it
        raise ApiError(400, "the connection closed before the body arrived") from None


async def _drain(request: Request, timeout: float) -> None:
    """Read and drop the body for up to ``timeout`` seconds (what is left unread closes the connection)."""

    async def read_all() -> None:
        async for _ in request.stream():
            pass

    try:
        await asyncio.wait_for(read_all(), timeout)
    except (asyncio.TimeoutError, ClientDisconnect):
        pass


class AnyMethod:
    """An ASGI app of ``fn(request) -> response`` that a ``Route`` hands every method (a plain
    function would be a GET-only route); the handler answers 405 and 501 itself, in JSON."""

    def __init__(self, fn) -> None:
        self.app = request_response(fn)

    async def __call__(self, scope, receive, send) -> None:
        await self.app(scope, receive, send)


#: a handler: the request and the settings -> (status, payload, headers), or a ``Response``
Handler = Callable[[Request, Settings], Awaitable[tuple]]


def _body_pending(request: Request) -> bool:
    """Whether the request announced a body that was not read (then the connection must close)."""
    announced = request.headers.get("content-length", "0").strip() not in ("", "0") or "transfer-encoding" in request.headers
    return announced and not getattr(request, "_stream_consumed", False)


def endpoint(path: str, handlers: dict[str, Handler], settings: Settings) -> Route:
    """A route at ``path`` answering the methods of ``handlers`` (``GET`` also answers ``HEAD``),
    ``OPTIONS`` (204 with ``Allow``), a 405 naming the methods for any other, and JSON errors."""
    allowed = tuple(handlers) + (("HEAD",) if "GET" in handlers and "HEAD" not in handlers else ())

    async def answer(request: Request) -> Response:
        method = request.method
        try:
            result = await _dispatch(request, method)
            if isinstance(result, Response):  # a file or a download, answered as it is
                return result
            status, payload, headers = result
        except ApiError as exc:
            status, payload, headers = exc.status, {"error": exc.message}, exc.headers
        except Exception as exc:  # never let one request take the server down
            settings.log.failure()
            status, payload, headers = 500, {"error": f"internal error: {type(exc).__name__}: {exc}"}, {}
        return json_response(status, payload, settings, method, headers, close=_body_pending(request))

    async def _dispatch(request: Request, method: str) -> tuple:
        if method not in KNOWN_METHODS:
            raise ApiError(501, f"501: Unsupported method ({method[:40]!r})")
        allow = ", ".join(allowed + ("OPTIONS",))
        if method == "OPTIONS":
            return 204, None, {"Allow": allow}
        if method not in allowed:
            raise ApiError(405, f"{method} is not allowed on {path}; use {' or '.join(allowed)}", {"Allow": allow})
        if method == "POST":
            require_json_type(request)
        handler = handlers.get(method) or handlers["GET"]
        return await handler(request, settings)

    return Route(path, AnyMethod(answer), include_in_schema=False)


#: a path segment that looks like a secret (a web game's id: ``secrets.token_urlsafe``)
_SECRET_SEGMENT = re.compile(r"(?<=/)([A-Za-z0-9_-]{4})[A-Za-z0-9_-]{12,}(?=/|$)")


def log_text(text: str, limit: int = 200) -> str:
    """``text`` safe for one log line: every character outside printable ASCII (CR, LF, ESC, NUL,
    non-ASCII) written as a backslash escape, so a request cannot forge a line or colour a terminal."""
    out = []
    for ch in text[:limit]:
        out.append(ch if " " <= ch <= "~" and ch != "\\" else ch.encode("unicode_escape").decode())
    return "".join(out)


def redact_path(path: str) -> str:
    """``path`` for the log: a segment of 16 or more URL-safe characters (a game id, which is the
    game's only key) keeps its first 4 and an ellipsis."""
    return _SECRET_SEGMENT.sub(r"\1...", path)


class HostGuard:
    """ASGI middleware: a request whose ``Host`` header does not name this server gets a 400."""

    def __init__(self, app, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope, receive, send) -> None:
        hosts = self.settings.hosts
        if scope["type"] == "http" and hosts is not None:
            host = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"host"), None)
            problem = hosts.refusal(host)
            if problem is not None:
                request = Request(scope, receive)
                response = json_response(400, {"error": problem}, self.settings, request.method, close=_body_pending(request))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class RequestLog:
    """ASGI middleware: one log line per answered request (method, path, status, milliseconds);
    the outermost layer of the application, holding its ``settings``."""

    def __init__(self, app, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.log = settings.log

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or self.log.quiet:
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = [0]

        async def logged_send(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                ms = (time.perf_counter() - start) * 1000.0
                path = redact_path(log_text(scope.get("path", "-")))
                self.log.line(f"{log_text(scope.get('method', '-'), 16)} {path} {status[0]} {ms:.1f} ms")  # before answering: in order
            await send(message)

        await self.app(scope, receive, logged_send)


def bot_routes(service: BotService, settings: Settings, analyze_worlds: int, analyze_seconds: float,
               openapi: Callable[[], dict]) -> list[BaseRoute]:
    """The bot API's routes."""
    mover = ThreadPoolExecutor(1, thread_name_prefix="move")

    async def health(request, s):
        return 200, service.health(), {}

    async def request_schema(request, s):
        return 200, schema.request_schema(), {}

    async def openapi_doc(request, s):
        return 200, openapi(), {}

    async def move(request, s):
        data = await read_json_body(request, s)
        return 200, await asyncio.get_running_loop().run_in_executor(mover, service.move_json, data), {}

    async def analyze(request, s):
        data = await read_json_body(request, s)
        answer = await s.analysis.submit(client_of(request), service.analyze_json, data, analyze_worlds, analyze_seconds)
        return 200, answer, {}

    table = {
        "/health": {"GET": health},
        "/schema": {"GET": request_schema},
        "/openapi.json": {"GET": openapi_doc},
        "/move": {"POST": move},
        "/analyze": {"POST": analyze},
    }
    return [endpoint(path, handlers, settings) for path, handlers in table.items()]


def not_found_route(settings: Settings, paths: list[str]) -> Route:
    """The last route: a 404 naming the paths there are."""

    async def missing(request: Request) -> Response:
        path = request.url.path
        payload = {"error": f"no such path {path[:100]!r}; paths: {', '.join(paths)}"}
        return json_response(404, payload, settings, request.method, close=_body_pending(request))

    return Route("/{rest:path}", AnyMethod(missing), include_in_schema=False)


def build_app(
    service: BotService,
    *,
    url: Callable[[], str],
    quiet: bool = False,
    max_body: int = MAX_BODY,
    cors: str | None = None,
    log=None,
    analyze_worlds: int = ANALYZE_WORLDS,
    analyze_seconds: float = ANALYZE_SECONDS,
    extra_routes: Callable[[Settings], tuple[list[BaseRoute], list[str]]] | None = None,
    limits: Limits | None = None,
    hosts: HostCheck | None = None,
):
    """The ASGI application of the bot server. ``url()`` gives the server's address for the OpenAPI
    ``servers``; ``extra_routes(settings)`` returns more routes and the paths to name in a 404;
    ``limits`` gives the body timeout and the analysis queue's bounds; ``hosts`` checks each
    request's Host header (``None``: no check)."""
    settings = Settings(max_body, cors, Log(quiet, log), limits, hosts)
    cache: dict = {}

    def openapi() -> dict:
        if "doc" not in cache:
            cache["doc"] = schema.openapi(url(), service.name)
        return cache["doc"]

    routes = bot_routes(service, settings, analyze_worlds, analyze_seconds, openapi)
    paths = ["/health", "/schema", "/openapi.json", "/move", "/analyze"]
    if extra_routes is not None:
        more, more_paths = extra_routes(settings)
        routes += more
        paths += more_paths
    missing = not_found_route(settings, paths)
    routes.append(missing)
    app = Starlette(routes=routes)
    app.state.settings = settings

    async def no_route(scope, receive, send) -> None:
        # a path no route's pattern can match (a CR or LF in it): the same JSON 404, not Starlette's text
        await missing.endpoint(scope, receive, send)

    app.router.default = no_route
    return RequestLog(HostGuard(app, settings), settings)
