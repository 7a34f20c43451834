"""Resuming a tournament from the records of the games it already played.

A tournament with a records file writes one ``allfives-record/1`` line per game as it finishes, in
schedule order (``allfives_agents.tournament.run``). ``kept_results`` reads such a file back for the same
schedule: each record is replayed through the engine (``replay_record``), checked to be the game
the schedule plans at its place (the deal's seed, who sat where, the rules, the hand limit), and
turned back into its ``GameResult``, so only the games not yet played need playing. A last line
cut short (the run was killed while writing it) is dropped and the file truncated after the last
whole record; anything else wrong raises ``ResumeError`` naming the line and what differs, and
leaves the file as it was.
"""

from __future__ import annotations

import json
import os

from allfives_env.engine.errors import RecordError
from allfives_env.engine.record import replay_record

from .stats import GameResult


class ResumeError(ValueError):
    """Records that cannot be resumed from: unreadable, or of another tournament; the message says which line and why."""


def kept_results(path: str | os.PathLike, schedule, tasks: list[tuple[int, int]]) -> list[GameResult]:
    """The results of the games of ``tasks`` (in order) that the records at ``path`` already hold.

    A missing file holds none. Truncates a torn last line; raises ``ResumeError`` for a record that
    is corrupt or is not the game ``schedule`` plans at its place.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ResumeError(f"cannot read {path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    torn = lines.pop()  # the bytes after the last newline: empty unless the last write was cut short
    if len(lines) > len(tasks):
        raise ResumeError(f"{path} holds {len(lines)} games, more than the {len(tasks)} this tournament plays")
    results = []
    for lineno, (line, task) in enumerate(zip(lines, tasks), 1):
        results.append(_result(line, task, schedule, f"{path} line {lineno}"))
    if torn:
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(torn))
    return results


def _result(line: bytes, task: tuple[int, int], schedule, where: str) -> GameResult:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ResumeError(f"{where}: not a record (unreadable JSON: {exc})") from None
    try:
        game = replay_record(record, name=where)
    except RecordError as exc:
        raise ResumeError(f"{exc}") from None
    plan = schedule.plan(*task)
    players = [schedule.names[x] for x in plan.seating]
    differences = []
    if record.get("seed") != plan.seed:
        differences.append(f"its seed is {record.get('seed')}, this tournament's game has seed {plan.seed}")
    if record.get("players") != players:
        differences.append(f"it was played by {record.get('players')}, this tournament seats {players}")
    if game.rules != schedule.rules:
        differences.append("its rules differ from this tournament's")
    limit = schedule.max_hands
    if limit is not None and (len(game.hand_logs) > limit or (not game.complete and len(game.hand_logs) != limit)):
        differences.append(f"it ran {len(game.hand_logs)} hands, which a limit of {limit} would not give")
    if differences:
        pairing, index = task
        raise ResumeError(
            f"{where} is not game {index + 1} of pairing {pairing + 1} of this tournament: {'; '.join(differences)} "
            "(resume with the agents, rules, seed, games and options of the run that wrote it)"
        )
    return GameResult(*task, plan.seed, plan.seating, tuple(game.scores), game.winner, len(game.hand_logs))
