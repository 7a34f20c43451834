"""JSON Schemas (2020-12) of what the engine writes, for frontends that validate without this package.

``record_schema()`` describes an ``allfives-record/1`` object (docs/records.md). Its parts come from
the tables they describe: the rules options from ``rules.OPTIONS`` (``option_schema``, which the bot
server's request schema uses too), the arms from ``tiles.END_NAMES``, the players and tiles from
the engine's limits, so a new option or arm changes the schema with it. A schema checks the shape of a
record; whether its moves follow the rules is ``allfives replay``'s job (``record.replay``).
``docs/schemas/`` holds the published files (``python docs/generate.py`` writes them).
"""

from __future__ import annotations

from .events import END_LABELS
from .game import RECORD_FORMAT
from .rules import OPTIONS, Option
from .tiles import NUM_TILES


DIALECT = "https://json-schema.org/draft/2020-12/schema"
MAX_PLAYERS = max(o.maximum for o in OPTIONS if o.name == "num_players")
MAX_SEAT = MAX_PLAYERS - 1
#: the JSON type of each Python type a rules option is given as (``rules.Option.given``)
JSON_TYPES = {int: "integer", bool: "boolean", str: "string"}

TILE = {
    "description": "a tile [a, b], pips 0..6 (records write the lower first; requests take either order)",
    "type": "array",
    "items": {"type": "integer", "minimum": 0, "maximum": 6},
    "minItems": 2,
    "maxItems": 2,
}


def _givens(option: Option) -> tuple:
    return getattr(option.given, "__args__", (option.given,))


def option_types(option: Option) -> list[str]:
    """The JSON types a rules option takes (``["integer", "string"]`` for a count or a name)."""
    return [JSON_TYPES[given] for given in _givens(option)]


def option_schema(option: Option) -> dict:
    """The JSON Schema of one rules option, from ``rules.OPTIONS``."""
    parts = []
    for given, kind in zip(_givens(option), option_types(option)):
        part = {"type": kind}
        if given is str and option.choices:
            part["enum"] = list(option.choices)
        if given is int and option.minimum is not None:
            part["minimum"] = option.minimum
        if given is int and option.maximum is not None:
            part["maximum"] = option.maximum
        parts.append(part)
    schema = parts[0] if len(parts) == 1 else {"anyOf": sorted(parts, key=lambda p: p["type"] != "string")}
    return {**schema, "description": option.help}


def rules_schema(resolved: bool = False) -> dict:
    """The rules options as an object; ``resolved``: every option present (a record's rules)."""
    schema = {
        "description": "rules options (docs/rules.md)" + ("; every option, defaults resolved" if resolved else "; omitted options take their defaults"),
        "type": "object",
        "additionalProperties": False,
        "properties": {option.name: option_schema(option) for option in OPTIONS},
    }
    if resolved:
        schema["required"] = [option.name for option in OPTIONS]
    return schema


def _seat(what: str = "a seat") -> dict:
    return {"type": "integer", "minimum": 0, "maximum": MAX_SEAT, "description": what}


def _per(what: str, items: dict) -> dict:
    """An array with one entry per seat or per side (2 to 4 of them)."""
    return {"type": "array", "items": items, "minItems": 2, "maxItems": MAX_PLAYERS, "description": what}


def _event(kind: str, required: list[str], **properties) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "player", *required],
        "properties": {"type": {"const": kind}, "player": _seat("the seat that acted"), **properties},
    }


def record_event_schema() -> dict:
    """One event of a record: every tile known (records show every hand)."""
    return {
        "oneOf": [
            _event("play", ["tile", "end", "points"], tile={"$ref": "#/$defs/Tile"},
                   end={"enum": list(END_LABELS), "description": "lead for a hand's first tile, else the arm"},
                   points={"type": "integer", "minimum": 0, "multipleOf": 5, "description": "what the placement scored"}),
            _event("draw", ["tile"], tile={"$ref": "#/$defs/Tile"}),
            _event("pass", []),
        ]
    }


def _result_schema() -> dict:
    count = {"type": "integer", "minimum": 0}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["outcome", "went_out", "pips", "penalties", "bonus", "scores_after"],
        "properties": {
            "outcome": {"enum": ["domino", "blocked", "target"]},
            "went_out": {"anyOf": [_seat(), {"type": "null"}], "description": "the seat that went out, else null"},
            "pips": _per("per seat, the pips left in hand", count),
            "penalties": _per("per seat, what hand_end: subtract charged", count),
            "bonus": _per("per side, what hand_end: winner_takes credited", count),
            "scores_after": _per("per side, the scores after the hand", {"type": "integer"}),
        },
    }


def _hand_schema() -> dict:
    tiles = {"type": "array", "items": {"$ref": "#/$defs/Tile"}, "maxItems": NUM_TILES}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["starter", "deal", "boneyard", "events", "result"],
        "properties": {
            "starter": _seat("the seat that led the hand"),
            "deal": _per("per seat, the tiles dealt", tiles),
            "boneyard": {**tiles, "description": "the rest of the tiles in draw order"},
            "events": {"type": "array", "items": {"$ref": "#/$defs/Event"}},
            "result": {"anyOf": [{"$ref": "#/$defs/Result"}, {"type": "null"}], "description": "null while the hand is unfinished"},
        },
    }


def record_schema() -> dict:
    """The JSON Schema of one ``allfives-record/1`` object (one line of a records file)."""
    return {
        "$schema": DIALECT,
        "$id": "allfives-record-1",
        "title": "All Fives game record (allfives-record/1, docs/records.md)",
        "type": "object",
        "additionalProperties": False,
        "required": ["format", "rules", "seed", "players", "hands", "final_scores", "winner", "complete"],
        "properties": {
            "format": {"const": RECORD_FORMAT},
            "rules": {"$ref": "#/$defs/Rules"},
            "seed": {"type": "integer", "description": "Game(rules, seed) deals the same hands again"},
            "players": _per("a name per seat (agent specs in tournaments)", {"type": "string"}),
            "initial_scores": _per("per side; only when the game started from non-zero scores", {"type": "integer"}),
            "hands": {"type": "array", "items": {"$ref": "#/$defs/Hand"}},
            "final_scores": _per("score per side", {"type": "integer"}),
            "winner": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_SEAT}, {"type": "null"}],
                       "description": "the winning side, null if the game did not finish"},
            "complete": {"type": "boolean", "description": "a side reached the target"},
        },
        "$defs": {
            "Tile": TILE,
            "Rules": rules_schema(resolved=True),
            "Event": record_event_schema(),
            "Result": _result_schema(),
            "Hand": _hand_schema(),
        },
    }
