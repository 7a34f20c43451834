"""What the bot server answers, independent of HTTP: its health, the move for a position, errors.

A move request names the rules, a seat, its hand and the public history of the current hand (see
docs/frontends.md and ``schema.py``). ``BotService.move`` checks the request's shape (400 for a
body that is not a request at all, 422 for wrong types and impossible positions), rebuilds the
seat's ``PlayerView`` with ``view_from_history``, asks the agent, and refuses to answer with a
move that is not legal. Every refusal is an ``ApiError`` carrying the HTTP status and a message
naming the problem.
"""

from __future__ import annotations

import json
import operator
import threading

import numpy as np

from allfives_agents import AgentSpec, make_agent, resolve_spec
from allfives_agents.factory import BotAgent
from allfives_agents.models import available_models
from allfives_agents.nets.policy import PolicyPlayersError, check_trained_players, describe_players, trained_rules  # noqa: F401
from allfives_env.engine.position import PositionError, view_from_history
from allfives_env.engine.rules import Rules
from allfives_env.observation import OBS_SIZES, OBS_VERSION

#: the fields of a move request, and those it must have
REQUEST_FIELDS = ("rules", "seat", "hand", "history", "scores", "explain")
REQUIRED_FIELDS = ("seat", "hand")
#: the fields of a ``POST /analyze`` body: a position as for ``/move``, the worlds, the playout policy
ANALYZE_FIELDS = ("rules", "seat", "hand", "history", "scores", "worlds", "playout", "seed", "belief")
#: the playout policies ``/analyze`` offers (names only: a request never names a file)
PLAYOUTS = ("greedy", "expert", "random")
#: the default per-request caps of ``/analyze`` (``allfives serve --analyze-worlds/--analyze-seconds``)
ANALYZE_WORLDS, ANALYZE_SECONDS = 200, 2.0


