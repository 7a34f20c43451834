"""Inference from play (``allfives_agents.search.inference``): the hands rebuilt at each past choice, the weights, and
the search that samples its worlds by them (``ismcts:belief=policy``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from allfives_agents.nets.action_features import action_features, pair_features
from allfives_agents.search.belief import sample_hidden
from allfives_agents.expert import ExpertAgent
from allfives_agents.search.inference import PlayEvidence
from allfives_agents.search.ismcts import load_policy
from allfives_agents import make_agent
from allfives_env.engine import Game, Rules
from allfives_env.engine.view import PlayerView
from allfives_env.observation import OBS_VERSION

from helpers import A, T, game_from


def _expert_positions(players: int, seeds, per_game: int | None = None):
    """(game, view of the seat to act, the hands before each event index) along expert games."""
    expert = ExpertAgent()
    for seed in seeds:
        game = Game(Rules.make(num_players=players), seed)
        before: dict[int, list[int]] = {}
        hand_index = 0
        taken = 0
        while not game.over and (per_game is None or taken < per_game):
            if game.hand_index != hand_index:
                hand_index, before = game.hand_index, {}
            view = game.view(game.current_player)
            before[len(game.events)] = list(game.hands)
            yield game, view, before
            taken += 1
            game.step(expert.act(view))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_hands_rebuilt_at_each_choice_are_the_true_ones(players):
    rng = random.Random(0)
    checked = kept = 0
    for game, view, before in _expert_positions(players, range(8)):
        evidence = PlayEvidence(view)
        for choice, hand in zip(evidence.choices, evidence.hands_at(list(game.hands), rng)):
            assert choice.seat != view.seat
            assert hand.bit_count() == choice.view.tile_counts[choice.seat]
            assert choice.action in choice.view._layout.actions_for(hand)
            if evidence.kept[choice.seat]:
                kept += 1  # the kept draws' tiles are guessed: only the count is exact
                continue
            assert hand == before[choice.view._num_events][choice.seat]
            checked += 1
    assert checked > 200 and kept > 0


def test_the_true_world_outweighs_most_uniformly_sampled_worlds():
    policy = load_policy("allfives_2p")
    rng = random.Random(1)
    shares = []
    for game, view, _ in _expert_positions(2, range(6), per_game=40):
        evidence = PlayEvidence(view)
        if len(view.legal_actions) < 2 or len(evidence) < 2:
            continue
        worlds = [sample_hidden(view, rng)[0] for _ in range(60)]
        logw = evidence.log_weights(worlds + [list(game.hands)], policy, rng)
        true, pool = logw[-1], logw[:-1]
        shares.append(np.mean(pool > true) + 0.5 * np.mean(pool == true))
    # a uniform belief puts the true world in the middle (0.5)
    assert len(shares) > 40 and np.mean(shares) < 0.4


MINE = ["5-5", "0-1", "1-2", "2-2", "3-4", "0-6", "1-6", "2-6", "3-6"]
#: the tiles neither in MINE nor the opponent's first move (4-5)
REST = [t for t in ("0-0", "0-2", "0-3", "0-4", "0-5", "1-1", "1-3", "1-4", "1-5", "2-3", "2-4", "2-5", "3-3", "3-5", "4-4", "4-6", "5-6", "6-6")]


def _two_games_differing_in_hidden_tiles():
    """I lead 5-5 (10 points); the opponent lays 4-5 on it (14: nothing); now I am to play. The
    games differ only in the opponent's other tiles and the boneyard."""
    games = []
    for order in (0, 1):
        rest = REST[:]
        random.Random(order).shuffle(rest)
        game = game_from([MINE, ["4-5"] + rest[:8]], boneyard=rest[8:], starter=0)
        game.step(A("5-5", "lead"))
        game.step(A("4-5", "west"))
        games.append(game)
    assert games[0].hands[1] != games[1].hands[1]
    return games


def test_evidence_reads_only_the_view():
    policy = load_policy("allfives_2p")
    a, b = (game.view(0) for game in _two_games_differing_in_hidden_tiles())
    assert a.history == b.history and a.hand == b.hand
    ea, eb = PlayEvidence(a), PlayEvidence(b)
    assert [(c.seat, c.action) for c in ea.choices] == [(c.seat, c.action) for c in eb.choices] == [(1, A("4-5", "west"))]
    worlds = [sample_hidden(a, random.Random(2))[0] for _ in range(20)]
    np.testing.assert_array_equal(ea.log_weights(worlds, policy, random.Random(3)), eb.log_weights(worlds, policy, random.Random(3)))


