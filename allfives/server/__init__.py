"""The bot server (``allfives serve``): a trained policy, or any agent, answering moves over HTTP.

JSON in and out, on Starlette (ASGI) served by uvicorn (the ``web`` extra). ``service`` checks a
request and rebuilds the position with ``engine.position.view_from_history`` (anything impossible
becomes a 4xx naming the problem); ``asgi`` is the HTTP layer (routes, bodies, errors, the log);
``httpd`` runs it with uvicorn on a socket; ``limits`` holds the timeouts, the caps on connections
and on analysis work, and the Host check that keep slow or greedy clients from locking others out;
``schema`` holds the JSON Schema of the request and the
OpenAPI description. The web page (``allfives.web``) adds its routes to the same application.
docs/frontends.md documents the API.
"""

from .httpd import BotServer, make_server
from .limits import Limits
from .service import ApiError, BotService, resolve_policy_spec

__all__ = ["ApiError", "BotServer", "BotService", "Limits", "make_server", "resolve_policy_spec"]
