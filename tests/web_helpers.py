"""A bot server with the web page (``allfives serve --ui``) in a thread, for the web tests."""

import contextlib
import threading

from allfives.server import BotService, make_server
from allfives.web.routes import web_routes
from allfives.web.store import GameStore


@contextlib.contextmanager
def web_server(store: GameStore | None = None, **options):
    """``(server, store)``: the page and its API on a free port."""
    store = GameStore() if store is None else store
    options.setdefault("quiet", True)
    server = make_server(BotService("greedy"), "127.0.0.1", 0,
                         extra_routes=web_routes(store, options.pop("analyze_worlds", 40), options.pop("analyze_seconds", 0.5)),
                         **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, store
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
