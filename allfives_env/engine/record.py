"""Game records (``allfives-record/1``): reading, writing, and replaying them through the engine.

A record is one JSON object per game (JSON Lines for many); ``Game.to_record`` writes it and
docs/records.md describes every field. ``replay_record`` rebuilds the game from the record's own
deals and checks every event and result against the rules; anything wrong raises ``RecordError``
naming the hand, the event and what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from .errors import IllegalMoveError, RecordError
from .events import DRAW, PASS, PLAY, EventError, event_from_dict, event_to_dict, play_end, tile_from_json
from .files import RECORDS_MAX_BYTES, refusal
from .game import RECORD_FORMAT, Deal, Game
from .rules import Rules
from .tiles import TILE_NAMES, action_id

_REQUIRED = ("format", "rules", "hands", "final_scores", "winner", "complete")


def write_records(records, path) -> int:
    """Write records as JSON Lines to ``path``; return how many were written."""
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, separators=(",", ":")))
            f.write("\n")
            count += 1
    return count


def read_records(path) -> Iterator[tuple[str, dict]]:
    """Yield ``(where, record)`` from a JSON Lines file, a JSON array, or one JSON object.

    ``where`` names the record (``"FILE line N"``). Malformed JSON, numbers too long to read and
    nesting too deep to read raise ``RecordError`` with the file and line.
    """
    path = Path(path)
    refused = refusal(path, RECORDS_MAX_BYTES)
    if refused:
        raise RecordError(f"{path}: {refused}")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read: {exc}") from None
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):  # not one JSON document: read it line by line
        whole = None
    if isinstance(whole, dict):
        yield f"{path}", whole
        return
    if isinstance(whole, list):
        for i, item in enumerate(whole):
            yield f"{path} item {i + 1}", item
        return
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path} line {lineno}: malformed JSON: {exc.msg} at column {exc.colno}") from None
        except ValueError as exc:  # an integer of thousands of digits
            raise RecordError(f"{path} line {lineno}: unreadable JSON: {exc}") from None
        except RecursionError:
            raise RecordError(f"{path} line {lineno}: unreadable JSON: nested too deeply") from None
        yield f"{path} line {lineno}", item


def _int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{where}: expected an integer, got {value!r}")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _field(obj: dict, key: str, where: str):
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise RecordError(f"{where}: missing field {key!r}")
    return obj[key]


def parse_deal(hand: dict, where: str) -> Deal:
    """The ``Deal`` of a record hand (tiles checked here; the engine checks the deal against the rules)."""
    deal = _list(_field(hand, "deal", where), f"{where} deal")
    bones = _list(_field(hand, "boneyard", where), f"{where} boneyard")
    starter = _int(_field(hand, "starter", where), f"{where} starter")
    try:
        hands = tuple(
            tuple(tile_from_json(t, f"{where} deal seat {s}") for t in _list(h, f"{where} deal seat {s}"))
            for s, h in enumerate(deal)
        )
        boneyard = tuple(tile_from_json(t, f"{where} boneyard") for t in bones)
    except EventError as exc:
        raise RecordError(str(exc)) from None
    return Deal(hands, boneyard, starter)


def _hand_events(hand: dict, num_players: int, where: str) -> list[tuple]:
    """The engine event tuples of a record hand."""
    events = _list(_field(hand, "events", where), f"{where} events")
    try:
        return [
            event_from_dict(e, num_players, strict=True, where=f"{where} event {j + 1}") for j, e in enumerate(events)
        ]
    except EventError as exc:
        raise RecordError(str(exc)) from None


def _describe(event: tuple) -> str:
    d = event_to_dict(event)
    if d["type"] == "play":
        return f"player {d['player']} plays {TILE_NAMES[event[2]]} on {d['end']} for {d['points']}"
    if d["type"] == "draw":
        return f"player {d['player']} draws {TILE_NAMES[event[2]]}"
    return f"player {d['player']} passes"


def _mismatch(rec: tuple, eng: tuple) -> str:
    """Why the record's event ``rec`` is wrong where the rules produce ``eng``."""
    if rec[0] == PLAY and eng[0] == PLAY and rec[1:4] == eng[1:4]:
        return f"wrong points: the record gives {rec[4]}, the rules give {eng[4]}"
    if eng[0] == DRAW and rec[0] == PLAY:
        return f"illegal tile: player {eng[1]} cannot place any tile and must draw ({_describe(rec)} in the record)"
    if eng[0] == PASS and rec[0] == PLAY:
        return f"illegal tile: player {eng[1]} cannot place any tile and must pass ({_describe(rec)} in the record)"
    if eng[0] == DRAW and rec[0] == DRAW and eng[1] == rec[1]:
        return f"draw out of order: the record draws {TILE_NAMES[rec[2]]}, the boneyard gives {TILE_NAMES[eng[2]]}"
    if eng[0] == PASS and rec[0] == DRAW:
        return f"draw from an empty boneyard: player {rec[1]} has nothing left to draw and must pass"
    if eng[0] == DRAW and rec[0] == PASS:
        return f"pass while able to draw: player {rec[1]} must draw from the boneyard"
    return f"the record has '{_describe(rec)}', the rules give '{_describe(eng)}'"


