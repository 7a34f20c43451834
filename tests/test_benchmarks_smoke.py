"""Tiny-budget runs of the benchmark scripts (their figures are recorded in the issue notes, not asserted)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "script, keys",
    [
        ("engine_speed.py", {"allfives_moves_per_s", "openspiel_block_dominoes_moves_per_s", "ratio_median"}),
        ("env_speed.py", {"decisions_per_s", "ratio_connect_four", "ratio_team_dominoes"}),
    ],
)
def test_benchmark_runs_and_reports_json(script, keys):
    report = run_benchmark(script)
    assert keys <= set(report)


def run_benchmark(script, *flags):
    pytest.importorskip("pyspiel")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--seconds", "0.3", "--rounds", "1", "--json", *flags],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_env_speed_can_measure_the_pure_python_encoder():
    assert run_benchmark("env_speed.py", "--pure", "--raw")["accelerated"] is False


@pytest.mark.slow
def test_train_speed_runs_both_pipelines_quiet_and_loaded_and_reports_json():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "train_speed.py"), "--steps", "600", "--rounds", "1", "--json",
                             "--baseline", "HEAD", "--load", "0", "--load", "1"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert [row["load"] for row in report["loads"]] == [0, 1]
    for row in report["loads"]:
        assert row["allfives_steps_per_s"] > 0 and row["connect_four_tutorial_steps_per_s"] > 0
        # the report rounds the ratio to 2 decimals from the unrounded speeds, which it rounds too:
        # the two roundings together stay within 0.01
        assert row["ratio"] == pytest.approx(row["allfives_steps_per_s"] / row["connect_four_tutorial_steps_per_s"], abs=0.01)
        assert [b["ref"] for b in row["baselines"]] == ["HEAD"] and all(b["steps_per_s"] > 0 for b in row["baselines"])
        for contender in (row, *row["baselines"]):  # one round: its own ratio is the ratio of the medians
            assert contender["paired_ratio"] == pytest.approx(contender["ratio"], abs=0.011)
        for contender in (row, *row["baselines"]):  # where a step's time went: the rollouts and the updates, both timed
            assert contender["rollout_us_per_step"] > 0 and contender["update_us_per_step"] > 0
            # both are inside model.learn, whose time gives the steps/s (the medians of one round: the same run's)
            assert contender["rollout_us_per_step"] + contender["update_us_per_step"] <= 1e6 / contender.get("steps_per_s", row["allfives_steps_per_s"]) * 1.001
    loaded = report["loads"][1]
    assert loaded["kept_of_quiet"] == pytest.approx(loaded["allfives_steps_per_s"] / report["loads"][0]["allfives_steps_per_s"], abs=0.0051)


def test_the_paired_ratio_is_the_median_of_each_rounds_own_ratio():
    """A machine that slows down for one round moves the ratio of the medians, not the paired one."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from train_speed import paired
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    ours, tutorial = [8400.0, 4800.0, 9120.0], [1000.0, 600.0, 1200.0]  # round 2 ran at 60% for both
    assert paired(ours, tutorial) == 8.0  # the rounds' own ratios: 8.4, 8.0, 7.6
    assert paired([9120.0, 8400.0], [1200.0, 1000.0]) == 8.0


def test_search_time_reports_each_agents_decision_times():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "search_time.py"), "--positions", "6", "--json",
         "--agents", "ismcts:iters=5,stop=full", "ismcts:iters=5,policy=allfives_2p", "greedy"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    specs = ["ismcts:iters=5,stop=full", "ismcts:iters=5,policy=allfives_2p", "greedy"]
    assert report["positions"] == 6 and [row["agent"] for row in report["agents"]] == specs
    for row in report["agents"]:
        assert 0 < row["median_ms"] <= row["p95_ms"]
    assert report["agents"][0]["mean_ratio"] == 1.0
    # a full search runs every iteration, an early-stopping one at most as many; greedy does not search
    assert [row["mean_iterations"] for row in report["agents"]][::2] == [5.0, None]
    assert 3 <= report["agents"][1]["mean_iterations"] <= 5


def test_lookahead_speed_reports_every_version_cost():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lookahead_speed.py"), "--views", "40", "--rounds", "1", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["views"] == 40 and set(report["us_per_view"]) == {"encode_follow_up_net", "encode_follow_up", "encode_lookahead", "encode", "expert_act"}
    assert all(us > 0 for us in report["us_per_view"].values())
    assert report["ratio_lookahead_v1"] > 0 and report["ratio_follow_up_v2"] > 0 and report["ratio_v4_v3"] > 0


