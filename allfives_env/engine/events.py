"""Events of a hand: compact tuples inside the engine, dicts in records and views.

Internally an event is a tuple whose first item is its kind:

- ``(PLAY, player, tile, end, points)``; ``end`` is ``LEAD`` for the first tile of a hand
- ``(DRAW, player, tile)``; in another seat's view the tile is ``HIDDEN``
- ``(PASS, player)``

``event_to_dict`` writes the record form; ``event_from_dict`` reads it back, in two forms: strict
for records (every field present, tiles as ``[low, high]``), or lenient for the histories that
frontends send (a draw's tile may be null, points may be left out). Its errors are ``EventError``,
whose message starts with where the event is; callers re-raise it as their own error.
"""

from __future__ import annotations

from .tiles import END_NAMES, LEAD_END, TILES, WEST, parse_end, tile_index

PLAY, DRAW, PASS = 0, 1, 2
LEAD = LEAD_END
HIDDEN = -1
EVENT_TYPES = ("play", "draw", "pass")
END_LABELS = END_NAMES + ("lead",)


def play_end(end: int, first: bool) -> int:
    """The layout end a play event's ``end`` names (``LEAD`` is ``WEST``); ``ValueError`` unless
    ``LEAD`` marks exactly the first tile of the hand (``first``)."""
    if (end == LEAD) != first:
        raise ValueError("'lead' is the end of the first tile of a hand and only of it")
    return WEST if end == LEAD else end


def tile_json(tile: int) -> list[int]:
    """A tile index as ``[low, high]``."""
    a, b = TILES[tile]
    return [a, b]


class EventError(ValueError):
    """An event, tile or seat in JSON that cannot be read; the message starts with where it is."""


def tile_from_json(value, where: str, *, strict: bool = True) -> int:
    """The tile index of a tile in JSON: ``[a, b]`` (either order); lenient also takes what
    ``tiles.tile_index`` takes (``"a-b"``, an index). Raises ``EventError``."""
    try:
        return tile_index(value if not strict or isinstance(value, list) else [value])
    except ValueError as exc:
        raise EventError(f"{where}: {exc}") from None


def seat_from_json(value, num_players: int, where: str) -> int:
    """``value`` if it is a seat ``0 .. num_players - 1``; else ``EventError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < num_players:
        raise EventError(f"{where}: player must be a seat 0..{num_players - 1}, got {value!r}")
    return value


def event_from_dict(d, num_players: int, *, strict: bool, where: str) -> tuple:
    """The engine tuple of a record-form event; raises ``EventError`` naming ``where``.

    ``strict`` (records): every field is required, tiles are ``[a, b]``, other fields are
    ignored, and ``player`` need only be an integer (the replay says whose turn it is).
    Lenient (histories): a missing field reads as null, so a draw's tile may be null (``HIDDEN``)
    and a play's points may be ``None`` (the caller computes them); ``player`` must be a seat and
    unknown fields are refused.
    """
    if not isinstance(d, dict):
        raise EventError(f"{where}: expected an object, got {type(d).__name__}")
    kind = _field(d, "type", strict, where)
    player = _player(_field(d, "player", strict, where), num_players, strict, where)
    if kind == "play":
        # records read the tile first, histories last: each form reports the fault it always has
        if strict:
            tile = _tile(_field(d, "tile", strict, where), strict, where)
            end, points = _end(d, strict, where), _points(d, strict, where)
        else:
            end, points = _end(d, strict, where), _points(d, strict, where)
            tile = _tile(_field(d, "tile", strict, where), strict, where)
        event = (PLAY, player, tile, end, points)
    elif kind == "draw":
        tile = _field(d, "tile", strict, where)
        event = (DRAW, player, HIDDEN if tile is None and not strict else _tile(tile, strict, where))
    elif kind == "pass":
        event = (PASS, player)
    elif strict:
        raise EventError(f"{where}: unknown event type {kind!r} (play, draw or pass)")
    else:
        raise EventError(f"{where}: type must be play, draw or pass, got {kind!r}")
    unknown = set() if strict else set(d) - _FIELDS[kind]
    if unknown:
        raise EventError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    return event


_FIELDS = {
    "play": {"type", "player", "tile", "end", "points"},
    "draw": {"type", "player", "tile"},
    "pass": {"type", "player"},
}


def _field(d: dict, key: str, strict: bool, where: str):
    if strict and key not in d:
        raise EventError(f"{where}: missing field {key!r}")
    return d.get(key)


def _player(value, num_players: int, strict: bool, where: str) -> int:
    if not strict:
        return seat_from_json(value, num_players, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventError(f"{where} player: expected an integer, got {value!r}")
    return value


def _tile(value, strict: bool, where: str) -> int:
    return tile_from_json(value, f"{where} tile" if strict else where, strict=strict)


def _end(d: dict, strict: bool, where: str) -> int:
    value = _field(d, "end", strict, where)
    try:
        return parse_end(value)
    except ValueError as exc:
        raise EventError(f"{where}: {exc}") from None


def _points(d: dict, strict: bool, where: str) -> int | None:
    points = _field(d, "points", strict, where)
    if points is None and not strict:
        return None
    if isinstance(points, bool) or not isinstance(points, int):
        if strict:
            raise EventError(f"{where} points: expected an integer, got {points!r}")
        raise EventError(f"{where}: points must be an integer, got {points!r}")
    return points


def event_to_dict(event: tuple) -> dict:
    """The record form of an event (a hidden draw has ``"tile": null``)."""
    kind = event[0]
    if kind == PLAY:
        return {
            "type": "play",
            "player": event[1],
            "tile": tile_json(event[2]),
            "end": END_LABELS[event[3]],
            "points": event[4],
        }
    if kind == DRAW:
        return {"type": "draw", "player": event[1], "tile": None if event[2] == HIDDEN else tile_json(event[2])}
    return {"type": "pass", "player": event[1]}


def public_event(event: tuple, seat: int) -> tuple:
    """The event as ``seat`` sees it: other players' drawn tiles are hidden."""
    return public_events([event], seat)[0]


def public_events(events: list[tuple], seat: int, start: int = 0, stop: int | None = None) -> list[tuple]:
    """``events[start:stop]`` as ``seat`` sees them: other players' drawn tiles are hidden."""
    new = events[start:stop]  # a new list
    for i, e in enumerate(new):
        if e[0] == DRAW and e[1] != seat:
            new[i] = (DRAW, e[1], HIDDEN)
    return new