def replay_record(record, name: str = "game") -> Game:
    """Replay a record through the engine and check it; return the finished ``Game``.

    Raises ``RecordError`` whose message starts with ``name`` and names the hand and event.
    """
    if not isinstance(record, dict):
        raise RecordError(f"{name}: a record must be a JSON object, got {type(record).__name__}")
    for key in _REQUIRED:
        _field(record, key, name)
    if record["format"] != RECORD_FORMAT:
        raise RecordError(f"{name}: format is {record['format']!r}, expected {RECORD_FORMAT!r}")
    try:
        rules = Rules.from_dict(record["rules"])
    except ValueError as exc:
        raise RecordError(f"{name}: rules: {exc}") from None
    seed = record.get("seed", 0)
    if seed is None:
        seed = 0
    _int(seed, f"{name} seed")
    hands = _list(record["hands"], f"{name} hands")
    if not hands:
        raise RecordError(f"{name}: the record has no hands")
    players = record.get("players")
    if players is not None and len(_list(players, f"{name} players")) != rules.num_players:
        raise RecordError(f"{name}: players names {len(players)} agents for {rules.num_players} seats")
    deals = [parse_deal(h, f"{name} hand {i + 1}") for i, h in enumerate(hands)]
    scores = record.get("initial_scores")
    try:
        game = Game(rules, seed, deals=deals, scores=scores, max_hands=len(hands))
    except ValueError as exc:
        raise RecordError(f"{name} hand 1: {exc}") from None
    complete = record["complete"]
    for h, hand in enumerate(hands):
        where = f"{name} hand {h + 1}"
        if game.hand_index != h:
            raise RecordError(f"{where}: the game already ended after hand {game.hand_index + 1}")
        log = game.hand_logs[h]
        rec_events = _hand_events(hand, rules.num_players, where)
        j = 0
        while True:
            while j < len(log.events):
                if j >= len(rec_events):
                    raise RecordError(
                        f"{where} event {j + 1}: missing: the rules give '{_describe(log.events[j])}' next"
                    )
                if rec_events[j] != log.events[j]:
                    raise RecordError(f"{where} event {j + 1}: {_mismatch(rec_events[j], log.events[j])}")
                j += 1
            if log.result is not None or j >= len(rec_events):
                break
            rec = rec_events[j]
            current = game.current_player
            if rec[1] != current:
                raise RecordError(f"{where} event {j + 1}: it is player {current}'s turn, not player {rec[1]}'s")
            if rec[0] == DRAW:
                raise RecordError(f"{where} event {j + 1}: draw while able to play: player {current} has a legal placement")
            if rec[0] == PASS:
                raise RecordError(f"{where} event {j + 1}: pass while able to play: player {current} has a legal placement")
            try:
                action = action_id(rec[2], play_end(rec[3], game.layout.num_tiles == 0))
            except ValueError as exc:
                raise RecordError(f"{where} event {j + 1}: {exc}") from None
            try:
                game.step(action)
            except IllegalMoveError as exc:
                raise RecordError(f"{where} event {j + 1}: illegal tile: {exc.reason} ({_describe(rec)})") from None
            except ValueError as exc:
                raise RecordError(f"{name} hand {h + 2}: {exc}") from None
        if j < len(rec_events):
            raise RecordError(f"{where} event {j + 1}: event after the hand ended ({_describe(rec_events[j])})")
        if log.result is None and (complete is not False or h < len(hands) - 1):
            raise RecordError(f"{where}: the events end before the hand is over (player {game.current_player} to move)")
        _check_result(hand.get("result"), log.result, where, last=h == len(hands) - 1, complete=complete)
    _check_equal(record["final_scores"], game.scores, f"{name}: final_scores")
    _check_equal(record["winner"], game.winner, f"{name}: winner")
    _check_equal(complete, game.complete, f"{name}: complete")
    return game


