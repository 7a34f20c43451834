"""The bot server (``allfives serve``): a trained policy, or any agent, answering moves over HTTP.

Standard library only (``http.server``), JSON in and out. ``service`` checks a request and
rebuilds the position with ``engine.position.view_from_history`` (anything impossible becomes a
4xx naming the problem); ``httpd`` is the HTTP layer; ``schema`` holds the JSON Schema of the
request and the OpenAPI description. docs/frontends.md documents the API.
"""

from .httpd import BotServer, make_server
from .service import ApiError, BotService, resolve_policy_spec

__all__ = ["ApiError", "BotServer", "BotService", "make_server", "resolve_policy_spec"]
