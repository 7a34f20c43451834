"""The shipped policies in ``models/``: they load on CPU (zip and ONNX), play a legal move in every
position of a few hundred random games of the rules they were trained for, agree with each other,
and their cards describe them."""

import json
import random
from pathlib import Path

import pytest

from allfives_agents import make_agent
from allfives_agents.nets.policy import read_zip_metadata
from allfives_env.engine import Game, Rules
from allfives_env.observation import OBS_VERSION

MODELS = Path(__file__).resolve().parent.parent / "models"
SHIPPED = {"allfives_2p": dict(num_players=2), "allfives_3p": dict(num_players=3), "allfives_4p": dict(num_players=4, partnerships=True)}
GAMES = {"allfives_2p": 200, "allfives_3p": 120, "allfives_4p": 100}


def card(name):
    return json.loads((MODELS / f"{name}.json").read_text())


@pytest.mark.parametrize("name", SHIPPED)
def test_card_describes_the_shipped_files(name):
    c = card(name)
    assert (MODELS / c["files"]["model"]).is_file() and (MODELS / c["files"]["onnx"]).is_file()
    assert Rules.from_dict(c["rules"]) == Rules.make(**SHIPPED[name])
    meta = read_zip_metadata(str(MODELS / f"{name}.zip"))
    assert meta["rules"] == c["rules"]
    assert meta["obs_version"] == c["obs_version"] == OBS_VERSION, "the shipped policies read the environments' default observation"
    results = {row["opponent"]: row for row in c["evaluation"]["results"]}
    assert set(results) == {"random", "greedy", "expert"}
    for row in results.values():
        assert row["games"] >= 2000
        assert row["ci_low"] <= row["a_win_rate"] <= row["ci_high"]
        assert row["a_win_rate"] == pytest.approx((row["a_wins"] + row["draws"] / 2) / row["games"])  # draws count half
    pairs = {(row["a"], row["b"]) for row in c["evaluation"]["among_baselines"]}
    assert pairs == {("random", "greedy"), ("random", "expert"), ("greedy", "expert")}
    assert c["onnx_parity"]["max_abs_diff"] < 1e-4
    assert c["onnx_parity"]["same_action"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_policies_play_legal_moves_everywhere(name):
    """Random players drive the games; at every decision both forms of the policy are asked too."""
    rules = Rules.make(**SHIPPED[name])
    zip_agent = make_agent(f"ppo:{MODELS / name}.zip")
    onnx_agent = make_agent(f"onnx:{MODELS / name}.onnx")
    asked = disagreements = 0
    for seed in range(GAMES[name]):
        rng = random.Random(seed)
        game = Game(rules, seed, max_hands=40)
        while not game.over:
            view = game.view(game.current_player)
            legal = view.legal_actions
            a, b = zip_agent.act(view), onnx_agent.act(view)
            assert a in legal and b in legal, f"game {seed}: {a}/{b} not in {legal}"
            asked += 1
            disagreements += a != b
            game.step(legal[rng.randrange(len(legal))])
    assert asked > 1000 * rules.num_players
    # float32 ties between two logits may break differently in torch-free numpy and onnxruntime
    assert disagreements <= asked // 1000, f"{disagreements} of {asked} decisions differ"
