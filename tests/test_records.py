"""Records: round trips, and replay catching every kind of broken record with a precise message."""

import copy
import json
import random

import pytest

from allfives_env.engine import Game, RecordError
from allfives_env.engine.events import EventError, event_from_dict, event_to_dict
from allfives_env.engine.record import read_records, replay_file, replay_record, write_records
from helpers import run_cli


def played_record(seed=3, **options):
    game = Game(seed=seed, **options)
    rng = random.Random(seed)
    while not game.over:
        game.step(rng.choice(game.legal_actions()))
    return json.loads(json.dumps(game.to_record(["random"] * game.num_players)))


def first_index(events, kind):
    return next(i for i, e in enumerate(events) if e["type"] == kind)


def hand_with(record, kind):
    return next(h for h, hand in enumerate(record["hands"]) if any(e["type"] == kind for e in hand["events"]))


def test_record_shape_matches_the_documented_format():
    record = played_record()
    assert record["format"] == "allfives-record/1"
    assert record["rules"] == {
        "num_players": 2,
        "partnerships": False,
        "hand_size": "standard",
        "boneyard_reserve": 0,
        "hand_end": "subtract",
        "target_score": 250,
    }
    hand = record["hands"][0]
    assert set(hand) == {"starter", "deal", "boneyard", "events", "result"}
    assert len(hand["deal"]) == 2 and all(len(h) == 9 for h in hand["deal"]) and len(hand["boneyard"]) == 10
    assert hand["events"][0]["end"] == "lead" and hand["events"][0]["type"] == "play"
    assert {"outcome", "went_out", "penalties", "scores_after"} <= set(hand["result"])
    assert record["complete"] is True and record["winner"] in (0, 1)
    assert record["final_scores"] == record["hands"][-1]["result"]["scores_after"]


def mutate(record, how):
    bad = copy.deepcopy(record)
    if how == "points":
        h = 0
        i = first_index(bad["hands"][h]["events"], "play")
        bad["hands"][h]["events"][i]["points"] += 5
    elif how == "tile_not_in_hand":
        ev = bad["hands"][0]["events"]
        i = [k for k, e in enumerate(ev) if e["type"] == "play"][1]
        p = ev[i]["player"]
        other = [t for t in bad["hands"][0]["deal"][1 - p] if t != ev[i]["tile"]]
        ev[i]["tile"] = other[0]
    elif how == "draw_while_able":
        h = 0
        ev = bad["hands"][h]["events"]
        i = [k for k, e in enumerate(ev) if e["type"] == "play"][1]
        ev.insert(i, {"type": "draw", "player": ev[i]["player"], "tile": bad["hands"][h]["boneyard"][0]})
    elif how == "draw_out_of_order":
        h = hand_with(bad, "draw")
        ev = bad["hands"][h]["events"]
        i = first_index(ev, "draw")
        ev[i]["tile"] = [6, 6] if ev[i]["tile"] != [6, 6] else [0, 0]
    elif how == "missing_event":
        h = next(k for k, hand in enumerate(bad["hands"]) if hand["result"]["outcome"] == "domino")
        del bad["hands"][h]["events"][-1]
    elif how == "missing_pass":
        h = hand_with(bad, "pass")
        ev = bad["hands"][h]["events"]
        del ev[first_index(ev, "pass")]
    elif how == "wrong_scores_after":
        bad["hands"][0]["result"]["scores_after"][0] += 5
    elif how == "wrong_starter":
        h = next(k for k, hand in enumerate(bad["hands"][:-1]) if hand["result"]["outcome"] == "domino")
        bad["hands"][h + 1]["starter"] = 1 - bad["hands"][h]["result"]["went_out"]
    elif how == "wrong_winner":
        bad["winner"] = 1 - bad["winner"]
    elif how == "unknown_rule":
        bad["rules"]["spinner"] = True
    elif how == "missing_field":
        del bad["hands"][0]["deal"]
    elif how == "bad_tile":
        bad["hands"][0]["deal"][0][0] = [3, 9]
    elif how == "duplicate_tile":
        bad["hands"][0]["boneyard"][0] = bad["hands"][0]["deal"][0][0]
    elif how == "wrong_end":
        ev = bad["hands"][0]["events"]
        ev[0]["end"] = "up"
    return bad


@pytest.mark.parametrize(
    "how, message",
    [
        ("points", r"hand 1 event \d+: wrong points: the record gives \d+, the rules give \d+"),
        ("tile_not_in_hand", r"hand 1 event \d+: illegal tile: the tile is not in the player's hand"),
        ("draw_while_able", r"hand 1 event \d+: draw while able to play"),
        ("draw_out_of_order", r"event \d+: draw out of order"),
        ("missing_event", r"hand \d+: the events end before the hand is over \(player \d to move\)"),
        ("missing_pass", r"hand \d+ event \d+: .*(must pass|'player \d passes')"),
        ("wrong_scores_after", r"hand 1 result scores_after is"),
        ("wrong_starter", r"hand \d+: the starter must be seat \d"),
        ("wrong_winner", r"winner is \d in the record, the rules give \d"),
        ("unknown_rule", r"rules: unknown rules option"),
        ("missing_field", r"hand 1: missing field 'deal'"),
        ("bad_tile", r"hand 1 deal seat 0: not a tile"),
        ("duplicate_tile", r"hand 1: tile \d+ is dealt twice"),
        ("wrong_end", r"hand 1 event 1: end must be lead, west, east, north or south, got .up."),
    ],
)
def test_replay_names_what_is_wrong(how, message):
    record = played_record()
    replay_record(copy.deepcopy(record))  # the original is valid
    with pytest.raises(RecordError, match=message):
        replay_record(mutate(record, how), name="game 1")


