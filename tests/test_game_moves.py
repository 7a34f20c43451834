"""``allfives_env.game_moves``: the heuristics' moves straight from an engine ``Game``. ``expert`` and
``greedy`` choose in C exactly what their Python ``act`` chooses from the view, at every decision of
random games of every variant (other weights of expert included); the environments and tournaments
ask ``act_game`` where an opponent has one; clear errors for bad input."""

import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_agents import make_agent
from allfives_agents.expert import DEFAULT_WEIGHTS, ExpertAgent
from allfives_agents.greedy import GreedyAgent
from allfives_env import game_moves
from allfives_env.engine import Game
from allfives_env.single_agent import SingleAgentEnv

from helpers import A, game_from
from test_lookahead import needs_accelerator
from test_observation import VARIANTS

AGENTS = [make_agent("expert"), make_agent("greedy"), make_agent("expert:threat=-0.4,double=0,heavy=2,partner=1.5"),
          make_agent("expert:points=0.5,domino=-1,variety=0,mobility=3")]


@settings(max_examples=60, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 2**32))
def test_c_chooses_the_views_move_at_every_decision(variant, seed, moves):
    """Whole games (several hands, the end of the game included), half the moves random."""
    needs_accelerator()
    rng = random.Random(moves)
    game = Game(seed=seed, max_hands=4, **variant)
    while not game.over:
        seat = game.current_player
        view = game.view(seat)
        for agent in AGENTS:
            assert agent.act_game(game, seat) == agent.act(view), (agent.name, seat, view.legal_actions)
        game.step(rng.choice(view.legal_actions) if rng.random() < 0.5 else AGENTS[0].act(view))


def test_going_out_a_forced_tile_and_reaching_the_target():
    """The last tile of a hand (the domino term), a drawn tile that must be placed, points that win."""
    needs_accelerator()
    game = game_from([["5-5", "0-5"], ["1-5", "2-2"], ["0-1", "3-4"], ["6-6", "2-6"]], starter=0, num_players=4)
    game.step(A("5-5", "lead"))
    seen = 0
    while not game.over and game.hand_index == 0:
        seat = game.current_player
        for agent in AGENTS:
            assert agent.act_game(game, seat) == agent.act(game.view(seat))
        seen += 1
        game.step(game.legal_actions()[-1])
    assert seen >= 4
    near = Game(num_players=2, seed=3, target_score=10)
    while not near.over:
        seat = near.current_player
        for agent in AGENTS:
            assert agent.act_game(near, seat) == agent.act(near.view(seat))
        near.step(AGENTS[1].act(near.view(seat)))


def test_the_state_is_read_not_changed():
    needs_accelerator()
    game = Game(num_players=3, seed=11)
    for _ in range(7):
        game.step(game.legal_actions()[0])
    before = pickle.dumps(game)
    for agent in AGENTS:
        agent.act_game(game, game.current_player)
    assert pickle.dumps(game) == before


def test_bad_input_is_named_and_changes_nothing():
    needs_accelerator()
    game = Game(num_players=2, seed=1)
    idle = 1 - game.current_player
    with pytest.raises(ValueError, match=f"seat {idle} has no move to choose: it is not to act"):
        make_agent("expert").act_game(game, idle)
    with pytest.raises(ValueError, match="has no move to choose"):
        make_agent("greedy").act_game(game, idle)
    fast = game_moves._fast
    seat = game.current_player
    with pytest.raises(ValueError, match="weights must hold the 8 weights"):
        fast.expert_game(game, seat, 1 - seat, -1, 1 << (1 - seat), 250, (1.0, 2.0))
    with pytest.raises(ValueError, match="opponents must be a mask of seats of the game other than seat"):
        fast.expert_game(game, seat, 1 - seat, -1, 1 << seat, 250, tuple(DEFAULT_WEIGHTS.values()))
    with pytest.raises(TypeError, match="takes 7 arguments"):
        fast.expert_game(game, seat)
    with pytest.raises(TypeError, match="greedy_game\\(game, seat\\) takes 2 arguments"):
        fast.greedy_game(game)
    with pytest.raises(ValueError, match="seat"):
        fast.greedy_game(game, 5)
    with pytest.raises((TypeError, AttributeError)):
        fast.greedy_game(object(), 0)
    assert game.legal_actions() and not game.over


