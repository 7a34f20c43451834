"""Models of play fitted to records (``allfives_agents.search.play_fit``, ``allfives fit-play``) and their use by ``ismcts``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from allfives_agents.expert import DEFAULT_WEIGHTS, ExpertAgent
from allfives_agents.search.play_fit import TERMS, PlayModelError, agreement, fit, load_model, read_choices
from allfives_agents import make_agent
from allfives_env.engine import Game, Rules

from helpers import run_cli

ODD = "expert:threat=0.2,double=3.0,variety=0.5"


def _views(num_players: int, games: int):
    rules = Rules.make(num_players=num_players)
    expert = ExpertAgent()
    for seed in range(games):
        game = Game(rules, seed)
        while not game.over:
            view = game.view(game.current_player)
            if len(view.legal_actions) >= 2:
                yield view
            game.step(expert.act(view))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_terms_add_up_to_experts_scores(players):
    weights = np.array([DEFAULT_WEIGHTS[k] for k in TERMS])
    expert = ExpertAgent()
    for view in _views(players, 2):
        fixed, rows = expert.terms(view)
        np.testing.assert_allclose(np.array(fixed) + np.array(rows) @ weights, expert.scores(view), rtol=1e-9, atol=1e-9)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Games of an expert with other weights against greedy, and of the usual expert against greedy."""
    folder = tmp_path_factory.mktemp("records")
    for spec in (ODD, "expert"):
        out = folder / spec.partition(":")[0 if spec == "expert" else 2].replace(",", "_")
        result = run_cli("tournament", "--agents", spec, "greedy", "--games", "60", "--seed", "5", "--workers", "1", "--out", out)
        assert result.returncode == 0, result.stderr
    return folder


def test_a_fit_recovers_the_weights_of_the_player_recorded(records):
    choices = read_choices([records / "threat=0.2_double=3.0_variety=0.5" / "games.jsonl"], ODD)
    assert choices.games == 60 and len(choices) > 2000
    train, held = choices.split(0.25, 0)
    model = fit(train)
    weights = model.weights
    assert weights["points"] == 1.0 and model.scale > 0
    # a deterministic player's weights are known only up to the choices they explain: each moved
    # weight moves the right way from expert's, and the fit tells the held-out choices far better
    assert weights["threat"] < 0.4 < 0.7 and weights["double"] > 2.0 > 1.5 and weights["variety"] < 0.9 < 1.2
    assert agreement(held, weights) > 0.95 > agreement(held, DEFAULT_WEIGHTS) + 0.05


def test_fit_play_writes_a_model_that_ismcts_plays_by(records, tmp_path):
    model = tmp_path / "odd.json"
    result = run_cli("fit-play", records / "threat=0.2_double=3.0_variety=0.5" / "games.jsonl", "--player", ODD, "--out", model, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["games"] == 60 and summary["agreement"] > 0.95 and summary["expert_agreement"] < summary["agreement"]
    assert json.loads(model.read_text())["scale"] == summary["scale"] > 0 and 0 < summary["log_loss"] < 0.3  # a near-deterministic player
    agent = make_agent(f"ismcts:iters=20,belief=expert,bweights={model},opp=model", seed=1)
    assert agent.play_agent.weights == load_model(model).weights == json.loads(model.read_text())["weights"]
    view = next(_views(2, 1))
    assert agent.act(view) in view.legal_actions
    # a tournament checks the file like a policy file
    missing = run_cli("tournament", "--agents", f"ismcts:iters=5,belief=expert,bweights={tmp_path / 'none.json'}", "greedy", "--games", "2", "--seed", "1")
    assert missing.returncode == 2 and "none.json" in missing.stderr


def test_bad_records_players_and_model_files_are_named(records, tmp_path):
    games = records / "expert" / "games.jsonl"
    nobody = run_cli("fit-play", games, "--player", "bob", "--out", tmp_path / "m.json")
    assert nobody.returncode == 2 and "no choice of player 'bob'" in nobody.stderr and "players there: expert, greedy" in nobody.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text(games.read_text().splitlines()[0][:-40] + "\n")
    bad = run_cli("fit-play", broken, "--player", "expert", "--out", tmp_path / "m.json")
    assert bad.returncode == 2 and "broken.jsonl" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "m.json").exists()
    holdout = run_cli("fit-play", games, "--player", "expert", "--out", tmp_path / "m.json", "--holdout", "1.5")
    assert holdout.returncode == 2 and "--holdout must be between 0 and 0.9" in holdout.stderr
    for text, problem in (("{", "not a JSON file"), ('{"format": "x"}', "not an allfives-play-model/1 file"),
                          ('{"format": "allfives-play-model/1", "weights": {"greed": 1}}', "no option 'greed'")):
        path = tmp_path / "model.json"
        path.write_text(text)
        with pytest.raises(PlayModelError, match=problem):
            load_model(path)
        with pytest.raises(ValueError, match=problem):
            make_agent(f"ismcts:belief=expert,bweights={path}")
    with pytest.raises(ValueError, match="bweights=m.json needs belief=expert; with belief=uniform it would be ignored"):
        make_agent("ismcts:bweights=m.json")