def test_server_load_runs_both_connection_modes_and_reports_json():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "server_load.py"), "--policy", "greedy",
                             "--clients", "3", "--requests", "4", "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for mode in ("keepalive", "new"):
        figures = report[f"current_{mode}"]
        assert figures["requests"] == 12 and figures["errors"] == 0
        assert figures["requests_per_s"] > 0 and 0 < figures["p50_ms"] <= figures["p99_ms"]


def test_search_oracle_plays_a_match_and_hands_the_search_the_truth():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "search_oracle.py"), "ismcts:iters=5", "greedy",
                             "--games", "4", "--see", "hands", "--workers", "1", "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["games"] == 4 and 0 <= report["a_wins"] <= 4 and report["ci_low"] <= report["a_win_rate"] <= report["ci_high"]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import random

    import search_oracle
    from allfives_env.engine import Game, Rules

    game = Game(Rules.make(num_players=2), 3)
    game.step(game.legal_actions()[0])
    search_oracle._TRUE_GAME = game
    view = game.view(game.current_player)
    seen = search_oracle._seeing("all")(view)(random.Random(0))
    assert seen.hands == game.hands and seen.boneyard[seen.draw_pos:] == game.boneyard[game.draw_pos:]
    hands_only = search_oracle._seeing("hands")(view)(random.Random(0))
    assert hands_only.hands == game.hands and sorted(hands_only.boneyard) == sorted(game.boneyard[game.draw_pos:])
    # 4 players: the partner's (or the opponents') true hands, the other seats' sampled from what is left
    game = Game(Rules.make(num_players=4), 5)
    for _ in range(3):
        game.step(game.legal_actions()[0])
    search_oracle._TRUE_GAME = game
    view = game.view(game.current_player)
    partner, opponents = (view.seat + 2) % 4, {(view.seat + 1) % 4, (view.seat + 3) % 4}
    for see, seen, sampled in (("partner", {partner}, opponents), ("opponents", opponents, {partner})):
        worlds = [search_oracle._seeing(see)(view)(random.Random(k)) for k in range(30)]
        for world in worlds:
            assert all(world.hands[s] == game.hands[s] for s in seen | {view.seat})
            assert [h.bit_count() for h in world.hands] == [h.bit_count() for h in game.hands]
        assert any(world.hands[s] != game.hands[s] for world in worlds for s in sampled)
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "search_oracle.py"), "ismcts:iters=5", "greedy", "--see", "partner"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--see partner is for partnerships: --players 4" in bad.stderr


PAIRED_RUNS = [sys.executable, str(ROOT / "benchmarks" / "paired_runs.py")]