def _check_equal(recorded, actual, where: str) -> None:
    if recorded != actual:
        raise RecordError(f"{where} is {recorded!r} in the record, the rules give {actual!r}")


def _check_result(recorded, actual, where: str, last: bool, complete) -> None:
    if actual is None:
        if recorded is not None:
            raise RecordError(f"{where} result: the record has a result but the hand is not over")
        return
    if recorded is None:
        raise RecordError(f"{where} result: missing, the hand ended ({actual['outcome']})")
    if not isinstance(recorded, dict):
        raise RecordError(f"{where} result: expected an object")
    for key in ("outcome", "went_out", "penalties", "scores_after"):
        _check_equal(_field(recorded, key, f"{where} result"), actual[key], f"{where} result {key}")
    for key in ("pips", "bonus"):
        if key in recorded:
            _check_equal(recorded[key], actual[key], f"{where} result {key}")


def replay_file(path) -> Iterator[tuple[str, Game]]:
    """Replay every record of a file; yield ``(name, game)``; raise ``RecordError`` at the first fault,
    and for a file that holds no game at all."""
    count = 0
    for where, record in read_records(path):
        count += 1
        yield where, replay_record(record, name=f"{where} (game {count})")
    if count == 0:
        raise RecordError(f"{path}: no games (the file holds no record)")


def replay_positions(game: Game) -> list[tuple[int, int, object, tuple]]:
    """Every decision of a finished (replayed) ``game``: ``(hand, placement, view, event)`` per
    placement, with ``hand`` and ``placement`` counted from 0, ``view`` the ``PlayerView`` of the
    seat about to place (before it does) and ``event`` the play it made. The positions come from
    playing the game's own deals and placements again through a fresh ``Game``."""
    return [(h, placement, again.view(again.current_player), event) for h, placement, again, event in replay_steps(game)]


def replay_steps(game: Game):
    """``replay_positions`` with the fresh ``Game`` itself in place of the view (its hidden hands
    too), yielded before each placement is played in it: read it before asking for the next."""
    deals = [Deal(tuple(map(tuple, log.deal)), tuple(log.boneyard), log.starter) for log in game.hand_logs]
    again = Game(game.rules, game.seed, deals=deals, scores=list(game.initial_scores), max_hands=len(deals))
    for h, log in enumerate(game.hand_logs):
        placement = 0
        for event in log.events:
            if event[0] != PLAY:
                continue  # draws and passes happen inside the engine's step before
            yield h, placement, again, event
            again.step(action_id(event[2], play_end(event[3], placement == 0)))
            placement += 1