def test_search_with_inference_never_sees_hidden_tiles_and_repeats_for_a_seed():
    choices = set()
    for game in _two_games_differing_in_hidden_tiles():
        for _ in range(2):
            agent = make_agent("ismcts:iters=40,policy=allfives_2p,belief=policy,worlds=30", seed=5)
            choices.add(agent.act(game.view(0)))
    assert len(choices) == 1


def test_a_world_in_which_the_choice_passed_up_points_weighs_less():
    policy = load_policy("allfives_2p")
    view = _two_games_differing_in_hidden_tiles()[0].view(0)
    evidence = PlayEvidence(view)
    # the opponent laid 4-5 for nothing; holding 0-5 it could have scored 10 (0 + the spinner's 10)
    others = ["0-0", "1-1", "3-3", "6-6", "1-3", "0-3", "2-4"]
    with_five = sum(1 << T(t) for t in others + ["0-5"])
    without = sum(1 << T(t) for t in others + ["4-4"])
    logw = evidence.log_weights([[view.hand, with_five], [view.hand, without]], policy, random.Random(0))
    assert np.all(np.isfinite(logw)) and np.all(logw <= 0)
    assert logw[1] > logw[0] + np.log(2)


def test_belief_policy_needs_a_network():
    with pytest.raises(ValueError, match="belief=policy needs a network"):
        make_agent("ismcts:belief=policy")
    with pytest.raises(ValueError, match="belief"):
        make_agent("ismcts:belief=oracle,policy=allfives_2p")
    for bad in ("0", "1", "1.5"):
        with pytest.raises(ValueError, match="beps"):
            make_agent(f"ismcts:belief=policy,policy=allfives_2p,beps={bad}")
    assert make_agent("ismcts:belief=policy,policy=allfives_2p,beps=0.1,btemp=1").beps == 0.1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pair_features_and_pair_logits_equal_the_dense_ones(players):
    """On observations of real positions (each arm's pip one-hot or none), the lookups of
    ``pair_features`` give exactly the products of ``action_features``, for any action."""
    from allfives_train.parity import sample_observations

    policy = load_policy("allfives_2p")
    obs, _ = sample_observations(20, Rules.make(num_players=players), seed=players, obs_version=OBS_VERSION)
    rng = np.random.default_rng(0)
    rows, actions = rng.integers(0, 20, 400), rng.integers(0, 112, 400)
    np.testing.assert_array_equal(pair_features(obs, rows, actions), action_features(obs)[rows, actions])
    np.testing.assert_allclose(policy.pair_logits(obs, rows, actions), policy.logits(obs)[rows, actions], atol=2e-5)


@pytest.mark.parametrize("players", [2, 4])
def test_a_choice_view_encodes_each_worlds_hand_as_a_fresh_view_does(players):
    # the choice views work out each move's ends and points once for all worlds; what they give
    # (and so the observation) is what the engine's view gives for that hand
    policy = load_policy(f"allfives_{players}p")
    rng = random.Random(2)
    checked = 0
    for _, view, _ in _expert_positions(players, range(3), per_game=12):
        evidence = PlayEvidence(view)
        worlds = [sample_hidden(view, rng)[0] for _ in range(6)]
        for _, choice in evidence.choice_views(worlds, rng):
            fresh = PlayerView.__new__(PlayerView)
            for name in PlayerView.__slots__:
                setattr(fresh, name, getattr(choice.view, name))
            assert choice.view.ends_after_moves() == fresh.ends_after_moves()
            assert choice.view.move_points() == fresh.move_points()
            np.testing.assert_array_equal(policy.encode(choice.view), policy.encode(fresh))
            checked += 1
    assert checked > 50


def test_an_exact_model_of_play_weighs_each_choice_by_whether_the_model_made_it():
    expert, eps = ExpertAgent(), 0.05
    view = _two_games_differing_in_hidden_tiles()[0].view(0)
    evidence = PlayEvidence(view)
    choice = evidence.choices[0]
    worlds = [[view.hand, sum(1 << T(t) for t in hand)] for hand in (REST[:8], REST[8:16], REST[4:12])]
    logw = evidence.agent_log_weights(worlds, expert, random.Random(0), eps)
    for w, c in evidence.choice_views(worlds, random.Random(0)):
        moves = len(c.view.legal_actions)
        made = expert.act(c.view) == choice.action
        assert logw[w] == pytest.approx(np.log((1 - eps) * made + eps / moves))