def _paired_greedy_and_random(tmp_path, *tournament_args) -> dict:
    """``paired_runs.py``'s report on two tournaments against expert on the same deals: greedy's
    (``tmp_path / "a"``) and random's (``tmp_path / "b"``)."""
    from helpers import run_cli

    for name, agent in (("a", "greedy"), ("b", "random")):
        out = run_cli("tournament", *tournament_args, "--agents", agent, "expert", "--seed", "4", "--out", tmp_path / name)
        assert out.returncode == 0, out.stderr
    result = subprocess.run([*PAIRED_RUNS, tmp_path / "a", tmp_path / "b", "--agent-a", "greedy", "--agent-b", "random", "--json"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_paired_runs_compares_two_tournaments_on_the_same_deals(tmp_path):
    report = _paired_greedy_and_random(tmp_path, "--games", "8")
    assert report["games"] == 8 and report["deals"] == 4
    assert report["difference"] == pytest.approx(report["a_rate"] - report["b_rate"], abs=1e-4)
    assert report["ci_low"] <= report["difference"] <= report["ci_high"]
    same = subprocess.run([*PAIRED_RUNS, tmp_path / "a", tmp_path / "a", "--agent-a", "greedy", "--agent-b", "greedy", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert json.loads(same.stdout)["difference"] == 0 == json.loads(same.stdout)["ci_high"]
    (tmp_path / "a" / "games.jsonl").write_text("{not json\n")
    broken = subprocess.run([*PAIRED_RUNS, tmp_path / "a", tmp_path / "b", "--agent-a", "greedy", "--agent-b", "random"],
                            capture_output=True, text=True, timeout=120)
    assert broken.returncode == 2 and "line 1: not a game record" in broken.stderr and "Traceback" not in broken.stderr


def test_belief_draws_counts_worlds_and_the_true_world_keeps_every_earlier_turn():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "belief_draws.py"), "--players", "4", "--positions", "40", "--worlds", "5"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "sampled worlds break an earlier turn" in result.stdout
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from belief_draws import consistent, draw_constraints
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from allfives_agents.expert import ExpertAgent
    from allfives_env.engine import Game, Rules

    expert, checked = ExpertAgent(), 0
    for players in (2, 4):
        for seed in range(8):
            game = Game(Rules.make(num_players=players), seed=seed, max_hands=1)
            while not game.over:
                view = game.view(game.current_player)
                facts = draw_constraints(view)
                checked += len(facts)
                assert consistent(game.hands, facts)  # what really happened never breaks them
                # a world that hands a seat which drew or passed every unseen tile it could show does
                wrong = list(game.hands)
                for seat, shows, placed, kept in facts:
                    if (wrong[seat] & shows).bit_count() <= kept and (shows & ~placed & ~game.layout.played).bit_count() > kept:
                        wrong[seat] |= shows & ~game.layout.played & ~view.hand
                        if (wrong[seat] | placed) & shows and ((wrong[seat] | placed) & shows).bit_count() > kept:
                            assert not consistent(wrong, facts)
                game.step(expert.act(view))
    assert checked > 20


def test_belief_quality_takes_positions_from_records_and_measures_an_agents_own_belief(tmp_path):
    records = tmp_path / "t"
    player = "ismcts:iters=5"
    result = run_cli("tournament", "--players", "4", "--agents", player, "expert", "--games", "2", "--seed", "3", "--workers", "1", "--out", records)
    assert result.returncode == 0, result.stderr
    script = [sys.executable, str(ROOT / "benchmarks" / "belief_quality.py"), "--players", "4", "--positions", "6"]
    agents = ["ismcts:belief=expert,worlds=30", "ismcts:iters=30"]
    result = subprocess.run([*script, "--records", str(records / "games.jsonl"), "--player", player, "--beliefs", "uniform:30", "--agents", *agents],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1] for line in result.stdout.splitlines() if line.startswith("| uniform") or line.startswith("| ismcts")}
    assert list(rows) == ["uniform:30", *agents]
    assert all(0 < float(r[0]) < 0.5 for r in rows.values())
    assert float(rows[agents[0]][2]) < 30 == float(rows[agents[1]][2])  # weighed worlds; the uniform agent's are all alike
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from belief_quality import recorded_positions
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for view, hands in recorded_positions([records / "games.jsonl"], player, 6, 5):
        assert hands[view.seat] == view.hand and [h.bit_count() for h in hands] == list(view.tile_counts)  # the hands as they were
    for args, message in ((["--records", str(records / "games.jsonl")], "--records and --player go together"),
                          (["--records", str(records / "games.jsonl"), "--player", "bob"], "0 positions of player 'bob'"),
                          (["--agents", "expert"], "--agents: 'expert' is not an ismcts spec"),
                          (["--agents", "ismcts:bpartner=x.json"], "--agents: agent 'ismcts': option bpartner=x.json needs belief=expert")):
        bad = subprocess.run([*script, *args], capture_output=True, text=True, timeout=120)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_belief_quality_scores_the_beliefs_and_knowing_the_hands_scores_zero():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "belief_quality.py"), "--positions", "8", "--beliefs", "uniform:20", "expert:20"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith(("| uniform", "| expert"))]
    assert [r[0].strip() for r in rows] == ["uniform:20", "expert:20"]
    assert all(0 < float(r[1]) < 0.5 and float(r[3]) <= 20 for r in rows)
    assert all(float(r[4]) > 0 for r in rows) and float(rows[0][5]) == 0 < float(rows[1][5])  # uniform weighs nothing
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "belief_quality.py"), "--beliefs", "oracle:5"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "'oracle:5': expected MODEL:WORLDS" in bad.stderr
    for args, message in ((["--policy", "nowhere.zip"], "--policy: policy file not found: nowhere.zip"),
                          (["--policy", "allfives_4p"], "--policy: the policy allfives_4p was trained for 4 players in partnerships")):
        bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "belief_quality.py"), *args], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from belief_quality import positions, tile_errors
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from allfives_env.engine import Rules

    for view, hands in positions(Rules.make(num_players=3), 5, 3):
        brier, loss, count = tile_errors(view, hands, [hands], np.ones(1))  # a pool of the true world alone
        assert count > 0 and brier < 1e-6 * count and loss < 1e-3 * count
        wrong = [hands[s] if s == view.seat else 0 for s in range(3)]  # every other seat holding nothing
        assert tile_errors(view, hands, [wrong], np.ones(1))[0] > 0.9 * sum(hands[s].bit_count() for s in range(3) if s != view.seat)


