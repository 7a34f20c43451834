"""A fitted model of a partner's play (``ismcts:belief=expert,bpartner=FILE``): its chances of each
move (``allfives_agents.search.play_fit.PlayModel``), the partner's choices weighing the worlds, and ``opp=all``
playing the partner by it."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from allfives_agents.expert import ExpertAgent
from allfives_agents.search.inference import PlayEvidence
from allfives_agents.search.play_fit import Choices, Fit, PlayModelError, load_play_model, log_loss, save_model
from allfives_agents import make_agent
from allfives_env.engine import Deal, Game, Rules
from allfives_env.engine.tiles import mask_tiles

ODD = {"points": 1.0, "threat": 0.2, "partner": 0.5, "domino": 1.0, "heavy": 0.4, "variety": 0.5, "mobility": 0.8, "double": 3.0}


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "partner.json"
    save_model(path, Fit(ODD, 0.7), player="someone")
    return path


def _team_position(min_partner_choices: int = 1):
    """A 4-player position of seat 0, expert playing every seat, after its partner (seat 2) chose
    between two or more moves without having drawn and kept a tile (so its hands then do not
    depend on the seed)."""
    expert = ExpertAgent()
    for seed in range(200):
        game = Game(Rules.make(num_players=4), seed)
        while not game.over and game.hand_index == 0:
            view = game.view(game.current_player)
            if view.seat == 0 and len(view.legal_actions) >= 2:
                evidence = PlayEvidence(view)
                partner = [c for c in evidence.choices if c.seat == 2]
                if len(partner) >= min_partner_choices and not evidence.kept[2] and {c.seat for c in evidence.choices} & {1, 3}:
                    return view, evidence
            game.step(expert.act(view))
    raise AssertionError("no such position in 200 games")


def test_a_models_chances_are_the_fits_softmax_and_its_best_move_is_experts(model_file):
    model = load_play_model(model_file)
    expert = ExpertAgent(**ODD)
    choices, chosen = Choices(), []
    game = Game(Rules.make(num_players=4), 1)
    while not game.over and game.hand_index == 0:  # the first hand: no move reaches the target
        view = game.view(game.current_player)
        action = expert.act(view)
        if len(view.legal_actions) >= 2:
            p = model.chances(view)
            assert p.shape == (len(view.legal_actions),) and math.isclose(p.sum(), 1.0) and (p > 0).all()
            assert view.legal_actions[int(np.argmax(p))] == action
            choices.add(view, action)
            chosen.append(p[view.legal_actions.index(action)])
        game.step(action)
    assert len(chosen) >= 5
    # the chances are the conditional logit the fit maximises: the same log loss as the fit's own
    assert math.isclose(log_loss(choices, Fit(ODD, 0.7)), -np.mean(np.log(chosen)), rel_tol=1e-9)


def test_the_partners_choices_weigh_the_worlds_by_the_models_chances(model_file):
    view, evidence = _team_position()
    base = "ismcts:iters=40,belief=expert,worlds=60"
    without = make_agent(base, seed=3)
    with_partner = make_agent(f"{base},bpartner={model_file}", seed=3)
    pool_a, logw_a = without.belief_pool(view)
    pool_b, logw_b = with_partner.belief_pool(view)
    assert pool_a == pool_b  # the same worlds: only their weights change
    model = load_play_model(model_file)

    def partner_chance(choice_view, action):
        return float(model.chances(choice_view)[choice_view.legal_actions.index(action)])

    worlds = [hands for hands, _ in pool_a]
    partner_terms = evidence.model_log_weights(worlds, partner_chance, random.Random(0), 0.02, {2})
    np.testing.assert_allclose(logw_b - logw_a, partner_terms, atol=1e-12)
    assert (partner_terms <= 0).all() and np.ptp(partner_terms) > 0  # the partner's choices tell worlds apart


def test_opp_all_plays_the_partner_by_its_model_and_the_opponents_by_bweights(model_file, monkeypatch):
    game = Game(seed=8, num_players=4)
    view = game.view(game.current_player)
    side_of = view.rules.side_of
    agent = make_agent(f"ismcts:iters=60,belief=expert,opp=all,stop=full,bpartner={model_file}", seed=1)
    calls = {"partner": set(), "other": set()}
    for key, who in (("partner", agent.partner_model.agent), ("other", agent.play_agent)):
        act = who.act
        monkeypatch.setattr(who, "act", lambda v, act=act, key=key: calls[key].add(v.seat) or act(v))
    agent.search(view)
    assert calls["partner"] == {s for s in range(4) if s != view.seat and side_of[s] == side_of[view.seat]}
    assert calls["other"] == {s for s in range(4) if side_of[s] != side_of[view.seat]}


def _two_team_games_differing_in_hidden_tiles():
    """Two 4-player games at the same position for seat 0 (the same moves played, after a choice of
    its partner), dealt alike but for one unplayed tile swapped between seats 1 and 3."""
    expert = ExpertAgent()
    rules = Rules.make(num_players=4)
    for seed in range(200):
        game = Game(rules, seed)
        hands = [mask_tiles(h) for h in game.hands]
        boneyard, starter, moves = list(game.boneyard), game.current_player, []
        while not game.over and len(game.events) == len(moves):  # no draw or pass yet
            view = game.view(game.current_player)
            if view.seat == 0 and len(moves) >= 4 and len(view.legal_actions) >= 2 and any(c.seat == 2 for c in PlayEvidence(view).choices):
                left = [[t for t in hands[s] if game.hands[s] >> t & 1] for s in (1, 3)]
                swapped = [list(h) for h in hands]
                a, b = left[0][0], left[1][0]
                swapped[1][swapped[1].index(a)], swapped[3][swapped[3].index(b)] = b, a
                other = Game(rules, seed, deals=[Deal(tuple(map(tuple, swapped)), tuple(boneyard), starter)])
                for move in moves:
                    other.step(move)
                if len(other.events) == len(moves) and other.current_player == 0:
                    return game, other
                break
            action = expert.act(view)
            moves.append(action)
            game.step(action)
    raise AssertionError("no such position in 200 games")


def test_a_partner_model_never_sees_hidden_tiles_and_repeats_for_a_seed(model_file):
    games = _two_team_games_differing_in_hidden_tiles()
    a, b = (game.view(0) for game in games)
    assert a.history == b.history and a.hand == b.hand and games[0].hands != games[1].hands
    spec = f"ismcts:iters=40,belief=expert,worlds=40,opp=model,bpartner={model_file}"
    assert len({make_agent(spec, seed=5).act(view) for view in (a, b, a)}) == 1
    pools = [make_agent(spec, seed=5).belief_pool(view) for view in (a, b)]
    assert pools[0][0] == pools[1][0]
    np.testing.assert_array_equal(pools[0][1], pools[1][1])


def test_bad_partner_models_are_named(model_file, tmp_path):
    with pytest.raises(ValueError, match="bpartner=.* needs belief=expert; with belief=uniform it would be ignored"):
        make_agent(f"ismcts:bpartner={model_file}")
    old = tmp_path / "old.json"
    data = json.loads(model_file.read_text())
    del data["scale"]
    old.write_text(json.dumps(data))
    with pytest.raises(PlayModelError, match="old.json has no scale.*fit it again with allfives fit-play"):
        make_agent(f"ismcts:belief=expert,bpartner={old}")
    make_agent(f"ismcts:belief=expert,bweights={old}")  # as bweights (its best move only) it needs none
    data["scale"] = -1
    old.write_text(json.dumps(data))
    with pytest.raises(PlayModelError, match="scale must be a positive number, got -1"):
        make_agent(f"ismcts:belief=expert,bpartner={old}")
    with pytest.raises(ValueError, match="bpartner file not found: gone.json"):
        from allfives_agents.tournament import check_specs

        check_specs(["ismcts:belief=expert,bpartner=gone.json"])
