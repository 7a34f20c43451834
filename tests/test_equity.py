"""The match equity table (agents/search/equity.py) and ``ismcts:value=equity``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from allfives_agents.search.equity import UNIT, EquityError, MatchEquity, hand_outcomes
from allfives_agents.search.ismcts import ISMCTSAgent
from allfives_env.engine import Game, Rules

HANDS = 300  # a small distribution keeps the tests quick; the shipped default counts more


@pytest.fixture(scope="module")
def table():
    return MatchEquity(Rules.make(), hands=HANDS)


def test_outcomes_are_counted_for_both_sides_alike():
    counts = hand_outcomes(Rules.make(), hands=HANDS)
    assert sum(counts.values()) == 2 * HANDS
    for (ga, gb, ea, eb), n in counts.items():
        assert counts[(gb, ga, eb, ea)] == n
        assert ga >= 0 and gb >= 0 and ea <= 0 and eb <= 0  # subtract: placements score, the end costs


def test_equity_is_fair_at_equal_scores_and_complementary(table):
    assert table.equity(0, 0) == pytest.approx(0.5, abs=1e-4)
    for a, b in [(0, 50), (120, 35), (245, 200), (-40, 10)]:
        assert table.equity(a, b) + table.equity(b, a) == pytest.approx(1.0, abs=1e-4)


def test_equity_grows_with_the_side_s_score_and_falls_with_the_other_s(table):
    grid = np.array([[table.equity(a, b) for b in range(-100, 250, UNIT)] for a in range(-100, 250, UNIT)])
    assert (np.diff(grid, axis=0) >= -1e-6).all()
    assert (np.diff(grid, axis=1) <= 1e-6).all()
    assert table.equity(250, 245) == 1.0 and table.equity(245, 250) == 0.0
    assert table.equity(240, 0) > 0.99 and table.equity(0, 240) < 0.01


def test_equity_matches_games_played_out_from_the_outcome_distribution(table):
    """The value iteration agrees with a direct simulation of its model: hands drawn from the same
    distribution, played from 150-175 until a side reaches the target."""
    counts = hand_outcomes(Rules.make(), hands=HANDS)
    outcomes, weights = list(counts), list(counts.values())
    rng = random.Random(4)
    target, wins, games = 250 // UNIT, 0, 4000
    for _ in range(games):
        a, b = 150 // UNIT, 175 // UNIT
        while True:
            ga, gb, ea, eb = rng.choices(outcomes, weights)[0]
            if a + ga >= target or b + gb >= target:
                wins += 1.0 if b + gb < target else 0.5 if a + ga >= target else 0.0
                break
            a, b = max(a + ga + ea, -target), max(b + gb + eb, -target)
            if a >= target:
                wins += 1
                break
    p = wins / games
    assert abs(table.equity(150, 175) - p) < 3 * (p * (1 - p) / games) ** 0.5 + 1e-3


def test_the_table_is_the_same_for_the_same_seed():
    one = MatchEquity(Rules.make(), hands=100, seed=3)
    two = MatchEquity(Rules.make(), hands=100, seed=3)
    assert np.array_equal(one.table, two.table)


def test_three_sides_have_no_table_and_the_search_says_so():
    with pytest.raises(EquityError, match="two sides"):
        MatchEquity(Rules.make(num_players=3), hands=10)
    game = Game(Rules.make(num_players=3), seed=1)
    agent = ISMCTSAgent(seed=0, iters=5, value="equity")
    while len(game.legal_actions()) < 2:
        game.step(game.legal_actions()[0])
    with pytest.raises(ValueError, match="value=equity: match equity needs two sides"):
        agent.act(game.view(game.current_player))


def test_the_equity_search_plays_legal_moves_reproducibly_in_partnerships():
    rules = Rules.make(num_players=4)
    game = Game(rules, seed=5)
    moves = []
    for _ in range(2):
        game = Game(rules, seed=5)
        agents = [ISMCTSAgent(seed=s, iters=20, value="equity") for s in range(4)]
        played = []
        while not game.over and len(played) < 40:
            view = game.view(game.current_player)
            a = agents[game.current_player].act(view)
            assert a in view.legal_actions
            played.append(a)
            game.step(a)
        moves.append(played)
    assert moves[0] == moves[1]
