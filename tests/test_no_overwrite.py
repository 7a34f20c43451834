"""Runs that overwrite nothing by mistake, and a search's network checked against the game (issue 39)."""

import json

from helpers import run_cli


def test_a_tournament_out_folder_holding_a_run_is_refused_without_resume_or_force(tmp_path):
    out = tmp_path / "run"
    first = run_cli("tournament", "--agents", "random", "greedy", "--games", "4", "--seed", "1", "--out", str(out), timeout=120)
    assert first.returncode == 0, first.stderr
    kept = (out / "games.jsonl").read_bytes()
    again = run_cli("tournament", "--agents", "random", "greedy", "--games", "2", "--seed", "1", "--out", str(out), timeout=120)
    assert again.returncode == 2
    assert f"--out {out} holds an earlier run (4 games in games.jsonl): --resume to go on with it, --force to replace it" in again.stderr
    assert (out / "games.jsonl").read_bytes() == kept
    both = run_cli("tournament", "--agents", "random", "greedy", "--games", "2", "--seed", "1", "--out", str(out), "--resume", "--force", timeout=120)
    assert both.returncode == 2 and "give one" in both.stderr
    forced = run_cli("tournament", "--agents", "random", "greedy", "--games", "2", "--seed", "1", "--out", str(out), "--force", timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert len((out / "games.jsonl").read_text().splitlines()) == 2


def test_replay_and_fit_play_refuse_to_write_over_their_input(tmp_path):
    out = tmp_path / "run"
    assert run_cli("tournament", "--agents", "expert", "greedy", "--games", "4", "--seed", "2", "--out", str(out), timeout=120).returncode == 0
    records = out / "games.jsonl"
    kept = records.read_bytes()
    replay = run_cli("replay", str(records), "--html", str(records), timeout=120)
    assert replay.returncode == 2 and "--html" in replay.stderr and "is one of the input files" in replay.stderr
    fit = run_cli("fit-play", str(records), "--player", "expert", "--out", str(records), timeout=120)
    assert fit.returncode == 2 and "--out" in fit.stderr and "is one of the input files" in fit.stderr
    assert records.read_bytes() == kept


def test_fit_play_replaces_an_existing_model_only_with_force(tmp_path):
    out = tmp_path / "run"
    assert run_cli("tournament", "--agents", "expert", "greedy", "--games", "4", "--seed", "2", "--out", str(out), timeout=120).returncode == 0
    model = tmp_path / "model.json"
    model.write_text("{}\n")
    args = ["fit-play", str(out / "games.jsonl"), "--player", "expert", "--holdout", "0", "--out", str(model)]
    refused = run_cli(*args, timeout=120)
    assert refused.returncode == 2 and f"--out {model} exists: --force to replace it" in refused.stderr
    assert model.read_text() == "{}\n"
    forced = run_cli(*args, "--force", timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(model.read_text())["format"] and not (tmp_path / "model.json.tmp").exists()


def test_a_tournament_refuses_a_search_whose_network_plays_another_game():
    result = run_cli("tournament", "--agents", "ismcts:iters=20,policy=allfives_4p", "greedy", "--games", "2", "--seed", "1", timeout=120)
    assert result.returncode == 2
    assert "the policy ismcts:iters=20,policy=allfives_4p was trained for 4 players in partnerships" in result.stderr
    assert "this game is for 2 players" in result.stderr


def test_a_run_dir_that_is_a_file_is_refused_by_name(tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    for extra in ([], ["--resume"]):
        result = run_cli("train", "--config", "configs/tiny_test.yaml", "--run-dir", str(afile), "--no-progress", *extra, timeout=120)
        assert result.returncode == 2, result.stderr
        assert f"run directory {afile} exists and is not a directory" in result.stderr and "Traceback" not in result.stderr
    assert afile.read_text() == "mine\n"


def test_observing_before_reset_says_to_reset():
    import pytest

    import allfives_env

    with pytest.raises(RuntimeError, match=r"call reset\(\) before observe\(\)"):
        allfives_env.raw_env().observe("player_0")


def test_devices_and_oversized_files_are_refused_before_they_are_read(tmp_path):
    import os

    import pytest

    from allfives_env.engine.files import refusal

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    for args, message in [
        (["replay", "/dev/zero"], "/dev/zero: not a regular file"),
        (["tournament", "--agents", "ismcts:iters=5,policy=/dev/zero", "greedy", "--games", "2", "--seed", "1"], "policy file /dev/zero: not a regular file"),
        (["tournament", "--agents", "ppo:/dev/zero", "greedy", "--games", "2", "--seed", "1"], "policy file /dev/zero: not a regular file"),
        (["tournament", "--agents", "ismcts:iters=5,belief=expert,bweights=/dev/zero", "greedy", "--games", "2", "--seed", "1"], "play model /dev/zero: not a regular file"),
    ]:
        result = run_cli(*args, timeout=60)
        assert result.returncode in (1, 2) and message in (result.stderr + result.stdout), (args, result.stderr)
        assert "Traceback" not in result.stderr
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 100)
    assert refusal(big, 100) is None
    assert refusal(big, 99) == "100 bytes, more than the 99 a file of this kind may have: refused"
    assert refusal(tmp_path, 10**9).startswith("not a regular file") and refusal(tmp_path / "none", 1) is None


def test_a_run_name_cannot_lead_out_of_runs(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for config in (root / "configs" / "tiny_test.yaml", root / "configs" / "rllib_tiny.yaml"):
        for name in ("../../x", "a/b", "..", ""):
            result = run_cli("train", "--config", config, f"name={name}", "--no-progress", cwd=tmp_path, timeout=120)
            assert result.returncode == 2 and "name: must be a plain name" in result.stderr, (config, name, result.stderr)
    assert not (tmp_path / "x").exists() and not (tmp_path / "runs").exists()


def test_the_library_tournament_refuses_a_network_for_another_game_and_takes_a_list_item_as_one_spec():
    import pytest

    from allfives_agents.tournament import TournamentError, run_tournament
    from allfives_env.engine import Rules

    with pytest.raises(TournamentError, match="trained for 4 players in partnerships"):
        run_tournament(["ismcts:iters=5,policy=allfives_4p", "greedy"], Rules.make(), games=2, seed=1)
    with pytest.raises(TournamentError, match="unknown agent 'random,greedy'"):  # not silently "random"
        run_tournament(["random,greedy", "expert"], Rules.make(), games=2, seed=1)
