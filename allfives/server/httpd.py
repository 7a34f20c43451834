"""The bot server's process side: uvicorn serving the ASGI application of ``asgi`` on one socket.

``make_server`` binds the socket at once (port 0 picks a free one, so ``server.url`` is known
before serving), ``serve_forever()`` runs uvicorn on it until ``shutdown()`` (from another thread)
or Ctrl-C / SIGTERM (in the main thread), and ``server_close()`` closes the socket. The listen
backlog is ``BACKLOG``, so a burst of new connections waits instead of being reset. uvicorn runs
on uvloop where it is installed (the ``web`` extra, except on Windows), else on asyncio's loop.

The connection side of ``limits.Limits`` lives in the protocol (``JsonH11Protocol``), counted by
``limits.ConnectionLimits``: at most ``max_connections`` sockets are open, so slow clients never use
up the process's open files. A new connection over its client's cap is answered 429 and closed as
it is accepted; at the total cap it takes the place of the connection that has waited on its client
the longest (503 only when every connection has a request being answered). A request whose headers
are not complete ``header_timeout`` seconds after the connection opened (or after its first byte,
on a kept-alive connection) gets a 408 and is closed; a connection that sent nothing is closed
then, silently; a kept-alive connection waits ``idle_timeout`` seconds for its next request.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import sys
import threading
from dataclasses import replace

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .asgi import MAX_BODY, Log, build_app, encode_json
from .limits import LOCAL_PROXY, AddressSet, ConnectionLimits, HostCheck, Limits, flag
from .service import BotService

__all__ = ["BACKLOG", "MAX_BODY", "BotServer", "Limits", "make_server"]

#: connections the kernel queues before uvicorn accepts them
BACKLOG = 2048
#: open files kept for the process itself (the listening socket, the event loop, model files...)
RESERVED_FILES = 64


#: uvicorn's messages about connections, warnings excepted (the refusals below go to the request log)
PROTOCOL_LOG = logging.getLogger("allfives.server.http")
PROTOCOL_LOG.setLevel(logging.ERROR)


def refusal_bytes(status: int, message: str, retry_after: int | None = None) -> bytes:
    """A whole JSON error answer that closes the connection, for when no request was parsed."""
    body = encode_json({"error": message})
    reason = {408: "Request Timeout", 429: "Too Many Requests", 503: "Service Unavailable"}[status]
    retry = f"retry-after: {retry_after}\r\n" if retry_after is not None else ""
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\ncache-control: no-store\r\n{retry}connection: close\r\n\r\n")
    return head.encode() + body


class JsonH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own refusals (a request h11 cannot parse: a bad request line,
    a bad or conflicting Content-Length) are JSON errors naming the problem, like the app's, and
    one line of the request log (``log``, an ``asgi.Log``); with the connection caps of ``caps``
    (shared by every connection) and the header and idle timeouts of its ``limits``."""

    def __init__(self, *args, log: Log, caps: ConnectionLimits, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.logger = PROTOCOL_LOG
        self.request_log = log
        self.caps = caps
        self.head_timer: asyncio.TimerHandle | None = None
        self.since = 0.0  # when the present wait on the client began (``waiting_since``)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.since = self.loop.time()
        refused = self.caps.admit(self, self.client[0] if self.client else "-")
        if refused is not None:
            self.refuse(*refused, retry_after=1)
            return
        self.head_timer = self.loop.call_later(self.caps.limits.header_timeout, self.head_timed_out)

    def connection_lost(self, exc) -> None:
        self.stop_head_timer()
        self.caps.release(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        before = self.conn.their_state
        super().data_received(data)
        if before is h11.IDLE and self.conn.their_state is not h11.IDLE:
            self.since = self.loop.time()  # the head is in: a wait for its body, if any, begins
        self.watch_head()

    def on_response_complete(self) -> None:
        self.since = self.loop.time()
        super().on_response_complete()

    def waiting_since(self) -> float | None:
        """When this connection began waiting on its client (for a request's head, the rest of its
        body, or its next request), or ``None`` while a request of it is being answered."""
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return None
        return self.since

    def evict(self) -> None:
        """Close this connection to make room for a new one (the server is at its cap)."""
        self.request_log.line(f"- - closed a connection waiting on its client to make room "
                              f"({flag('max_connections')} {self.caps.limits.max_connections})")
        self.stop_head_timer()
        self.transport.close()

    def watch_head(self) -> None:
        """Time the head of a request that has begun (h11's client state IDLE: its headers are
        not complete); stop timing once they are."""
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            if self.head_timer is None:
                self.head_timer = self.loop.call_later(self.caps.limits.header_timeout, self.head_timed_out)
        else:
            self.stop_head_timer()

    def stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def head_timed_out(self) -> None:
        self.head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if not self.conn.trailing_data[0]:  # not a byte of a request: an idle connection
            self.transport.close()
            return
        seconds = self.caps.limits.header_timeout
        self.refuse(408, f"the request line and headers did not arrive within {seconds:g} s ({flag('header_timeout')})")

    def refuse(self, status: int, message: str, retry_after: int | None = None) -> None:
        """Answer ``status`` before any request was parsed, and close."""
        self.request_log.line(f"- - {status} {message}")
        self.transport.write(refusal_bytes(status, message, retry_after))
        self.transport.close()

    def timeout_keep_alive_handler(self) -> None:
        """Close an idle kept-alive connection, dropping an answer its client never read."""
        if not self.transport.is_closing() and self.transport.get_write_buffer_size():
            self.transport.abort()
            return
        super().timeout_keep_alive_handler()

    def send_400_response(self, msg: str) -> None:
        self.stop_head_timer()
        exc = sys.exc_info()[1]  # called while handling h11's RemoteProtocolError
        reason = (str(exc) if exc is not None and str(exc) else msg)[:200]
        self.request_log.line(f"- - 400 malformed HTTP request: {reason}")
        body = encode_json({"error": f"malformed HTTP request: {reason}"})
        headers = [(b"content-type", b"application/json; charset=utf-8"), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                      h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


def fit_open_files(limits: Limits, log: Log) -> Limits:
    """``limits`` with ``max_connections`` lowered where the process's open-file limit would not
    hold that many sockets (after raising the soft limit as far as the hard one allows)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to fit
        return limits
    need = limits.max_connections + RESERVED_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= need:
        return limits
    fitted = max(1, soft - RESERVED_FILES)
    log.line(f"{flag('max_connections')} lowered from {limits.max_connections} to {fitted}: "
             f"the process may open {soft} files (ulimit -n)")
    return replace(limits, max_connections=fitted, max_client_connections=min(limits.max_client_connections, fitted))


class BotServer:
    """A bound socket, the application and the uvicorn server that runs it."""

    def __init__(
        self,
        address: tuple[str, int],
        service: BotService,
        **options,
    ) -> None:
        """``options``: those of ``asgi.build_app`` (``quiet``, ``max_body``, ``cors``, ``log``,
        ``analyze_worlds``, ``analyze_seconds``, ``extra_routes``, ``limits``), its one home, and
        ``allowed_hosts`` (more names for the Host check; ``"*"``: any) and ``behind_proxy`` (the
        reverse proxies' addresses, ``"127.0.0.1,::1"`` for one on this machine: their
        X-Forwarded-For names the client, and they are exempt from the per-client connection cap)."""
        host, port = address
        allowed = options.pop("allowed_hosts", None) or ()
        allowed = tuple(allowed.split(",") if isinstance(allowed, str) else allowed)
        proxies = options.pop("behind_proxy", None)
        proxies = AddressSet(LOCAL_PROXY if proxies is True else proxies) if proxies else None
        limits = options.pop("limits", None) or Limits()
        limits.check()
        self.socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(BACKLOG)
        except OSError:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()
        self.service = service
        self.app = build_app(service, url=lambda: self.url, limits=limits, hosts=HostCheck(host, allowed), **options)
        self.limits = limits = fit_open_files(limits, self.app.log)
        self.caps = ConnectionLimits(limits, proxies)
        protocol = functools.partial(JsonH11Protocol, log=self.app.log, caps=self.caps)
        config = uvicorn.Config(self.app, log_config=None, access_log=False, lifespan="off", http=protocol,
                                proxy_headers=proxies is not None,
                                forwarded_allow_ips=proxies.text if proxies is not None else None,
                                timeout_keep_alive=limits.idle_timeout, timeout_graceful_shutdown=5, backlog=BACKLOG)
        self._uvicorn = uvicorn.Server(config)
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the listening socket."""
        host, port = self.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def serve_forever(self, poll_interval: float | None = None) -> None:
        """Serve until ``shutdown()`` or a signal (``poll_interval`` is accepted for
        ``socketserver`` compatibility and not needed)."""
        self._stopped.clear()
        try:
            self._uvicorn.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop serving (from another thread) and wait until the server has stopped."""
        self._uvicorn.should_exit = True
        self._stopped.wait(timeout)

    def server_close(self) -> None:
        self.socket.close()


def make_server(service: BotService, host: str = "127.0.0.1", port: int = 8000, **options) -> BotServer:
    """A ``BotServer`` listening on ``host:port`` (port 0: any free port; see ``server.url``).

    ``options``: ``quiet``, ``max_body`` (bytes), ``cors`` (an origin for Access-Control-Allow-Origin),
    ``log`` (a stream instead of stderr), ``analyze_worlds``, ``analyze_seconds``, ``extra_routes``
    (the web page's: ``allfives.web.routes``), ``limits`` (``Limits``: timeouts, connection caps, the
    analysis queue), ``allowed_hosts`` and ``behind_proxy`` (see ``BotServer``). Call
    ``serve_forever()`` on it, ``shutdown()`` from another thread and ``server_close()`` at the end.
    """
    return BotServer((host, port), service, **options)
