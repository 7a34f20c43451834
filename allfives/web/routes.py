"""The web page's routes on the bot server (``allfives serve --ui``).

``GET /`` is the page and ``/static/NAME`` its script and style, all read from this package (no
network, no build step). The game API, JSON in and out like the bot API:

- ``GET /api/options``: the bots to choose from and the rules options (``engine.rules.OPTIONS``);
- ``POST /api/games`` ``{"rules": {...}, "seat": 0, "bots": [null, "expert", ...], "hint": "expert",
  "seed": 1}`` (every field optional): a new game, 201 with its state;
- ``GET /api/games/ID``: the state; ``DELETE /api/games/ID``: drop the game (204);
- ``POST /api/games/ID/move`` ``{"action": N}``: the person's move; ``POST /api/games/ID/advance``:
  one bot decision; ``POST /api/games/ID/hint``: the hint bot's move and the move analysis;
- ``GET /api/games/ID/record``: the finished game as an ``allfives-record/1`` file (JSON Lines);
- ``POST /api/games/ID/takeback``: undo your last move and the bots' after it (casual games);
  ``POST /api/games/ID/resign``: end the game now;
- ``GET /api/games/ID/review``: the finished game's placements; ``GET /api/games/ID/review/K``: the
  position before placement K; ``POST /api/games/ID/review/K/rate``: that move rated by the move
  analysis (on the analysis queue, like a hint);
- ``POST /api/reviews`` ``{"record": {...}, "seat": 0}``: an uploaded ``allfives-record/1`` game held
  for its review (the same ``/api/games/ID/review`` routes; it counts as one of the client's games);
- ``GET /favicon.ico`` (and ``/static/favicon.svg``): the page's icon.

A second request for a game while one is being answered gets a 409 (the page sends one at a time).
One client (address) holds at most ``store.max_client_games`` games (429 beyond). The work runs off
the event loop where it cannot hold up the rest: hints on the server's analysis queue (bounded in
all and per client, shared with ``/analyze``: 429 or 503 with Retry-After beyond), the bots' moves
on ``BOT_WORKERS`` threads of their own, the rest (a game's state, a move, the record) on
Starlette's thread pool, which the heavy work therefore never fills. ``/health`` and a game's state
answer at once while hints are being worked out.
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
from importlib import resources

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from allfives.server.asgi import Settings, client_of, encode_json, endpoint, read_json_body
from allfives.server.limits import WorkQueue
from allfives_env.engine.schemas import option_types
from allfives.server.service import ApiError, json_type, parse_json
from allfives_env.engine import Rules
from allfives_env.engine.record import RecordError, replay_record
from allfives_env.engine.rules import OPTIONS

from allfives_agents.bots import default_bot

from .bots import bot_choices
from .game import WebGame
from .review import RecordReview
from .store import GameStore

ASSETS = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "review.js": "text/javascript; charset=utf-8",
          "style.css": "text/css; charset=utf-8", "offline.html": "text/html; charset=utf-8",
          "offline.js": "text/javascript; charset=utf-8", "allfives.js": "text/javascript; charset=utf-8",
          "favicon.svg": "image/svg+xml"}
#: the offline page's ``static/vendor/`` (onnxruntime-web and the shipped models, put there by
#: ``npm ci``: scripts/vendor_web.mjs), by suffix; absent in a checkout without npm
VENDOR_TYPES = {".mjs": "text/javascript; charset=utf-8", ".wasm": "application/wasm",
                ".onnx": "application/octet-stream"}
GAME_FIELDS = ("rules", "seat", "bots", "hint", "seed", "casual")
REVIEW_FIELDS = ("record", "seat")
#: the largest uploaded record (a whole game's JSON)
MAX_RECORD_BYTES = 1 << 20
#: threads playing the bots' moves (each waiting move holds its game, so at most one per game waits)
BOT_WORKERS = 2


def _assets() -> dict[str, bytes]:
    folder = resources.files("allfives.web") / "static"
    return {name: (folder / name).read_bytes() for name in ASSETS}


def _vendor_files() -> dict:
    """``static/vendor/`` by relative name (``ort.wasm.min.mjs``, ``models/allfives_2p.onnx``...):
    the only files a request may name, read on request (the .wasm is 15 MB)."""
    folder = resources.files("allfives.web") / "static" / "vendor"
    files = {}
    for prefix, sub in (("", folder), ("models/", folder / "models")):
        if sub.is_dir():
            for f in sub.iterdir():
                if f.is_file() and "." + f.name.rsplit(".", 1)[-1] in VENDOR_TYPES:
                    files[prefix + f.name] = f
    return files


def rules_options() -> list[dict]:
    """The rules options as the page builds its form from them."""
    return [
        {"name": o.name, "help": o.help, "type": " or ".join(option_types(o)), "default": o.default,
         "choices": list(o.choices), "minimum": o.minimum, "maximum": o.maximum}
        for o in OPTIONS
    ]


def new_game(body, store: GameStore, bots: dict, client: str = "-") -> WebGame:
    """A ``WebGame`` from a ``POST /api/games`` body (``ApiError`` 400/422 naming the problem; 503
    or 429 when the cap on games, in all or of ``client``, is reached)."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the request must be a JSON object, got {json_type(body)}")
    unknown = sorted(set(body) - set(GAME_FIELDS))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(map(repr, unknown))}; a new game has {', '.join(GAME_FIELDS)}")
    options = body.get("rules")
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise ApiError(422, f"rules must be an object of rules options, got {json_type(options)}")
    try:
        rules = Rules.from_dict(options)
    except (TypeError, ValueError) as exc:
        raise ApiError(422, f"rules: {exc}") from None
    n = rules.num_players
    seat = body.get("seat", 0)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ApiError(422, f"seat must be your seat 0..{n - 1}, got {json.dumps(seat)[:40]}")
    default = default_bot(n, rules.partnerships)
    chosen = body.get("bots") or [None] * n
    if not isinstance(chosen, list) or len(chosen) != n:
        raise ApiError(422, f"bots must be a list of {n} bot ids, one per seat (null: the default; yours is ignored)")
    seated = []
    for s, name in enumerate(chosen):
        name = default if name is None else name
        if s == seat:
            seated.append(None)
        elif not isinstance(name, str) or name not in bots:
            raise ApiError(422, f"bots[{s}]: unknown bot {json.dumps(name)[:40]}; bots: {', '.join(bots)}")
        else:
            seated.append(bots[name])
    hint = body.get("hint") or default
    if not isinstance(hint, str) or hint not in bots:
        raise ApiError(422, f"hint: unknown bot {json.dumps(hint)[:40]}; bots: {', '.join(bots)}")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise ApiError(422, f"seed must be an integer 0..2**63-1, got {json.dumps(seed)[:40]}")
    casual = body.get("casual", True)
    if not isinstance(casual, bool):
        raise ApiError(422, f"casual must be true or false, got {json.dumps(casual)[:40]}")
    store.check_room(client)
    if seed is None:
        seed = secrets.randbits(63)
    return WebGame(store.new_id(), rules, seat, seated, bots[hint], seed, casual)


