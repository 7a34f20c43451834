"""The tournament: schedule, duplicate deals, statistics recomputed from the records, workers, the CLI."""

import json
from pathlib import Path

import pytest

import allfives_agents
from allfives_agents import Agent, FunctionAgent
from allfives_agents.registry import AGENTS, AgentType
from allfives_agents.tournament import (
    TournamentError,
    check_specs,
    make_schedule,
    run_tournament,
)
from allfives_agents.spec import split_specs as split_agent_specs
from allfives_agents.tournament.stats import wilson_interval
from allfives_env.engine import Rules
from allfives_env.engine.record import replay_record
from helpers import run_cli


class FirstLegal(Agent):
    """Always the lowest legal action id (weak)."""

    name = "t_first"

    def act(self, view) -> int:
        return view.legal_actions[0]


class LastLegal(Agent):
    """Always the highest legal action id."""

    name = "t_last"

    def act(self, view) -> int:
        return view.legal_actions[-1]


class BlasThreads(Agent):
    """Fails unless numpy's BLAS runs on one thread in the process it plays in."""

    name = "t_blas"

    def act(self, view) -> int:
        import numpy  # noqa: F401  (as an agent that uses numpy loads it)
        from threadpoolctl import threadpool_info

        threads = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
        if not threads or max(threads) != 1:
            raise RuntimeError(f"BLAS threads in this worker: {threads}")
        return view.legal_actions[0]


@pytest.fixture
def test_agents(monkeypatch):
    """``t_first`` and ``t_last`` by spec name (this module is importable by spawned workers too)."""
    module = Path(__file__).stem
    monkeypatch.setitem(AGENTS, "t_first", AgentType(f"{module}:FirstLegal", "lowest legal action"))
    monkeypatch.setitem(AGENTS, "t_last", AgentType(f"{module}:LastLegal", "highest legal action"))
    monkeypatch.setitem(AGENTS, "t_blas", AgentType(f"{module}:BlasThreads", "checks its BLAS threads"))


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def tournament_cli(*args):
    return run_cli("tournament", *args, timeout=120)


# ------------------------------------------------------------------------------------------ specs and schedule
def test_split_agent_specs_keeps_options_together():
    assert split_agent_specs("random,greedy") == ["random", "greedy"]
    assert split_agent_specs(["random,ismcts:iters=200,rollout=greedy", "expert"]) == [
        "random",
        "ismcts:iters=200,rollout=greedy",
        "expert",
    ]
    assert split_agent_specs(["ismcts:iters=5,rollout=greedy,ppo:m.zip", " random ,"]) == [
        "ismcts:iters=5,rollout=greedy",
        "ppo:m.zip",
        "random",
    ]
    # a path with ':' in an option value stays with its spec; a named bot starts a new one
    assert split_agent_specs("ismcts:iters=5,policy=C:/m.zip,strong,expert:threat=0.5") == [
        "ismcts:iters=5,policy=C:/m.zip",
        "strong",
        "expert:threat=0.5",
    ]


def test_check_specs_names_unknown_agents_and_missing_policy_files(monkeypatch, tmp_path):
    with pytest.raises(TournamentError, match=r"unknown agent 'nope'; available: .*random"):
        check_specs(["random", "nope"])
    monkeypatch.setitem(AGENTS, "t_policy", AgentType("allfives_agents.random_agent:RandomAgent", "file agent", takes_path=True))
    with pytest.raises(TournamentError, match="policy file not found: missing.zip"):
        check_specs(["t_policy:missing.zip"])
    model = tmp_path / "model.zip"
    model.write_bytes(b"x")
    check_specs([f"t_policy:{model}"])
    with pytest.raises(TournamentError, match="needs a file"):
        check_specs(["t_policy"])


