"""Smoke tests of the engine commands: simulate and replay, through the real console entry point."""

import json

from helpers import run_cli


def test_simulate_json_summary_and_records(tmp_path):
    records = tmp_path / "r.jsonl"
    result = run_cli("simulate", "--players", "3", "--games", "20", "--seed", "5", "--records", str(records), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["games"] == 20 and summary["moves"] > 0 and summary["seconds"] > 0
    assert summary["moves_per_s"] > 0 and summary["rules"]["num_players"] == 3
    assert len(records.read_text().splitlines()) == 20
    check = run_cli("replay", str(records), "--quiet", "--json")
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout.strip().splitlines()[-1]) == {"valid": True, "games": 20, "hands": summary["hands"]}


def test_simulate_is_deterministic_for_a_seed(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        result = run_cli("simulate", "--players", "4", "--no-partnerships", "--hand-size", "five", "--hand-end",
                         "winner_takes", "--reserve", "2", "--target", "100", "--games", "5", "--seed", "9",
                         "--records", str(path))
        assert result.returncode == 0, result.stderr
    assert a.read_text() == b.read_text()
    first = json.loads(a.read_text().splitlines()[0])
    assert first["rules"] == {"num_players": 4, "partnerships": False, "hand_size": "five", "boneyard_reserve": 2,
                              "hand_end": "winner_takes", "target_score": 100}


def test_simulate_rejects_bad_options_without_traceback():
    result = run_cli("simulate", "--players", "5", "--games", "1", "--seed", "1")
    assert result.returncode == 2 and "num_players must be 2, 3 or 4" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli("simulate", "--players", "2", "--hand-size", "20", "--games", "1", "--seed", "1")
    assert result.returncode == 2 and "hand_size 20 does not fit" in result.stderr
