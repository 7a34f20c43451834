"""Resuming a tournament from its records: the same results as one uninterrupted run, and clear refusals."""

import json
from pathlib import Path

import pytest

from allfives_agents import Agent
from allfives_agents.registry import AGENTS, AgentType
from allfives_agents.tournament import TournamentError, run_tournament
from allfives_env.engine import Rules
from helpers import run_cli

RULES = Rules.make(target_score=60)
AGENTS_SPECS = ["random", "greedy"]


class Crashing(Agent):
    """Plays the lowest legal move; raises once ``Crashing.games_left`` games have started (a run killed mid-way)."""

    name = "t_crash"
    games_left = None

    def reset(self, seed=None):
        super().reset(seed)
        if Crashing.games_left is not None:
            Crashing.games_left -= 1

    def act(self, view) -> int:
        if Crashing.games_left is not None and Crashing.games_left < 0:
            raise KeyboardInterrupt("stopped")
        return view.legal_actions[0]


@pytest.fixture
def crashing(monkeypatch):
    monkeypatch.setitem(AGENTS, "t_crash", AgentType(f"{Path(__file__).stem}:Crashing", "lowest legal move, stops on demand"))
    monkeypatch.setattr(Crashing, "games_left", None)
    return Crashing


def full_run(tmp_path, games=12, seed=5, agents=AGENTS_SPECS, **kw):
    path = tmp_path / "full.jsonl"
    return run_tournament(agents, RULES, games=games, seed=seed, records=path, **kw), path


def same_outcome(a, b):
    return a.results == b.results and a.pairings == b.pairings and a.agents == b.agents and a.ratings == b.ratings


def test_a_torn_last_line_is_dropped_and_the_rest_played(tmp_path):
    full, full_path = full_run(tmp_path)
    lines = full_path.read_bytes().split(b"\n")
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][: len(lines[5]) // 2])
    resumed = run_tournament(AGENTS_SPECS, RULES, games=12, seed=5, records=partial, resume=True)
    assert same_outcome(resumed, full) and resumed.config["resumed_games"] == 5 and resumed.games == 12
    assert partial.read_bytes() == full_path.read_bytes()
    again = run_tournament(AGENTS_SPECS, RULES, games=12, seed=5, records=partial, resume=True)  # nothing left to play
    assert same_outcome(again, full) and again.config["resumed_games"] == 12 and again.games_per_s is None


def test_a_run_stopped_by_an_exception_resumes_to_the_uninterrupted_result(tmp_path, crashing):
    specs = ["random", "t_crash"]
    full, full_path = full_run(tmp_path, games=10, seed=8, agents=specs, workers=2)
    path = tmp_path / "games.jsonl"
    crashing.games_left = 4
    with pytest.raises(KeyboardInterrupt):
        run_tournament(specs, RULES, games=10, seed=8, records=path)
    assert len(path.read_text().splitlines()) == 4  # each game reached the disk as it finished
    crashing.games_left = None
    resumed = run_tournament(specs, RULES, games=10, seed=8, records=path, resume=True, workers=2)
    assert same_outcome(resumed, full) and resumed.config["resumed_games"] == 4
    assert path.read_text() == full_path.read_text()


def test_more_games_of_one_pairing_extend_an_earlier_run(tmp_path):
    full, _ = full_run(tmp_path, games=12)
    path = tmp_path / "games.jsonl"
    run_tournament(AGENTS_SPECS, RULES, games=4, seed=5, records=path)
    extended = run_tournament(AGENTS_SPECS, RULES, games=12, seed=5, records=path, resume=True)
    assert same_outcome(extended, full) and extended.config["resumed_games"] == 4


def test_without_records_there_is_nothing_to_resume_and_a_missing_file_starts_afresh(tmp_path):
    with pytest.raises(TournamentError, match="resume needs the records file"):
        run_tournament(AGENTS_SPECS, RULES, games=2, seed=5, resume=True)
    fresh = run_tournament(AGENTS_SPECS, RULES, games=4, seed=5, records=tmp_path / "new.jsonl", resume=True)
    assert fresh.games == 4 and fresh.config["resumed_games"] == 0


def _tamper_final_scores(lines):
    record = json.loads(lines[2])
    record["final_scores"][0] += 5
    lines[2] = json.dumps(record).encode()


def _break_json(lines):
    lines[2] = lines[2][:40]


@pytest.mark.parametrize(
    "change, kwargs, message",
    [
        (None, {"seed": 6}, r"line 1 is not game 1 of pairing 1 of this tournament: its seed is \d+, this tournament's"),
        (None, {"agents": ["greedy", "random"]}, r"line 1 is not game 1 .*it was played by \['random', 'greedy'\]"),
        (None, {"rules": Rules.make(target_score=70)}, r"line 1 .*its rules differ"),
        (None, {"agents": ["random", "greedy", "expert"], "games": 4}, r"line 5 is not game 1 of pairing 2 .*seats"),
        (None, {"games": 4}, "holds 12 games, more than the 4"),
        (_tamper_final_scores, {}, r"line 3: final_scores is \[.*\] in the record, the rules give"),
        (_break_json, {}, r"line 3: not a record \(unreadable JSON"),
    ],
    ids=["seed", "seating", "rules", "other-pairing", "too-many", "tampered", "corrupt"],
)
def test_records_of_another_tournament_or_corrupt_ones_are_refused_untouched(tmp_path, change, kwargs, message):
    _, path = full_run(tmp_path)
    if change is not None:
        lines = path.read_bytes().split(b"\n")
        change(lines)
        path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    args = dict(agents=AGENTS_SPECS, rules=RULES, games=12, seed=5) | kwargs
    with pytest.raises(TournamentError, match="cannot resume: .*full.jsonl " + message):
        run_tournament(records=path, resume=True, **args)
    assert path.read_bytes() == before


def test_cli_resume(tmp_path):
    out = tmp_path / "out"
    base = ["tournament", "--agents", "random,greedy", "--seed", "3", "--target", "60", "--out", str(out), "--json"]
    first = run_cli(*base, "--games", "4", timeout=120)
    assert first.returncode == 0, first.stderr
    resumed = run_cli(*base, "--games", "8", "--resume", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert summary["games"] == 8 and summary["config"]["resumed_games"] == 4
    assert "4 games kept from the earlier run" in resumed.stdout
    assert len((out / "games.jsonl").read_text().splitlines()) == 8
    whole = run_cli(*base[:-3], "--out", str(tmp_path / "whole"), "--json", "--games", "8", timeout=120)
    assert json.loads(whole.stdout.strip().splitlines()[-1])["pairings"] == summary["pairings"]
    refused = run_cli(*base, "--games", "8", "--seed", "4", "--resume", timeout=120)
    assert refused.returncode == 2 and refused.stderr.startswith("error: cannot resume: ") and "Traceback" not in refused.stderr
    alone = run_cli("tournament", "--agents", "random,greedy", "--games", "2", "--seed", "1", "--resume", timeout=120)
    assert alone.returncode == 2 and "--resume needs --out DIR" in alone.stderr


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_workers_stop_when_the_tournament_is_killed(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    args = ["--agents", "ismcts:iters=400", "expert", "--games", "400", "--seed", "1", "--workers", "2", "--out", str(tmp_path)]
    parent = subprocess.Popen([sys.executable, "-m", "allfives.cli.main", "tournament", *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) >= 2, "the workers did not start"
        time.sleep(1)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while (alive := [w for w in workers if Path(f"/proc/{w}").exists()]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive, f"workers still running after their tournament was killed: {alive}"
    finally:
        parent.kill()