def new_review(body, store: GameStore, client: str = "-") -> RecordReview:
    """A ``RecordReview`` from a ``POST /api/reviews`` body: the record is replayed and checked by
    the engine (422 naming the problem)."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the request must be a JSON object, got {json_type(body)}")
    unknown = sorted(set(body) - set(REVIEW_FIELDS))
    if unknown or "record" not in body:
        raise ApiError(400, 'a review is {"record": {...an allfives-record/1 game...}, "seat": N}')
    try:
        game = replay_record(body["record"], name="the record")
    except (RecordError, ValueError, TypeError, KeyError) as exc:
        raise ApiError(422, f"not a valid allfives-record/1 game: {str(exc)[:300]}") from None
    players = [str(p)[:40] for p in body["record"].get("players", [])] or ["?"] * game.num_players
    seat = body.get("seat")
    if seat is None:
        seat = players.index("human") if "human" in players else 0
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.num_players:
        raise ApiError(422, f"seat must be 0..{game.num_players - 1}, got {json.dumps(seat)[:40]}")
    store.check_room(client)
    return RecordReview(store.new_id(), game, seat, players)


def _a_game(game) -> WebGame:
    if not isinstance(game, WebGame):
        raise ApiError(409, "this id is an uploaded record's review, not a game to play")
    return game


def web_routes(store: GameStore, analyze_worlds: int, analyze_seconds: float):
    """``extra_routes`` for ``allfives.server.asgi.build_app``: the page and the game API."""
    assets = _assets()
    vendor_files = _vendor_files()
    bots = bot_choices()

    def build(settings: Settings):
        bot_moves = WorkQueue(BOT_WORKERS, what="bot moves")

        async def page(request, s):
            return Response(assets["index.html"], headers={"Content-Type": ASSETS["index.html"], "Cache-Control": "no-cache"})

        async def asset(request, s):
            name = request.path_params["name"]
            if name not in assets or name == "index.html":
                raise ApiError(404, f"no such file {name[:60]!r}; files: app.js, style.css")
            return Response(assets[name], headers={"Content-Type": ASSETS[name], "Cache-Control": "no-cache"})

        async def vendor(request, s):
            name = request.path_params["path"]
            file = vendor_files.get(name)
            if file is None:
                raise ApiError(404, f"no such file {name[:60]!r} in /static/vendor/ (npm ci puts onnxruntime-web and the models there)")
            body = await run_in_threadpool(file.read_bytes)
            return Response(body, headers={"Content-Type": VENDOR_TYPES["." + name.rsplit(".", 1)[-1]],
                                           "Cache-Control": "no-cache"})

        async def options(request, s):
            return 200, {"bots": [b.to_dict() for b in bots.values()], "rules": rules_options(),
                         "max_games": store.max_games, "max_client_games": store.max_client_games}, {}

        async def create(request, s):
            body = parse_json(await read_json_body(request, s))
            client = client_of(request)
            game = await run_in_threadpool(new_game, body, store, bots, client)
            store.add(game, client)
            return 201, game.state(), {"Location": f"/api/games/{game.id}"}

        async def on_game(request, work, queue: WorkQueue | None = None):
            """``work(game)`` for the request's game, held from now until ``work`` is done, on
            ``queue`` (``None``: Starlette's thread pool)."""
            game = store.take(request.path_params["game_id"])

            def held():
                try:
                    return work(game)
                finally:
                    store.give_back(game)

            try:
                pending = run_in_threadpool(held) if queue is None else queue.submit(client_of(request), held)
            except BaseException:
                store.give_back(game)
                raise
            return await asyncio.shield(pending)  # once queued, it runs: only ``held`` gives the game back

        async def show(request, s):
            return 200, await on_game(request, lambda g: _a_game(g).state()), {}

        async def delete(request, s):
            store.remove(request.path_params["game_id"])
            return 204, None, {}

        async def move(request, s):
            body = parse_json(await read_json_body(request, s))
            if not isinstance(body, dict) or set(body) != {"action"}:
                raise ApiError(422, 'a move is {"action": N}, one of the action ids the state lists')

            def work(game):
                _a_game(game).play(body["action"])
                return game.state()

            return 200, await on_game(request, work), {}

        async def advance(request, s):
            def work(game):
                _a_game(game).advance()
                return game.state()

            return 200, await on_game(request, work, bot_moves), {}

        async def hint(request, s):
            work = lambda game: _a_game(game).hint(analyze_worlds, analyze_seconds)  # noqa: E731
            return 200, await on_game(request, work, s.analysis), {}

        async def record(request, s):
            rec = await on_game(request, lambda g: _a_game(g).record())
            name = f"allfives-{request.path_params['game_id'][:12]}.jsonl"
            return Response(encode_json(rec), headers={"Content-Type": "application/x-ndjson; charset=utf-8",
                                                       "Content-Disposition": f'attachment; filename="{name}"',
                                                       "Cache-Control": "no-store"})

        def game_action(name):
            async def handler(request, s):
                def work(game):
                    getattr(_a_game(game), name)()
                    return game.state()

                return 200, await on_game(request, work), {}

            return handler

        def index_of(request) -> int:
            text = request.path_params["index"]
            if not text.isdigit() or len(text) > 6:
                raise ApiError(404, f"no move {text[:20]!r}: moves are numbered from 0")
            return int(text)

        async def review(request, s):
            return 200, await on_game(request, lambda g: g.review().summary()), {}

        async def review_position(request, s):
            k = index_of(request)
            return 200, await on_game(request, lambda g: g.review().position(k)), {}

        async def review_rate(request, s):
            k = index_of(request)
            work = lambda g: g.review().rate(k, analyze_worlds, analyze_seconds)  # noqa: E731
            return 200, await on_game(request, work, s.analysis), {}

        uploads = copy.copy(settings)
        uploads.max_body = max(settings.max_body, MAX_RECORD_BYTES)

        async def upload(request, s):
            body = parse_json(await read_json_body(request, uploads))
            client = client_of(request)
            held = await run_in_threadpool(new_review, body, store, client)
            store.add(held, client)
            return 201, dict(held.review().summary(), id=held.id), {"Location": f"/api/games/{held.id}/review"}

        async def favicon(request, s):
            return Response(assets["favicon.svg"], headers={"Content-Type": ASSETS["favicon.svg"], "Cache-Control": "max-age=86400"})

        routes = [
            endpoint("/", {"GET": page}, settings),
            endpoint("/favicon.ico", {"GET": favicon}, settings),
            endpoint("/static/vendor/{path:path}", {"GET": vendor}, settings),
            endpoint("/static/{name}", {"GET": asset}, settings),
            endpoint("/api/options", {"GET": options}, settings),
            endpoint("/api/games", {"POST": create}, settings),
            endpoint("/api/games/{game_id}", {"GET": show, "DELETE": delete}, settings),
            endpoint("/api/games/{game_id}/move", {"POST": move}, settings),
            endpoint("/api/games/{game_id}/advance", {"POST": advance}, settings),
            endpoint("/api/games/{game_id}/hint", {"POST": hint}, settings),
            endpoint("/api/games/{game_id}/record", {"GET": record}, settings),
            endpoint("/api/games/{game_id}/takeback", {"POST": game_action("takeback")}, settings),
            endpoint("/api/games/{game_id}/resign", {"POST": game_action("resign")}, settings),
            endpoint("/api/games/{game_id}/review", {"GET": review}, settings),
            endpoint("/api/games/{game_id}/review/{index}", {"GET": review_position}, settings),
            endpoint("/api/games/{game_id}/review/{index}/rate", {"POST": review_rate}, settings),
            endpoint("/api/reviews", {"POST": upload}, settings),
        ]
        return routes, ["/", "/static/app.js", "/static/style.css", "/api/options", "/api/games"]

    return build