def test_a_subclass_that_changes_act_is_asked_through_the_view():
    class Lowest(ExpertAgent):
        def act(self, view):
            return view.legal_actions[0]

    class Last(GreedyAgent):
        def act(self, view):
            return view.legal_actions[-1]

    game = Game(num_players=2, seed=2)
    while not game.over:
        seat = game.current_player
        view = game.view(seat)
        assert Lowest().act_game(game, seat) == view.legal_actions[0]
        assert Last().act_game(game, seat) == view.legal_actions[-1]
        game.step(make_agent("expert").act(view))


def test_without_the_accelerator_the_agents_decide_from_the_view(monkeypatch):
    monkeypatch.setattr(game_moves, "ACCELERATED", False)
    monkeypatch.setattr(game_moves, "_fast", None)
    game = Game(num_players=4, seed=5)
    for _ in range(30):
        if game.over:
            break
        seat = game.current_player
        for agent in AGENTS:
            assert agent.act_game(game, seat) == agent.act(game.view(seat))
        game.step(game.legal_actions()[0])


class _Marked:
    """An opponent whose ``act_game`` plays the highest legal action and whose ``act`` the lowest."""

    name = "marked"

    def __init__(self):
        self.by_game = 0

    def reset(self, seed=None):
        pass

    def act(self, view):
        return view.legal_actions[0]

    def act_game(self, game, seat):
        self.by_game += 1
        return game.legal_actions()[-1]


def test_the_environments_and_tournaments_ask_act_game():
    from allfives_agents.tournament.games import play_game
    from allfives_env.engine import Rules
    from allfives_env.vector import GameVector

    marked = _Marked()
    env = SingleAgentEnv(num_players=2, opponents=marked)
    env.reset(seed=1)
    for _ in range(20):
        _, _, term, trunc, _ = env.step(int(env.action_masks().argmax()))
        if term or trunc:
            break
    assert marked.by_game > 0
    vector_marked = _Marked()
    vector = GameVector([SingleAgentEnv(num_players=2, opponents=vector_marked) for _ in range(3)])
    for i in range(3):
        vector.reset(i, seed=i)
    vector.step([int(m.argmax()) for m in vector.masks])
    assert vector_marked.by_game > 0
    played = _Marked()
    game = play_game(Rules.make(num_players=2), 7, [played, make_agent("greedy")], [1, 2], max_hands=1)
    assert played.by_game > 0 and game.over


@settings(max_examples=20, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32), moves=st.integers(0, 2**32))
def test_a_policy_asked_for_games_chooses_what_it_chooses_from_their_views(variant, seed, moves):
    """``PPOAgent.act_games`` (the engine's observer, no views) against ``act_batch`` of the views
    and ``act`` of each: five random games in step, every decision of each asked in one call."""
    from allfives_agents.models import model_path
    from allfives_agents.nets.policy import PPOAgent

    needs_accelerator()
    rng = random.Random(moves)
    agent = PPOAgent(model_path("allfives_2p", "zip"))
    games = [Game(seed=seed + k, max_hands=2, **variant) for k in range(5)]
    while any(not game.over for game in games):
        asked = [(game, game.current_player) for game in games if not game.over]
        views = [game.view(seat) for game, seat in asked]
        chosen = agent.act_games(asked)
        assert chosen == agent.act_batch(views) == [agent.act(view) for view in views]
        for (game, _), view in zip(asked, views):
            game.step(rng.choice(view.legal_actions))


def test_a_policy_asked_for_a_seat_that_is_not_to_move_says_so():
    from allfives_agents.models import model_path
    from allfives_agents.nets.policy import PPOAgent

    game = Game(seed=3)
    other = (game.current_player + 1) % game.num_players
    with pytest.raises(ValueError, match=f"seat {other} has no move to choose: the game is over or seat {game.current_player} is to move"):
        PPOAgent(model_path("allfives_2p", "zip")).act_games([(game, other)])
