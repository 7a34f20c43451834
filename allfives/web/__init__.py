"""The web page of ``allfives serve --ui``: play a whole game against bots in a browser.

The server holds each game (``game.WebGame`` on the engine's ``Game``, kept by ``store.GameStore``)
and the page (``static/``: plain HTML, CSS and JavaScript, no build step, nothing fetched from the
network) shows what the server sends: the picture of the position (``allfives_env.picture``), the
legal moves, the log. It sends action ids back; it knows no rule. ``routes`` adds the page and its
JSON API to the bot server's application. docs/frontends.md documents it.
"""
