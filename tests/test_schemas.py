"""The published JSON Schemas (docs/schemas/): fresh, valid, and true of what the project writes.

Records from every variant, unfinished games, a tournament's ``games.jsonl`` and the web game's
download validate against ``allfives-record-1``; the bot server's answers against theirs; and each
schema refuses what the format forbids, so a frontend that validates its own files can trust it.
"""

import copy
import json
import random
import sys
from pathlib import Path

import pytest

from allfives_env.engine import Game, Rules
from allfives_env.engine.schemas import record_schema

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
from generate import schema_files  # noqa: E402

VARIANTS = [
    dict(num_players=2),
    dict(num_players=2, hand_end="winner_takes", target_score=100, hand_size="five"),
    dict(num_players=3, boneyard_reserve=2),
    dict(num_players=4),
    dict(num_players=4, partnerships=False, target_score=150),
]


def validator(name: str):
    schema = json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def random_record(rules: dict, seed: int, max_hands=None) -> dict:
    game = Game(Rules.make(**rules), seed=seed, max_hands=max_hands)
    rng = random.Random(seed)
    while not game.over:
        game.step(rng.choice(game.legal_actions()))
    return json.loads(json.dumps(game.to_record(["random"] * game.num_players)))


def test_the_published_files_are_generated_from_their_homes():
    for path, text in schema_files().items():
        assert path.exists() and path.read_text() == text, f"{path.name} is out of date: python docs/generate.py"
    assert sorted(p.name for p in (ROOT / "docs" / "schemas").iterdir()) == sorted(p.name for p in schema_files())


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: "-".join(f"{k}={v}" for k, v in r.items()))
def test_records_of_every_variant_validate(rules):
    check = validator("allfives-record-1")
    for seed in range(3):
        record = random_record(rules, seed)
        assert check.is_valid(record), list(check.iter_errors(record))[:3]
    unfinished = random_record(rules, 9, max_hands=1)
    assert unfinished["winner"] is None or unfinished["complete"]
    check.validate(unfinished)


def test_the_record_schema_refuses_what_the_format_forbids():
    check = validator("allfives-record-1")
    good = random_record(dict(num_players=2), 1)

    def broken(change):
        record = copy.deepcopy(good)
        change(record)
        return record

    play = next(i for i, e in enumerate(good["hands"][0]["events"]) if e["type"] == "play")
    bad = [
        broken(lambda r: r.update(format="allfives-record/2")),
        broken(lambda r: r.pop("seed")),
        broken(lambda r: r.update(colour="blue")),
        broken(lambda r: r["rules"].pop("hand_end")),
        broken(lambda r: r["rules"].update(num_players=5)),
        broken(lambda r: r["hands"][0]["deal"][0].__setitem__(0, [3, 7])),
        broken(lambda r: r["hands"][0]["events"][play].update(end="up")),
        broken(lambda r: r["hands"][0]["events"][play].update(points=7)),
        broken(lambda r: r["hands"][0]["events"][play].pop("points")),
        broken(lambda r: r["hands"][0]["events"].append({"type": "draw", "player": 0, "tile": None})),
        broken(lambda r: r["hands"][0]["result"].update(outcome="resigned")),
    ]
    for record in bad:
        assert not check.is_valid(record)
    assert record_schema()["$defs"]["Rules"]["required"] == list(Rules.make().to_dict())


def test_a_tournaments_records_validate(tmp_path):
    from allfives_agents.tournament import run_tournament

    records = tmp_path / "games.jsonl"
    run_tournament(["greedy", "random"], Rules.make(num_players=4), games=2, seed=3, records=records)
    check = validator("allfives-record-1")
    lines = records.read_text().splitlines()
    assert lines
    for line in lines:
        check.validate(json.loads(line))


def test_the_bot_servers_answers_validate():
    from test_server import call, request_of, running

    game = Game(Rules.make(num_players=2), seed=4)
    rng = random.Random(4)
    for _ in range(5):
        game.step(rng.choice(game.legal_actions()))
    seat = game.current_player
    with running("expert") as server:
        request = request_of(game, seat, explain=True)
        validator("move-request").validate(request)
        status, answer, _ = call(server, "/move", request)
        assert status == 200
        validator("move-answer").validate(answer)
        analyze = {k: v for k, v in request.items() if k != "explain"} | {"worlds": 8}
        validator("analyze-request").validate(analyze)
        status, answer, _ = call(server, "/analyze", analyze)
        assert status == 200
        validator("analyze-answer").validate(answer)
        status, answer, _ = call(server, "/health")
        assert status == 200
        validator("health-answer").validate(answer)
        status, answer, _ = call(server, "/move", {"seat": 0, "hand": [], "colour": 1})
        assert status in (400, 422)
        validator("error-answer").validate(answer)
    assert not validator("move-answer").is_valid({"action": 3})
