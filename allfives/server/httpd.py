"""The HTTP layer of the bot server: ``http.server.ThreadingHTTPServer``, JSON in and out.

Routes: ``GET /health``, ``GET /schema``, ``GET /openapi.json``, ``POST /move``, ``POST /analyze``
(the move analysis, within the per-request caps ``analyze_worlds`` and ``analyze_seconds``). Every answer,
errors included, is a JSON object (errors are ``{"error": "..."}``); an unknown path is a 404, a
method a path does not take a 405, a body without Content-Length a 411, one over ``max_body``
bytes a 413, a ``Content-Type`` other than JSON a 415. Any unexpected exception becomes a 500 and the server keeps serving. One line per
request goes to stderr (method, path, status, milliseconds) unless ``quiet``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from . import schema
from .service import ANALYZE_SECONDS, ANALYZE_WORLDS, ApiError, BotService

MAX_BODY = 64 * 1024
#: bodies over the limit but under this are read and dropped, so the client sees the 413
#: instead of a reset connection; larger ones are not read at all
DRAIN_LIMIT = 1 << 20


def encode_json(payload) -> bytes:
    """A response body: strict JSON (NaN is an error), one line."""
    return (json.dumps(payload, allow_nan=False, separators=(",", ":")) + "\n").encode()


class BotServer(ThreadingHTTPServer):
    """A threading HTTP server holding one ``BotService``."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        service: BotService,
        *,
        quiet: bool = False,
        max_body: int = MAX_BODY,
        cors: str | None = None,
        log=None,
        analyze_worlds: int = ANALYZE_WORLDS,
        analyze_seconds: float = ANALYZE_SECONDS,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.service = service
        self.quiet = quiet
        self.max_body = max_body
        self.cors = cors
        self.analyze_worlds = analyze_worlds
        self.analyze_seconds = analyze_seconds
        self.log_stream = log
        self._log_lock = threading.Lock()
        super().__init__(address, Handler)
        self._openapi = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the listening socket."""
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def openapi(self) -> dict:
        if self._openapi is None:
            self._openapi = schema.openapi(self.url, self.service.name)
        return self._openapi

    def log(self, line: str) -> None:
        """Write one line to the log (stderr by default) unless quiet."""
        if self.quiet:
            return
        stream = self.log_stream or sys.stderr
        with self._log_lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass

    def handle_error(self, request, client_address) -> None:
        """A connection that failed outside a request (reset, timeout): one line, no traceback."""
        exc = sys.exc_info()[1]
        self.log(f"connection from {client_address[0]} failed: {type(exc).__name__}: {exc}")


class Handler(BaseHTTPRequestHandler):
    """One connection; ``server`` is the ``BotServer``."""

    server: BotServer
    server_version = "allfives-serve/1"
    protocol_version = "HTTP/1.1"
    #: seconds a connection may stay idle, or take to send its request
    timeout = 30

    # -- routing ---------------------------------------------------------------------------

    ROUTES = {
        "/health": ("GET", "HEAD"),
        "/schema": ("GET", "HEAD"),
        "/openapi.json": ("GET", "HEAD"),
        "/move": ("POST",),
        "/analyze": ("POST",),
    }

    def do_GET(self) -> None:
        self._handle()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_TRACE = do_CONNECT = do_GET

    def _route(self) -> tuple[int, object, dict]:
        path = urlsplit(self.path).path
        allowed = self.ROUTES.get(path)
        if allowed is None:
            raise ApiError(404, f"no such path {path[:100]!r}; paths: {', '.join(self.ROUTES)}")
        allow = ", ".join(allowed + ("OPTIONS",))
        method = self.command
        if method == "OPTIONS":
            return 204, None, {"Allow": allow}
        if method not in allowed:
            raise ApiError(405, f"{method} is not allowed on {path}; use {' or '.join(allowed)}", {"Allow": allow})
        service = self.server.service
        if path == "/move":
            return 200, service.move_json(self._read_body()), {}
        if path == "/analyze":
            server = self.server
            return 200, service.analyze_json(self._read_body(), server.analyze_worlds, server.analyze_seconds), {}
        if path == "/health":
            return 200, service.health(), {}
        if path == "/schema":
            return 200, schema.request_schema(), {}
        return 200, self.server.openapi(), {}

    def _read_body(self) -> bytes:
        """The request body, within the size limit, as JSON (``ApiError`` 400/408/411/413/415; a
        request without Content-Type is taken as JSON)."""
        if "Transfer-Encoding" in self.headers:
            raise ApiError(
                411, "send the body with a Content-Length header (chunked transfer encoding is not supported)"
            )
        values = self.headers.get_all("Content-Length") or []
        if not values:
            raise ApiError(411, "Content-Length required: POST /move takes a JSON body with a Content-Length header")
        if len({v.strip() for v in values}) > 1:
            raise ApiError(400, f"conflicting Content-Length headers: {', '.join(values)}")
        text = values[0].strip()
        if not text.isascii() or not text.isdigit():
            raise ApiError(400, f"invalid Content-Length {text[:40]!r}: expected a number of bytes")
        limit = self.server.max_body
        length = int(text) if len(text) <= 15 else None  # None: too many digits to be worth reading
        if length is None or length > limit:
            if length is not None and length <= DRAIN_LIMIT:
                self._drain(length)
            raise ApiError(413, f"request body of {text} bytes is over the limit of {limit} bytes")
        if length == 0:
            raise ApiError(400, "empty body: POST /move takes a JSON object")
        try:
            data = self.rfile.read(length)
        except TimeoutError:
            raise ApiError(408, f"the body did not arrive within {self.timeout} s") from None
        if len(data) < length:
            raise ApiError(400, f"the body ended after {len(data)} of {length} bytes")
        self._body_read = True
        kind = self.headers.get("Content-Type")
        if kind is not None:
            media = kind.split(";")[0].strip().lower()
            if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
                raise ApiError(415, f"Content-Type must be application/json, got {kind[:80]!r}")
        return data

    def _drain(self, length: int) -> None:
        try:
            while length > 0:
                chunk = self.rfile.read(min(length, 65536))
                if not chunk:
                    return
                length -= len(chunk)
        except OSError:
            pass

    # -- responses and logging -------------------------------------------------------------

    def handle_one_request(self) -> None:
        self._start = time.perf_counter()
        self._body_read = False
        super().handle_one_request()

    def _handle(self) -> None:
        headers: dict = {}
        try:
            status, payload, headers = self._route()
            body = b"" if payload is None else encode_json(payload)
        except ApiError as exc:
            status, body, headers = exc.status, encode_json({"error": exc.message}), exc.headers
        except Exception as exc:  # never let one request take the server down
            if not self.server.quiet:
                traceback.print_exc(file=self.server.log_stream or sys.stderr)
            status, body = 500, encode_json({"error": f"internal error: {type(exc).__name__}: {exc}"})
        self._send(status, body, headers)

    def _send(self, status: int, body: bytes, headers: dict) -> None:
        if not self._body_read and (
            self.headers.get("Content-Length", "0").strip() not in ("", "0") or "Transfer-Encoding" in self.headers
        ):
            self.close_connection = True  # a body we did not read would be taken for the next request
        self._log(status)  # before answering, so the log is in order of answers
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self._common_headers(status, body)
            self.end_headers()
            if body and self.command != "HEAD" and status >= 200 and status not in (204, 304):
                self.wfile.write(body)
            self.wfile.flush()
        except OSError:  # the client went away
            self.close_connection = True

    def _common_headers(self, status: int, body: bytes) -> None:
        if status != 204:
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        cors = self.server.cors
        if cors:
            self.send_header("Access-Control-Allow-Origin", cors)
            if cors != "*":
                self.send_header("Vary", "Origin")
            if self.command == "OPTIONS":
                self.send_header("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", "Content-Type")
                self.send_header("Access-Control-Max-Age", "600")
        if self.close_connection:
            self.send_header("Connection", "close")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors raised by ``http.server`` itself (bad request line, unsupported method) as JSON too."""
        self.close_connection = True
        text = message or self.responses.get(code, ("error",))[0]
        body = encode_json({"error": f"{code}: {text}"})
        self._log(code)
        try:
            self.send_response(code)
            self._common_headers(code, body)
            self.end_headers()
            if getattr(self, "command", None) != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass

    def _log(self, status: int) -> None:
        ms = (time.perf_counter() - getattr(self, "_start", time.perf_counter())) * 1000.0
        method = getattr(self, "command", None) or "-"
        path = getattr(self, "path", None) or "-"
        path = path.encode("ascii", "backslashreplace").decode()[:200]
        self.server.log(f"{method} {path} {status} {ms:.1f} ms")

    def log_request(self, code="-", size="-") -> None:  # replaced by ``_log``
        pass

    def log_message(self, format, *args) -> None:  # noqa: A002 (the base class's signature)
        pass


def make_server(service: BotService, host: str = "127.0.0.1", port: int = 8000, **options) -> BotServer:
    """A ``BotServer`` listening on ``host:port`` (port 0: any free port; see ``server.url``).

    ``options``: ``quiet``, ``max_body`` (bytes), ``cors`` (an origin for Access-Control-Allow-Origin),
    ``log`` (a stream instead of stderr). Call ``serve_forever()`` on it, ``shutdown()`` from another
    thread and ``server_close()`` at the end.
    """
    return BotServer((host, port), service, **options)