@pytest.mark.slow
def test_train_cost_measures_speed_and_memory_and_the_time_to_a_target(tmp_path):
    script = str(ROOT / "benchmarks" / "train_cost.py")
    result = subprocess.run([sys.executable, script, "--steps", "512", "--rounds", "1", "--row", "2p", "--row", "4p", "--json"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert [row["row"] for row in report["rows"]] == ["2p", "4p"]
    assert all(row["steps_per_s"] > 0 and row["peak_mib"] > 50 for row in report["rows"])
    # a target of 1% is met at the first evaluation: its step and the run's wall time up to it
    result = subprocess.run([sys.executable, script, "--learn", "1024", "--eval-every", "512", "--eval-games", "4",
                             "--target", "0.01", "--row", "2p_width64", "--json"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout.strip().splitlines()[-1])["rows"]
    steps = [s for s, _, _ in row["curve"]]
    assert steps and steps == sorted(steps) and all(w > 0 for _, w, _ in row["curve"])
    first_hit = next((s, w) for s, w, x in row["curve"] if x >= 0.01) if any(x >= 0.01 for _, _, x in row["curve"]) else (None, None)
    assert (row["steps_to_target"], row["seconds_to_target"]) == first_hit
    bad = subprocess.run([sys.executable, script, "--target", "2"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--target" in bad.stderr


def test_an_exported_revision_imports_its_own_code_under_the_installed_names(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from revision import export_revision
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    tree = export_revision("HEAD", tmp_path / "rev")
    out = subprocess.run([sys.executable, "-c", "import allfives_train.network, allfives_agents.bots, allfives_env.observation as o;"
                          "print(allfives_train.network.__file__, allfives_agents.bots.__file__, o.__file__)"],
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True, check=True)
    files = [Path(f).resolve() for f in out.stdout.split()]
    assert len(files) == 3 and all(f.is_relative_to(tree.resolve()) for f in files), files


def test_the_cost_table_in_the_training_docs_has_a_row_for_each_row_of_train_cost_and_no_other():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from train_cost import ROWS
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    text = (ROOT / "docs" / "training.md").read_text()
    table = next(block for block in text[text.index("## The cost curve"):].split("\n\n") if block.startswith("| row |"))
    names = [line.split("|")[1].strip().strip("`") for line in table.splitlines()[2:]]
    assert names == list(ROWS)


def test_paired_runs_counts_the_meetings_of_a_three_player_tournament(tmp_path):
    """In 3 players the agent's share of a game is its meetings ahead of the other agent's seats,
    and every seating of a deal is its own game (two seatings can give the agent the same first seat)."""
    report = _paired_greedy_and_random(tmp_path, "--players", "3", "--games", "6")
    for name, agent, key in (("a", "greedy", "a_rate"), ("b", "random", "b_rate")):
        pairing = next(p for p in json.loads((tmp_path / name / "results.json").read_text())["pairings"] if agent in (p["a"], p["b"]))
        rate = pairing["a_win_rate"] if pairing["a"] == agent else 1 - pairing["a_win_rate"]
        assert report[key] == pytest.approx(rate, abs=1e-4), (name, report, pairing)
    games = [json.loads(line) for line in (tmp_path / "a" / "games.jsonl").read_text().splitlines()]
    assert report["games"] == len(games) > report["deals"]


def test_point_sources_splits_a_tournament_by_seat_and_adds_up_to_the_final_scores(tmp_path):
    out = run_cli("tournament", "--num-players", "4", "--partnerships", "--agents", "greedy", "expert", "--games", "4",
                  "--seed", "3", "--out", tmp_path / "run")
    assert out.returncode == 0, out.stderr
    script = [sys.executable, str(ROOT / "benchmarks" / "point_sources.py")]
    result = subprocess.run([*script, tmp_path / "run", "--agent", "greedy", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (report,) = json.loads(result.stdout)
    records = [json.loads(line) for line in (tmp_path / "run" / "games.jsonl").read_text().splitlines()]
    hands = sum(len(r["hands"]) for r in records)
    assert report["games"] == 4 and report["hands"] == hands
    ours = report["totals"]["ours"]
    assert ours["seat_hands"] == 2 * hands == report["totals"]["theirs"]["seat_hands"]
    greedy_play = sum(e["points"] for r in records for h in r["hands"] for e in h["events"]
                      if e["type"] == "play" and r["players"][e["player"]] == "greedy")
    greedy_final = sum(r["final_scores"][r["players"].index("greedy") % 2] for r in records)
    assert ours["play"] == greedy_play and report["per_hand"]["ours"]["play"] == pytest.approx(greedy_play / (2 * hands))
    assert report["per_hand"]["ours"]["net"] * 2 * hands == pytest.approx(greedy_final)
    for lines, fault in (([{**records[0], "final_scores": [0, 0]}], "final_scores is [0, 0] in the record"),
                         ([records[0], "{not json"], "line 2")):
        (tmp_path / "run" / "games.jsonl").write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
        broken = subprocess.run([*script, tmp_path / "run", "--agent", "greedy"], capture_output=True, text=True, timeout=120)
        assert broken.returncode == 2 and fault in broken.stderr and "Traceback" not in broken.stderr


def test_teacher_agreement_counts_a_copy_of_the_teacher_as_agreeing_everywhere():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "teacher_agreement.py"), "--config", str(ROOT / "configs" / "tiny_test.yaml"),
         "--teacher", "ismcts:iters=20", "--games", "2", "--seed", "1", "--agent", "ismcts:iters=20", "--agent", "random"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["positions"] > 10 and 0 < report["teacher_self_agreement"] < 1
    same, chance = report["agents"]["ismcts:iters=20"], report["agents"]["random"]
    assert same == {"agreement": 1.0, "where_consistent": 1.0, "where_inconsistent": 1.0}, "seed 1 is the teacher's first copy"
    assert chance["agreement"] < 1.0


def test_paired_runs_pools_deal_sets_and_keeps_one_pairing_of_a_round_robin(tmp_path):
    from helpers import run_cli

    def paired(*args):
        result = subprocess.run([*PAIRED_RUNS, *args, "--agent-a", "greedy", "--agent-b", "random", "--json"],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    for name, agent, seed in (("a1", "greedy", "4"), ("b1", "random", "4"), ("a2", "greedy", "9"), ("b2", "random", "9")):
        out = run_cli("tournament", "--agents", agent, "expert", "--games", "8", "--seed", seed, "--out", tmp_path / name)
        assert out.returncode == 0, out.stderr
    one, two = paired(tmp_path / "a1", tmp_path / "b1"), paired(tmp_path / "a2", tmp_path / "b2")
    both = paired(tmp_path / "a1", tmp_path / "b1", tmp_path / "a2", tmp_path / "b2")
    assert both["games"] == one["games"] + two["games"] and both["deals"] == one["deals"] + two["deals"]
    assert both["difference"] == pytest.approx((one["difference"] * one["deals"] + two["difference"] * two["deals"]) / both["deals"], abs=1e-4)
    odd = subprocess.run([*PAIRED_RUNS, tmp_path / "a1", tmp_path / "b1", tmp_path / "a2", "--agent-a", "greedy", "--agent-b", "random"],
                         capture_output=True, text=True, timeout=120)
    assert odd.returncode == 2 and "runs come in pairs" in odd.stderr

    # a round robin plays every deal once per pairing: each pairing's games count, and --against keeps one
    for name, agent in (("ra", "greedy"), ("rb", "ismcts:iters=2")):
        out = run_cli("tournament", "--agents", agent, "expert", "random", "--games", "4", "--seed", "4", "--out", tmp_path / name)
        assert out.returncode == 0, out.stderr
    rr = [tmp_path / "ra", tmp_path / "rb", "--agent-a", "greedy", "--agent-b", "ismcts:iters=2", "--json"]
    every = json.loads(subprocess.run([*PAIRED_RUNS, *rr], capture_output=True, text=True, timeout=120).stdout)
    expert = json.loads(subprocess.run([*PAIRED_RUNS, *rr, "--against", "expert"], capture_output=True, text=True, timeout=120).stdout)
    assert every["games"] == 8 and expert["games"] == 4 and expert["deals"] == 2
    rates = json.loads((tmp_path / "ra" / "results.json").read_text())["pairings"]
    assert expert["a_rate"] == pytest.approx(next(p["a_win_rate"] for p in rates if {p["a"], p["b"]} == {"greedy", "expert"} and p["a"] == "greedy"), abs=1e-4)