def test_schedule_pairs_teams_and_groups():
    names = ["a", "b", "c", "d"]
    two = make_schedule(names, Rules.make(num_players=2), games=5, seed=1)
    assert two.kind == "pairs" and len(two.lineups) == 6 and two.games_per_pairing == 6
    team = make_schedule(names[:3], Rules.make(num_players=4), games=4, seed=1)
    assert team.kind == "teams" and team.lineups == ((0, 1, 0, 1), (0, 2, 0, 2), (1, 2, 1, 2))
    assert [team.plan(0, g).seating for g in range(2)] == [(0, 1, 0, 1), (1, 0, 1, 0)]
    three = make_schedule(names, Rules.make(num_players=3), games=4, seed=1)
    assert three.kind == "groups" and len(three.lineups) == 4 and three.games_per_pairing == 6
    seatings = [three.plan(0, g).seating for g in range(3)]
    for seat in range(3):  # every agent of the group sits in every seat
        assert sorted(s[seat] for s in seatings) == [0, 1, 2]
    padded = make_schedule(names[:2], Rules.make(num_players=4, partnerships=False), games=1, seed=1)
    assert padded.lineups == ((0, 1, 0, 1),) and padded.games_per_pairing == 4


def test_duplicate_blocks_share_a_seed_and_fresh_mode_does_not():
    rules = Rules.make(num_players=3)
    dup = make_schedule(["a", "b", "c"], rules, games=6, seed=7, duplicate=True)
    seeds = [dup.plan(0, g).seed for g in range(6)]
    assert seeds[0] == seeds[1] == seeds[2] != seeds[3] == seeds[4] == seeds[5]
    fresh = make_schedule(["a", "b", "c"], rules, games=6, seed=7, duplicate=False)
    assert len({fresh.plan(0, g).seed for g in range(6)}) == 6
    assert [fresh.plan(0, g).seating for g in range(3)] == [dup.plan(0, g).seating for g in range(3)]
    # a pure function of its inputs
    assert dup.plan(0, 4) == make_schedule(["a", "b", "c"], rules, games=6, seed=7).plan(0, 4)


# ------------------------------------------------------------------------------------------ playing
def test_statistics_match_a_recount_from_the_records(test_agents, tmp_path):
    path = tmp_path / "games.jsonl"
    result = run_tournament(
        ["random", "t_first", "t_last"], Rules.make(target_score=60), games=8, seed=3, records=path
    )
    records = read_jsonl(path)
    assert result.games == len(records) == 24 and result.config["games_per_pairing"] == 8
    assert result.hands == sum(len(r["hands"]) for r in records)
    for p in result.pairings:
        games = [r for r in records if set(r["players"]) == {p["a"], p["b"]}]
        a_side = [r["players"].index(p["a"]) for r in games]
        a_wins = sum(r["winner"] == s for r, s in zip(games, a_side))
        diff = sum(r["final_scores"][s] - r["final_scores"][1 - s] for r, s in zip(games, a_side)) / len(games)
        hands = sum(len(r["hands"]) for r in games)
        a_points = sum(r["final_scores"][s] for r, s in zip(games, a_side)) / hands
        assert p["games"] == len(games) == 8
        assert p["a_wins"] == a_wins and p["b_wins"] == 8 - a_wins and p["draws"] == 0
        assert p["a_win_rate"] == pytest.approx(a_wins / 8)
        assert (p["ci_low"], p["ci_high"]) == pytest.approx(wilson_interval(a_wins, 8))
        assert p["mean_score_diff"] == pytest.approx(diff)
        assert p["a_points_per_hand"] == pytest.approx(a_points)
    for stats in result.agents:
        mine = [r for r in records if stats["agent"] in r["players"]]
        wins = sum(r["players"][r["winner"]] == stats["agent"] for r in mine)
        assert (stats["games"], stats["wins"]) == (16, wins)
    assert list(result.ratings) == [s["agent"] for s in result.ranked()]
    assert sum(result.ratings.values()) / 3 == pytest.approx(1500)
    # the records are complete, replayable games with the agent specs as players
    assert all(r["format"] == "allfives-record/1" and r["complete"] for r in records)
    for i, r in enumerate(records):
        assert replay_record(r, f"game {i + 1}").scores == r["final_scores"]