class ApiError(Exception):
    """A request the server refuses: ``status`` is the HTTP status, the message says why; ``headers``
    go with the answer (``Allow`` for a 405)."""

    def __init__(self, status: int, message: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


resolve_policy_spec = resolve_spec  # the server's name for it


def json_type(value) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _show(value, limit: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate field {key!r}")
        out[key] = value
    return out


def _no_constant(name):
    raise _DuplicateKey(f"{name} is not valid JSON")


def parse_json(data: bytes):
    """Decode a request body; ``ApiError`` 400 unless it is strict JSON (UTF-8, no NaN, no duplicate keys)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"malformed JSON: the body is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ApiError(400, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ApiError(400, "malformed JSON: nested too deeply") from None
    except ValueError as exc:  # duplicate keys, NaN/Infinity, integers with too many digits
        raise ApiError(400, f"malformed JSON: {exc}") from None


def check_request(body, fields: tuple = REQUEST_FIELDS, kind: str = "move") -> dict:
    """The request with defaults filled in, after checking its fields and their types (``ApiError``
    400/422). ``fields`` are the fields a ``kind`` request may have (the position's and its own)."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the request must be a JSON object, got {json_type(body)}")
    unknown = sorted(set(body) - set(fields))
    if unknown:
        raise ApiError(
            400, f"unknown field(s) {', '.join(map(repr, unknown))}; a {kind} request has {', '.join(fields)}"
        )
    missing = [name for name in REQUIRED_FIELDS if name not in body]
    if missing:
        raise ApiError(422, f"missing field(s) {', '.join(map(repr, missing))}")

    def expect(name, ok, what):
        value = body.get(name)
        if not ok(value):
            raise ApiError(422, f"{name} must be {what}, got {json_type(value)} {_show(value)}")
        return value

    seat = expect("seat", _is_int, "an integer (the seat to move)")
    hand = expect("hand", lambda v: isinstance(v, list), "an array of tiles [a, b]")
    for i, tile in enumerate(hand):
        if not (isinstance(tile, list) and len(tile) == 2 and all(_is_int(p) for p in tile)):
            raise ApiError(422, f"hand[{i}] must be a tile [a, b] of two integers 0..6, got {_show(tile)}")
    history = expect("history", lambda v: v is None or isinstance(v, list), "an array of events") or []
    for i, event in enumerate(history):
        if not isinstance(event, dict):
            raise ApiError(422, f"history[{i}] must be an event object, got {json_type(event)} {_show(event)}")
        for name, (ok, what) in EVENT_FIELD_TYPES.items():
            if name in event and not ok(event[name]):
                value = event[name]
                raise ApiError(422, f"history[{i}].{name} must be {what}, got {json_type(value)} {_show(value)}")
    scores = expect(
        "scores",
        lambda v: v is None or (isinstance(v, list) and all(_is_int(s) for s in v)),
        "null or an array of integers",
    )
    rules = expect("rules", lambda v: v is None or isinstance(v, dict), "null or an object of rules options")
    explain = expect("explain", lambda v: v is None or isinstance(v, bool), "true or false")
    _check_magnitudes(body)
    return {"rules": rules, "seat": seat, "hand": hand, "history": history, "scores": scores, "explain": bool(explain)}


def request_view(req: dict, rules: Rules):
    """The ``PlayerView`` of a checked request's position under ``rules`` (``ApiError`` 422 for an
    impossible position); the server and ``allfives analyze --position`` read positions with it."""
    try:
        return view_from_history(rules, req["seat"], req["hand"], req["history"], req["scores"])
    except PositionError as exc:
        raise ApiError(422, str(exc)) from None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: the JSON type of each field of a history event (the engine checks the values)
EVENT_FIELD_TYPES = {
    "type": (lambda v: isinstance(v, str), "a string (play, draw or pass)"),
    "player": (_is_int, "an integer (a seat)"),
    "tile": (lambda v: v is None or isinstance(v, list), "a tile [a, b] (or null for a hidden draw)"),
    "end": (lambda v: isinstance(v, str), "a string (lead, west, east, north or south)"),
    "points": (lambda v: v is None or _is_int(v), "an integer"),
}
#: integers in a request must lie within +-MAX_INT (scores, targets and seats are far smaller)
MAX_INT = 2**31 - 1


def _check_magnitudes(body) -> None:
    """``ApiError`` 422 for an integer beyond ``MAX_INT`` anywhere in the request (iterative: any depth)."""
    stack = [(body, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            stack.extend((value, f"{where}.{key}" if where else key) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, f"{where}[{i}]") for i, value in enumerate(node))
        elif _is_int(node) and not -MAX_INT <= node <= MAX_INT:
            raise ApiError(422, f"{where}: integer out of range (at most {MAX_INT} in magnitude)")


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities from logits (float64, shifted by the maximum)."""
    x = np.asarray(logits, np.float64)
    x = np.exp(x - x.max())
    return x / x.sum()


class BotService:
    """One agent answering move requests. Thread-safe: the agent is called under a lock."""

    def __init__(self, policy, seed: int | None = None) -> None:
        """``policy``: a file path, an agent spec or a named bot (text or ``AgentSpec``), or an ``Agent``.
        A named bot answers every game it has a setting for, each with its own.

        Raises ``ValueError`` (``PolicyFileError`` included) for a bad spec, file or policy metadata.
        """
        spec = AgentSpec.parse(policy) if isinstance(policy, str) else policy
        self.agent = make_agent(spec, seed=seed)
        #: a named bot's spec (its setting is picked per request's rules), else ``None``
        self.bot: AgentSpec | None = self.agent.spec if isinstance(self.agent, BotAgent) else None
        self.name: str = self.agent.name
        self.policy_rules: Rules | None = trained_rules(self.agent)  # ValueError if the metadata's are invalid
        #: the rules of a request that gives none: the policy's, else the 2-player defaults
        self.default_rules: Rules = self.policy_rules or Rules.make()
        #: the observation version of the policy (version 1 for agents without one)
        self.obs_version: int = getattr(getattr(self.agent, "policy", None), "obs_version", OBS_VERSION)
        self._lock = threading.Lock()

    def health(self) -> dict:
        """The body of ``GET /health``."""
        return {
            "status": "ok",
            "policy": self.name,
            "obs_version": self.obs_version,
            "obs_size": OBS_SIZES[self.obs_version],
            "rules": None if self.policy_rules is None else self.policy_rules.to_dict(),
        }

    def rules_for(self, options: dict | None) -> Rules:
        """The request's rules (``ApiError`` 422 with the ``Rules`` message), checked against the policy's."""
        if options is None:
            rules = self.default_rules
        else:
            try:
                rules = Rules.from_dict(options)
            except (TypeError, ValueError) as exc:
                raise ApiError(422, f"rules: {exc}") from None
        try:  # the same check as allfives tournament and allfives play
            check_trained_players(self.name, self.policy_rules, rules, "this request")
            if self.bot is not None:
                self.bot.for_game(rules.num_players, rules.partnerships)
        except ValueError as exc:  # PolicyPlayersError; a named bot with no setting for these rules
            raise ApiError(422, str(exc)) from None
        return rules

    def view_of(self, req: dict):
        """The ``PlayerView`` of a checked request's position (``ApiError`` 422 for rules or a position refused)."""
        return request_view(req, self.rules_for(req["rules"]))

    def move(self, body) -> dict:
        """The body of ``POST /move`` for a decoded request (``ApiError`` for anything refused)."""
        req = check_request(body)
        view = self.view_of(req)
        legal = view.legal_actions
        with self._lock:
            chosen = self.agent.act(view)
            logits = self._legal_logits(view) if req["explain"] else None
        try:
            action = operator.index(chosen)
        except TypeError:
            raise ApiError(500, f"the agent {self.name} answered {chosen!r}, not an action id") from None
        if isinstance(chosen, bool) or action not in legal:
            raise ApiError(
                500, f"the agent {self.name} chose action {chosen!r}, which is not legal here (legal: {legal})"
            )
        out = view.describe(action)
        out["obs_version"] = self.obs_version
        if req["explain"]:
            if logits is not None and not np.all(np.isfinite(logits)):
                raise ApiError(500, f"the policy {self.name} produced non-finite logits")
            probs = softmax(logits).tolist() if logits is not None else [None] * len(legal)
            out["legal"] = [dict(view.describe(a), prob=p) for a, p in zip(legal, probs)]
        return out

    def move_json(self, data: bytes) -> dict:
        """``move`` of a raw request body."""
        return self.move(parse_json(data))

    def analyze(self, body, max_worlds: int = ANALYZE_WORLDS, max_seconds: float = ANALYZE_SECONDS) -> dict:
        """The body of ``POST /analyze``: ``allfives_agents.analysis.analyze`` of the position, within the
        server's caps (at most ``max_worlds`` worlds and about ``max_seconds`` of playouts)."""
        from allfives_agents.analysis import analyze

        req = check_request(body, ANALYZE_FIELDS, "analyze")
        worlds = body.get("worlds", min(100, max_worlds))
        if not _is_int(worlds) or not 1 <= worlds <= max_worlds:
            raise ApiError(422, f"worlds must be an integer in 1..{max_worlds} (this server's cap), got {_show(worlds)}")
        playout = body.get("playout", "greedy")
        if playout not in PLAYOUTS:
            raise ApiError(422, f"playout must be one of {', '.join(PLAYOUTS)}, got {_show(playout)}")
        seed = body.get("seed", 0)
        if not _is_int(seed) or seed < 0:
            raise ApiError(422, f"seed must be a non-negative integer, got {_show(seed)}")
        belief, models = body.get("belief"), available_models()
        if belief is not None and (not isinstance(belief, str) or belief not in models):
            raise ApiError(422, f"belief must be a shipped model's name ({', '.join(models)}) or null, got {_show(belief)}")
        view = self.view_of(req)
        try:
            return analyze(view, playout, worlds, seed=seed, seconds=max_seconds, belief=belief)
        except PolicyPlayersError as exc:
            raise ApiError(422, f"belief: {exc}") from None

    def analyze_json(self, data: bytes, max_worlds: int = ANALYZE_WORLDS, max_seconds: float = ANALYZE_SECONDS) -> dict:
        """``analyze`` of a raw request body."""
        return self.analyze(parse_json(data), max_worlds, max_seconds)

    def _legal_logits(self, view) -> np.ndarray | None:
        """The policy's logits of the legal actions (float64), or ``None`` for agents without logits."""
        policy = getattr(self.agent, "policy", None)
        if not hasattr(policy, "logits"):  # NumpyPolicy (ppo:) and OnnxPolicy (onnx:) have them
            return None
        return np.asarray(policy.logits(policy.encode(view)), np.float64)[view.legal_actions]
