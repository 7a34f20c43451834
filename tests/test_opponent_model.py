"""``ismcts:opp=model``: the other sides play the belief's model of play in the tree and the rollouts
(``opp=all``: a partner too)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from allfives_agents.search.belief import determinize, sample_hidden
from allfives_agents.expert import ExpertAgent
from allfives_agents.greedy import greedy_action
from allfives_agents.search.inference import PlayEvidence
from allfives_agents import make_agent
from allfives_env.engine import Game

from test_inference import _two_games_differing_in_hidden_tiles


def _nothing_hidden():
    """A 2-player position where the boneyard is empty, so every world is the true one: seat 0 to
    play with two or more moves, the opponent holding tiles."""
    for seed in range(100):
        game = Game(seed=seed, num_players=2)
        while not game.over:
            view = game.view(game.current_player)
            if view.boneyard_size == 0 and view.seat == 0 and len(view.legal_actions) >= 2 and view.tile_counts[1] >= 2:
                return game
            game.step(greedy_action(view.legal_actions, view.move_points()))
    raise AssertionError("no such position in 100 games")


def _replies(spec: str):
    """Per root move of the search from ``_nothing_hidden()``: the tree's replies of the opponent and expert's reply."""
    game = _nothing_hidden()
    view = game.view(0)
    root = make_agent(spec, seed=1).search(view)
    out = []
    for action, child in root.children.items():
        world = determinize(view, random.Random(0))
        assert world.hands == game.hands
        world.step(action)
        if not world.over and world.current_player == 1:
            out.append((sorted(child.children), ExpertAgent().act(world.view(1)), world.legal_actions(), child.visits))
    return out


def test_the_other_side_plays_the_models_move_in_the_tree():
    modelled = _replies("ismcts:iters=300,belief=expert,opp=model,stop=full")
    assert modelled and all(tree == [expert] for tree, expert, _, visits in modelled if visits > 1)
    # searched (the default), the opponent's node branches on its moves: the check above can fail
    searched = _replies("ismcts:iters=300,belief=expert,stop=full")
    assert any(len(tree) > 1 for tree, _, moves, _ in searched if len(moves) > 1)


def test_a_network_model_of_play_replies_with_its_legal_moves():
    replies = [(tree, moves) for tree, _, moves, visits in _replies("ismcts:iters=100,policy=allfives_2p,belief=policy,opp=model,select=bias,cpuct=1,stop=full") if visits > 1]
    assert replies and all(tree and set(tree) <= set(moves) for tree, moves in replies)


@pytest.mark.parametrize("spec", ["ismcts:iters=40,belief=expert,worlds=30,opp=model", "ismcts:iters=30,policy=allfives_2p,belief=policy,worlds=20,opp=model"])
def test_an_opponent_model_never_sees_hidden_tiles_and_repeats_for_a_seed(spec):
    choices = set()
    for game in _two_games_differing_in_hidden_tiles():
        for _ in range(2):
            choices.add(make_agent(spec, seed=5).act(game.view(0)))
    assert len(choices) == 1


def test_opp_model_needs_a_model_of_play():
    for opp in ("model", "all"):
        with pytest.raises(ValueError, match=f"opp={opp} needs belief=policy|expert; with belief=uniform it would be ignored"):
            make_agent(f"ismcts:opp={opp}")
    with pytest.raises(ValueError, match="option opp='best' must be one of search, model, all"):
        make_agent("ismcts:belief=expert,opp=best")


def test_expert_as_the_model_weighs_the_other_sides_choices_only():
    """In a team game ``belief=expert`` models the opponents; the partner's choices (not expert's) carry no weight."""
    game = Game(seed=3, num_players=4)
    expert = ExpertAgent()
    while len(game.hand_logs) == 0 and len(game.view(0).history) < 9:  # two rounds of the first hand
        game.step(expert.act(game.view(game.current_player)))
    while game.current_player != 0:
        game.step(expert.act(game.view(game.current_player)))
    view = game.view(0)
    evidence = PlayEvidence(view)
    seats = {c.seat for c in evidence.choices}
    assert 2 in seats and seats & {1, 3}
    worlds = [sample_hidden(view, random.Random(k))[0] for k in range(30)]

    def weights(seats):
        return evidence.agent_log_weights(worlds, expert, random.Random(4), 0.02, seats)

    opponents, partner, every = weights({1, 3}), weights({2}), weights(None)
    np.testing.assert_allclose(opponents + partner, every)
    assert opponents.any()
    np.testing.assert_array_equal(weights(set()), np.zeros(len(worlds)))


@pytest.mark.parametrize("opp, played", [("search", False), ("model", True)])
def test_the_model_plays_the_other_side_in_the_rollouts_too(opp, played, monkeypatch):
    game = Game(seed=8, num_players=2)
    view = game.view(game.current_player)  # the lead: no choice of the other side to weigh yet
    agent = make_agent(f"ismcts:iters=50,belief=expert,opp={opp},stop=full", seed=1)
    calls = []
    act = agent.play_agent.act
    monkeypatch.setattr(agent.play_agent, "act", lambda v: calls.append(v.seat) or act(v))  # the shared expert: undone after
    agent.search(view)
    # each of the 50 rollouts plays the rest of the hand: the other side moves several times in each
    assert (len(calls) > 3 * 50) if played else not calls
    assert set(calls) <= {1 - view.seat}


@pytest.mark.parametrize("opp", ["search", "model", "all"])
def test_in_a_team_game_opp_all_models_the_partner_too(opp, monkeypatch):
    """4 players: ``opp=model`` plays the two opponents by the model, ``opp=all`` the partner as well;
    the seat searched is never modelled."""
    game = Game(seed=8, num_players=4)
    view = game.view(game.current_player)
    side_of = view.rules.side_of
    expected = {
        "search": set(),
        "model": {s for s in range(4) if side_of[s] != side_of[view.seat]},
        "all": set(range(4)) - {view.seat},
    }[opp]
    agent = make_agent(f"ismcts:iters=60,belief=expert,opp={opp},stop=full", seed=1)
    calls = []
    act = agent.play_agent.act
    monkeypatch.setattr(agent.play_agent, "act", lambda v: calls.append(v.seat) or act(v))
    agent.search(view)
    assert set(calls) == expected  # in the tree and the rollouts