def test_incomplete_records_replay():
    game = Game(seed=4, max_hands=2)
    rng = random.Random(0)
    while not game.over:
        game.step(rng.choice(game.legal_actions()))
    record = game.to_record()
    assert record["complete"] is False and record["winner"] is None
    assert replay_record(record).to_record() == record
    mid = Game(seed=4)
    for _ in range(5):
        mid.step(rng.choice(mid.legal_actions()))
    record = mid.to_record()
    assert record["hands"][-1]["result"] is None
    assert replay_record(record).to_record() == record


def test_read_records_reports_malformed_json_with_its_line(tmp_path):
    path = tmp_path / "games.jsonl"
    write_records([played_record(1), played_record(2)], path)
    with open(path, "a") as f:
        f.write('{"format": "allfives-record/1", \n')
    items = []
    with pytest.raises(RecordError, match=r"games.jsonl line 3: malformed JSON"):
        for where, record in read_records(path):
            items.append(where)
    assert len(items) == 2


def test_replay_cli_exits_nonzero_naming_the_game_hand_and_event(tmp_path):
    path = tmp_path / "games.jsonl"
    good = played_record(1)
    write_records([good, mutate(played_record(2), "points")], path)
    result = run_cli("replay", str(path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "line 2 (game 2) hand 1 event" in result.stderr and "wrong points" in result.stderr
    assert "game 1" in result.stdout or "line 1" in result.stdout


def test_replay_cli_one_line_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n")
    result = run_cli("replay", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "malformed JSON" in result.stderr
    result = run_cli("replay", str(tmp_path / "missing.jsonl"))
    assert result.returncode == 1 and "no such file" in result.stderr
    path.write_text('{"format": "allfives-record/1"}\n')
    result = run_cli("replay", str(path))
    assert result.returncode == 1 and "missing field 'rules'" in result.stderr


PLAY_00 = {"type": "play", "player": 0, "tile": [0, 0], "end": "lead", "points": 0}


@pytest.mark.parametrize(
    "event, message",
    [
        (None, "ev: expected an object, got NoneType"),
        ({"player": 0}, "ev: missing field 'type'"),
        ({"type": "pass"}, "ev: missing field 'player'"),
        ({"type": "pass", "player": True}, "ev player: expected an integer, got True"),
        ({"type": "nap", "player": 0}, "ev: unknown event type 'nap' (play, draw or pass)"),
        ({"type": "draw", "player": 0}, "ev: missing field 'tile'"),
        ({"type": "draw", "player": 0, "tile": None}, "ev tile: not a tile: [None] (expected [a, b] with pips 0..6)"),
        ({"type": "draw", "player": 0, "tile": "0-3"}, "ev tile: not a tile: ['0-3'] (expected [a, b] with pips 0..6)"),
        (dict(PLAY_00, tile=[0, 9]), "ev tile: not a tile: [0, 9] (pips must be 0..6)"),
        (dict(PLAY_00, end="up"), "ev: end must be lead, west, east, north or south, got 'up'"),
        ({k: v for k, v in PLAY_00.items() if k != "end"}, "ev: missing field 'end'"),
        ({k: v for k, v in PLAY_00.items() if k != "points"}, "ev: missing field 'points'"),
        (dict(PLAY_00, points=None), "ev points: expected an integer, got None"),
        ({"type": "play", "player": 0}, "ev: missing field 'tile'"),  # the tile is read first
    ],
)
def test_strict_event_from_dict_names_what_is_wrong(event, message):
    with pytest.raises(EventError) as info:
        event_from_dict(event, 2, strict=True, where="ev")
    assert str(info.value) == message


def test_strict_event_from_dict_reads_what_event_to_dict_writes_and_ignores_the_rest():
    game = Game(seed=5, num_players=3, max_hands=3)
    rng = random.Random(5)
    while not game.over:
        game.step(rng.choice(game.legal_actions()))
    for log in game.hand_logs:
        for e in log.events:
            assert event_from_dict(event_to_dict(e), 3, strict=True, where="ev") == e
            assert event_from_dict(dict(event_to_dict(e), note="x"), 3, strict=True, where="ev") == e
    assert event_from_dict(dict(PLAY_00, player=7), 2, strict=True, where="ev")[1] == 7, "the replay checks the seat"


def test_record_event_errors_are_record_errors():
    record = played_record()
    record["hands"][0]["events"][0].pop("points")
    with pytest.raises(RecordError, match="^game hand 1 event 1: missing field 'points'$"):
        replay_record(record)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_a_file_without_games_is_refused(tmp_path, content):
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    with pytest.raises(RecordError, match="empty.jsonl: no games"):
        list(replay_file(path))
    result = run_cli("replay", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr and "no games" in result.stderr


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"format": "allfives-record/1", "seed": ' + "9" * 5000 + "}", "line 2: unreadable JSON: Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, "line 2: unreadable JSON: nested too deeply"),
    ],
    ids=["5000-digit integer", "100000 nested lists"],
)
def test_unreadable_json_is_named_by_its_line(tmp_path, line, message):
    path = tmp_path / "games.jsonl"
    write_records([played_record(1)], path)
    with open(path, "a") as f:
        f.write(line + "\n")
    with pytest.raises(RecordError, match=message):
        list(read_records(path))
    result = run_cli("replay", str(path))
    assert result.returncode == 1 and "Traceback" not in result.stderr and message.split(": ", 1)[1][:20] in result.stderr