@pytest.mark.parametrize("seats", [None, {1, 3}])
def test_an_exact_models_weights_are_worked_out_once_per_hand_and_are_the_same(seats):
    """``agent_log_weights`` asks the model once per (choice, hand then); the weights are those of
    asking it in every world."""
    expert = ExpertAgent()
    checked = 0
    for _, view, _ in _expert_positions(4, range(3), per_game=30):
        evidence = PlayEvidence(view)
        if view.seat != 0 or len(evidence) < 3:
            continue
        worlds = [sample_hidden(view, random.Random(k))[0] for k in range(150)]
        asked = []
        act = expert.act
        counting = type("Counting", (), {"act": lambda self, v: asked.append(1) or act(v)})()
        logw = evidence.agent_log_weights(worlds, counting, random.Random(2), 0.05, seats)
        every = np.zeros(len(worlds))
        views = 0
        for w, c in evidence.choice_views(worlds, random.Random(2), seats):
            every[w] += np.log(0.95 * (act(c.view) == c.action) + 0.05 / len(c.view.legal_actions))
            views += 1
        np.testing.assert_allclose(logw, every)
        assert 0 < len(asked) < views
        checked += 1
    assert checked >= 3


def test_the_exact_model_puts_the_true_world_above_the_network():
    policy, expert = load_policy("allfives_2p"), ExpertAgent()
    rng = random.Random(1)
    by_network, by_expert = [], []
    for game, view, _ in _expert_positions(2, range(6), per_game=40):
        evidence = PlayEvidence(view)
        if len(view.legal_actions) < 2 or len(evidence) < 2:
            continue
        worlds = [sample_hidden(view, rng)[0] for _ in range(60)] + [list(game.hands)]
        for out, logw in ((by_network, evidence.log_weights(worlds, policy, rng)), (by_expert, evidence.agent_log_weights(worlds, expert, rng))):
            out.append(np.mean(logw[:-1] > logw[-1]) + 0.5 * np.mean(logw[:-1] == logw[-1]))
    # these are expert games: the expert is the exact model of the player, and the true world is
    # never ruled out by it (it made every choice), so fewer sampled worlds outweigh it
    assert len(by_expert) > 40 and np.mean(by_expert) < np.mean(by_network) < 0.4


def test_belief_expert_needs_no_network_and_never_sees_hidden_tiles():
    choices = set()
    for game in _two_games_differing_in_hidden_tiles():
        for _ in range(2):
            agent = make_agent("ismcts:iters=40,belief=expert,worlds=30", seed=5)
            choices.add(agent.act(game.view(0)))
    assert len(choices) == 1


def test_bpolicy_is_the_model_of_play_and_the_prior_stays_policy():
    view = _two_games_differing_in_hidden_tiles()[0].view(0)
    plain = make_agent("ismcts:iters=20,policy=allfives_2p,belief=policy,worlds=20")
    other = make_agent("ismcts:iters=20,policy=allfives_2p,belief=policy,worlds=20,bpolicy=allfives_3p")
    assert plain.play_model is plain.policy and other.play_model is not other.policy
    assert other.prior(view) == plain.prior(view)
    worlds = [sample_hidden(view, random.Random(2))[0] for _ in range(20)]
    evidence = PlayEvidence(view)
    assert not np.array_equal(evidence.log_weights(worlds, plain.play_model, random.Random(3)), evidence.log_weights(worlds, other.play_model, random.Random(3)))
    with pytest.raises(ValueError, match="bpolicy=allfives_2p needs belief=policy; with belief=uniform it would be ignored"):
        make_agent("ismcts:policy=allfives_2p,bpolicy=allfives_2p")


def test_a_model_of_play_for_other_players_is_refused_where_policies_are():
    from allfives_agents.nets.policy import check_policy_players

    agent = make_agent("ismcts:iters=20,policy=allfives_2p,belief=policy,bpolicy=allfives_4p")
    with pytest.raises(ValueError, match="trained for 4 players in partnerships"):
        check_policy_players(agent, Rules.make(num_players=2))
    check_policy_players(make_agent("ismcts:iters=20,policy=allfives_2p,belief=policy,bpolicy=allfives_2p"), Rules.make(num_players=2))
