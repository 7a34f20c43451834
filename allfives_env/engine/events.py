"""Events of a hand: compact tuples inside the engine, dicts in records and views.

Internally an event is a tuple whose first item is its kind:

- ``(PLAY, player, tile, end, points)``; ``end`` is ``LEAD`` for the first tile of a hand
- ``(DRAW, player, tile)``; in another seat's view the tile is ``HIDDEN``
- ``(PASS, player)``
"""

from __future__ import annotations

from .tiles import END_NAMES, LEAD_END, TILES, WEST

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
