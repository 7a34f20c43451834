"""Move analysis (allfives_agents.analysis, allfives analyze): values agree with the engine, exact when nothing is hidden."""

import json
import random

import pytest

from allfives_agents import make_agent
from allfives_agents.analysis import analyze, format_analysis
from allfives_env.engine import Game, Rules
from allfives_env.engine.rewards import zero_sum

from helpers import game_from, run_cli

ALL = [f"{a}-{b}" for a in range(7) for b in range(a, 7)]


def midgame_view(players=2, seed=5, moves=4):
    game = Game(Rules.make(num_players=players), seed)
    rng = random.Random(seed)
    for _ in range(moves):
        game.step(rng.choice(game.legal_actions()))
    return game, game.view(game.current_player)


def test_every_legal_move_is_analysed_with_its_points_now_and_an_interval():
    _, view = midgame_view()
    result = analyze(view, "greedy", worlds=60, seed=3)
    assert {m["action"] for m in result["moves"]} == set(view.legal_actions)
    assert result["worlds"] == 60 and not result["exact"]
    for m in result["moves"]:
        assert m["points"] == view.points_of(m["action"])
        assert m["value_low"] <= m["value"] <= m["value_high"]
    values = [m["value"] for m in result["moves"]]
    assert values == sorted(values, reverse=True), "best move first"
    assert analyze(view, "greedy", worlds=60, seed=3) == result, "same seed, same analysis"
    assert "sampled worlds" in format_analysis(result)


def test_nothing_hidden_gives_the_exact_result_with_zero_width():
    """Two players holding 14 tiles each: no boneyard, so seat 0 knows seat 1's hand. Each move's
    value is what greedy play from there really gives, with a zero-width interval."""
    rng = random.Random(2)
    tiles = ALL[:]
    rng.shuffle(tiles)
    game = game_from([tiles[:14], tiles[14:]], starter=0, hand_size=14, target_score=1000)
    view = game.view(0)
    result = analyze(view, "greedy", worlds=50, seed=1)
    assert result["exact"] and result["worlds"] == 1
    greedy = make_agent("greedy")
    for m in result["moves"]:
        assert m["value_low"] == m["value"] == m["value_high"]
        again = game_from([tiles[:14], tiles[14:]], starter=0, hand_size=14, target_score=1000)
        again.step(m["action"])
        while not again.over and again.hand_index == 0:
            again.step(greedy.act(again.view(again.current_player)))
        assert m["value"] == zero_sum(again.scores)[0]


def test_the_win_probability_appears_when_the_game_can_end():
    near = Game(Rules.make(num_players=2, target_score=15), 7)
    view = near.view(near.current_player)
    result = analyze(view, "greedy", worlds=40, seed=2)
    assert any(m["win"] is not None for m in result["moves"])
    for m in result["moves"]:
        if m["win"] is not None:
            assert 0.0 <= m["win_low"] <= m["win"] <= m["win_high"] <= 1.0
            if m["points"] >= 15:
                assert m["win"] == 1.0, "a move that reaches the target wins in every world"


def test_bad_arguments_are_clear_errors():
    _, view = midgame_view()
    for worlds in (0, 5000, 2.5):
        with pytest.raises(ValueError, match="worlds must be an integer"):
            analyze(view, worlds=worlds)
    game, _ = midgame_view()
    waiting = game.view((game.current_player + 1) % 2)
    with pytest.raises(ValueError, match="not its turn"):
        analyze(waiting)


def test_the_cli_reads_a_record_or_a_json_position(tmp_path):
    records = tmp_path / "g.jsonl"
    assert run_cli("simulate", "--games", "1", "--seed", "2", "--records", records).returncode == 0
    out = run_cli("analyze", records, "--hand", "1", "--move", "3", "--worlds", "30", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["worlds"] == 30 and result["moves"]
    text = run_cli("analyze", records, "--hand", "1", "--move", "3", "--worlds", "30")
    assert text.returncode == 0 and "95% interval" in text.stdout
    position = tmp_path / "p.json"
    position.write_text(json.dumps({"rules": {"num_players": 2}, "seat": 0, "hand": [[0, 0], [0, 1], [1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6], [0, 6]], "history": []}))
    weighed = run_cli("analyze", records, "--hand", "1", "--move", "5", "--worlds", "30", "--belief", "allfives_2p")
    assert weighed.returncode == 0 and "weighted by allfives_2p" in weighed.stdout, weighed.stderr
    lead = run_cli("analyze", "--position", position, "--worlds", "20", "--json")
    assert lead.returncode == 0, lead.stderr
    assert len(json.loads(lead.stdout.strip().splitlines()[-1])["moves"]) == 9
    for args, message in [
        ((records, "--hand", "99"), "--hand 99: the game has"),
        ((records, "--move", "999"), "--move 999: hand 1 has"),
        ((records, "--worlds", "0"), "--worlds must be in 1..2000"),
        ((records, "--policy", "grandmaster"), "--policy: unknown agent"),
        ((records, "--belief", "allfives_4p"), "was trained for 4 players in partnerships"),
        ((records, "--belief", tmp_path / "none.npz"), "not found"),
        (("--position", tmp_path / "missing.json"), "cannot read"),
    ]:
        bad = run_cli("analyze", *args)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)


def test_weighted_worlds_are_a_weighted_mean_over_the_same_worlds():
    from allfives_agents import analysis
    from allfives_agents.search.inference import PlayEvidence

    game, view = midgame_view(moves=7)
    assert len(PlayEvidence(view)), "the position has other seats' choices to weigh by"
    plain = analyze(view, "greedy", worlds=50, seed=4)
    weighed = analyze(view, "greedy", worlds=50, seed=4, belief="allfives_2p")
    assert weighed["belief"] == "allfives_2p" and 1 <= weighed["effective_worlds"] < 50
    assert {m["action"] for m in weighed["moves"]} == {m["action"] for m in plain["moves"]}
    # the same worlds, other weights: some value moves, and the intervals widen with fewer effective worlds
    by_action = {m["action"]: m for m in plain["moves"]}
    assert any(m["value"] != by_action[m["action"]]["value"] for m in weighed["moves"])
    width = lambda m: m["value_high"] - m["value_low"]  # noqa: E731
    assert sum(map(width, weighed["moves"])) > sum(map(width, plain["moves"]))
    assert "weighted by allfives_2p" in format_analysis(weighed)
    # the weighted mean and interval themselves
    mean, half = analysis._weighted_mean([0.0, 10.0, 10.0], [2.0, 1.0, 1.0], 16 / 6)
    assert mean == pytest.approx(5.0) and half == pytest.approx(1.96 * (25 * (16 / 6) / (16 / 6 - 1) / (16 / 6)) ** 0.5)
    equal, equal_half = analysis._weighted_mean([1.0, 2.0, 4.0], [1.0] * 3, 3)
    assert equal == pytest.approx(7 / 3) and equal_half == pytest.approx(1.96 * ((1 / 3 * ((4 / 3) ** 2 + (1 / 3) ** 2 + (5 / 3) ** 2) * 1.5) / 3) ** 0.5)


def test_with_nothing_to_weigh_by_the_analysis_is_unchanged():
    position = game_from([["5-5", "0-1", "1-2"], ["2-2", "3-4", "0-6"]], boneyard=["1-6"], starter=0, boneyard_reserve=0).view(0)
    plain = analyze(position, "greedy", worlds=20, seed=1)
    weighed = analyze(position, "greedy", worlds=20, seed=1, belief="allfives_2p")
    assert weighed["moves"] == plain["moves"] and weighed["effective_worlds"] == 20

