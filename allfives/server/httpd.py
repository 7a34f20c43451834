"""The bot server's process side: uvicorn serving the ASGI application of ``asgi`` on one socket.

``make_server`` binds the socket at once (port 0 picks a free one, so ``server.url`` is known
before serving), ``serve_forever()`` runs uvicorn on it until ``shutdown()`` (from another thread)
or Ctrl-C / SIGTERM (in the main thread), and ``server_close()`` closes the socket. The listen
backlog is ``BACKLOG``, so a burst of new connections waits instead of being reset. uvicorn runs
on uvloop where it is installed (the ``web`` extra, except on Windows), else on asyncio's loop.
"""

from __future__ import annotations

import functools
import logging
import socket
import sys
import threading

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .asgi import MAX_BODY, Log, build_app, encode_json
from .service import BotService

__all__ = ["BACKLOG", "MAX_BODY", "BotServer", "make_server"]

#: connections the kernel queues before uvicorn accepts them
BACKLOG = 2048
#: seconds an idle keep-alive connection stays open
KEEP_ALIVE = 30


#: uvicorn's messages about connections, warnings excepted (the refusals below go to the request log)
PROTOCOL_LOG = logging.getLogger("allfives.server.http")
PROTOCOL_LOG.setLevel(logging.ERROR)


class JsonH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own refusals (a request h11 cannot parse: a bad request line,
    a bad or conflicting Content-Length) are JSON errors naming the problem, like the app's, and
    one line of the request log (``log``, an ``asgi.Log``)."""

    def __init__(self, *args, log: Log, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.logger = PROTOCOL_LOG
        self.request_log = log

    def send_400_response(self, msg: str) -> None:
        exc = sys.exc_info()[1]  # called while handling h11's RemoteProtocolError
        reason = (str(exc) if exc is not None and str(exc) else msg)[:200]
        self.request_log.line(f"- - 400 malformed HTTP request: {reason}")
        body = encode_json({"error": f"malformed HTTP request: {reason}"})
        headers = [(b"content-type", b"application/json; charset=utf-8"), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                      h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()


class BotServer:
    """A bound socket, the application and the uvicorn server that runs it."""

    def __init__(
        self,
        address: tuple[str, int],
        service: BotService,
        **options,
    ) -> None:
        """``options``: those of ``asgi.build_app`` (``quiet``, ``max_body``, ``cors``, ``log``,
        ``analyze_worlds``, ``analyze_seconds``, ``extra_routes``), its one home."""
        host, port = address
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
        self.app = build_app(service, url=lambda: self.url, **options)
        protocol = functools.partial(JsonH11Protocol, log=self.app.log)
        config = uvicorn.Config(self.app, log_config=None, access_log=False, lifespan="off", http=protocol,
                                proxy_headers=False, timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=5,
                                backlog=BACKLOG)
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
    (the web page's: ``allfives.web.routes``). Call ``serve_forever()`` on it, ``shutdown()`` from
    another thread and ``server_close()`` at the end.
    """
    return BotServer((host, port), service, **options)