@pytest.mark.parametrize(
    "rules",
    [Rules.make(num_players=2, target_score=50), Rules.make(num_players=4, target_score=50),
     Rules.make(num_players=3, target_score=50)],
    ids=["2p", "4p-partnership", "3p"],
)
def test_duplicate_replays_the_same_deals_with_seats_rotated(test_agents, tmp_path, rules):
    path = tmp_path / "games.jsonl"
    result = run_tournament(["random", "t_first", "t_last"], rules, games=3, seed=11, records=path)
    block = result.config["block_size"]
    records = read_jsonl(path)
    assert len(records) % block == 0
    for start in range(0, len(records), block):
        games = records[start : start + block]
        assert len({r["seed"] for r in games}) == 1
        assert all(g["hands"][0]["deal"] == games[0]["hands"][0]["deal"] for g in games)
        n = rules.num_players
        for r, g in enumerate(games):  # seat s holds lineup[(s + r) % n]
            assert g["players"] == [games[0]["players"][(s + r) % n] for s in range(n)]
    per_pairing = result.config["games_per_pairing"]
    seeds = [[r["seed"] for r in records[i : i + per_pairing : block]] for i in range(0, len(records), per_pairing)]
    assert all(len(set(s)) == len(s) for s in seeds), "every block of a pairing has its own deal"
    assert all(s == seeds[0] for s in seeds), "every pairing plays the same deals"


def test_no_duplicate_deals_fresh_hands_and_alternates_seats(tmp_path):
    path = tmp_path / "games.jsonl"
    run_tournament(["random", "random"], Rules.make(target_score=50), games=4, seed=2, duplicate=False, records=path)
    records = read_jsonl(path)
    assert len({r["seed"] for r in records}) == 4
    assert [r["players"] for r in records] == [["random", "random"]] * 4


def test_identical_agents_cancel_out_under_duplicate():
    # the seat's agent seed is replayed with the deal, so two copies of one agent split every block
    result = run_tournament(["random", "random"], Rules.make(target_score=80), games=20, seed=5)
    (p,) = result.pairings
    assert (p["a"], p["b"], p["a_wins"], p["b_wins"], p["mean_score_diff"]) == ("random", "random#2", 10, 10, 0)


def test_workers_do_not_change_results(test_agents, tmp_path):
    rules = Rules.make(num_players=3, target_score=50)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    a = run_tournament(["random", "t_last"], rules, games=6, seed=4, workers=1, records=one)
    b = run_tournament(["random", "t_last"], rules, games=6, seed=4, workers=2, records=two)
    assert one.read_text() == two.read_text()
    assert a.pairings == b.pairings and a.agents == b.agents and a.ratings == b.ratings
    assert a.results == b.results and b.config["workers"] == 2


def test_agent_objects_functions_and_their_limits():
    first = FunctionAgent(lambda view: view.legal_actions[0], "first")
    result = run_tournament([first, "random", LastLegal()], Rules.make(num_players=4, target_score=50), games=2, seed=1)
    assert [s["agent"] for s in result.agents] == ["first", "random", "t_last"]
    assert all(p["games"] == 2 for p in result.pairings)
    with pytest.raises(TournamentError, match="spec string"):
        run_tournament([first, "random"], games=2, workers=2)
    with pytest.raises(TournamentError, match="at least 2 agents"):
        run_tournament(["random"])
    with pytest.raises(TournamentError, match="games must be"):
        run_tournament("random,random", games=0)


def test_a_failing_agent_is_named():
    def broken(view):
        raise RuntimeError("no idea")

    with pytest.raises(TournamentError, match=r"agent 'broken' at seat \d failed .*RuntimeError: no idea"):
        run_tournament([FunctionAgent(broken, "broken"), "random"], games=2)
    with pytest.raises(TournamentError, match="IllegalMoveError"):
        run_tournament([FunctionAgent(lambda view: 111, "cheat"), "random"], games=2)


# ------------------------------------------------------------------------------------------ command line
def test_cli_2p_writes_every_output_and_json(tmp_path):
    out = tmp_path / "out"
    result = tournament_cli("--players", "2", "--agents", "random,random", "--games", "4", "--seed", "1", "--target", "60",
                     "--no-duplicate", "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["games"] == 4 and summary["games_per_s"] > 0 and set(summary["ratings"]) == {"random", "random#2"}
    (p,) = summary["pairings"]
    assert {"a", "b", "games", "a_wins", "a_win_rate", "ci_low", "ci_high"} <= set(p) and p["games"] == 4
    assert "rank" in result.stdout and "95% CI" in result.stdout and "games/s" in result.stdout
    for name in ("results.json", "pairings.csv", "ratings.csv", "games.jsonl", "winrates.png"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "winrates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "results.json").read_text())
    assert saved["pairings"] == summary["pairings"] and saved["config"]["duplicate"] is False
    csv_lines = (out / "pairings.csv").read_text().splitlines()
    assert csv_lines[0].startswith("a,b,games,a_wins") and len(csv_lines) == 2
    assert (out / "ratings.csv").read_text().splitlines()[0].startswith("rank,agent,rating")
    replay = run_cli("replay", out / "games.jsonl", "--quiet", "--json")
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout.strip().splitlines()[-1])["games"] == 4


@pytest.mark.parametrize(
    "players, extra, games, pairings",
    [("3", [], 3, 1), ("4", [], 2, 1), ("4", ["--no-partnerships", "--hand-size", "five"], 4, 1)],
    ids=["3p", "4p-partnership", "4p-cut-throat"],
)
def test_cli_more_players_json(players, extra, games, pairings):
    result = tournament_cli("--players", players, *extra, "--agents", "random", "--agents", "random", "--games", "1",
                     "--seed", "2", "--target", "50", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["games"] == games and len(summary["pairings"]) == pairings
    assert summary["config"]["rules"]["num_players"] == int(players)
    assert "rounded up" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agents", "random,bogus"], "unknown agent 'bogus'; available: random"),
        (["--agents", "random"], "at least 2 agents"),
        (["--agents", "random,random", "--games", "0"], "--games must be at least 1"),
        (["--agents", "random,random", "--workers", "0"], "--workers must be at least 1"),
        (["--agents", "random,random", "--players", "5"], "num_players must be 2, 3 or 4"),
        (["--agents", "random,random", "--out", "setup.cfg-not-a-dir"], "not a directory"),
    ],
)
def test_cli_errors_are_one_line(args, message, tmp_path):
    args = [str(tmp_path / a) if a.endswith("-not-a-dir") else a for a in args]
    if any(a.endswith("-not-a-dir") for a in args):
        Path(args[-1]).write_text("a file")
    if "--games" not in args:
        args += ["--games", "2"]
    result = tournament_cli(*args, "--seed", "1")
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_cli_missing_policy_file_names_the_path():
    kind = next((name for name, t in allfives_agents.registry.AGENTS.items() if t.takes_path), None)
    if kind is None:
        pytest.skip("no path-taking agent kind is registered (check_specs is tested with one above)")
    result = tournament_cli("--agents", f"random,{kind}:missing.zip", "--games", "2", "--seed", "1")
    assert result.returncode == 2 and "missing.zip" in result.stderr and "Traceback" not in result.stderr


def test_workers_hold_numpys_blas_to_one_thread(test_agents):
    # a worker is one process per core; a thread pool per worker on top fought the others for them
    result = run_tournament(["t_blas", "t_first"], Rules.make(num_players=2), games=4, seed=1, workers=2)
    assert result.pairing("t_blas", "t_first")["games"] == 4

