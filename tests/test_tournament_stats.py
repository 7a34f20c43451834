"""Tournament statistics against hand computations: Wilson intervals, Elo fits, pairing tables from games."""

import math

import pytest

from allfives_agents.tournament.stats import GameResult, fit_elo, summarize, wilson_interval


def test_wilson_7_of_10_by_hand():
    # p = 0.7, n = 10, z = 1.959964, z² = 3.8414588: z²/n = 0.3841459, denominator 1.3841459,
    # centre (0.7 + 0.1920729) / 1.3841459 = 0.6444934,
    # half 1.959964 / 1.3841459 * sqrt(0.7 * 0.3 / 10 + 3.8414588 / 400) = 1.4160 * sqrt(0.0306036) = 0.2477153
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(0.6444934 - 0.2477153, abs=1e-6)
    assert high == pytest.approx(0.6444934 + 0.2477153, abs=1e-6)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)


def test_wilson_0_of_5_by_hand():
    # p = 0: centre = half = (z²/10) / (1 + z²/5) = 0.3841459 / 1.7682918 = 0.2172412
    low, high = wilson_interval(0, 5)
    assert low == 0.0
    assert high == pytest.approx(2 * 0.2172412, abs=1e-6)


def test_wilson_is_symmetric_takes_half_wins_and_handles_no_games():
    low, high = wilson_interval(10, 10)
    assert (1 - high, 1 - low) == pytest.approx(wilson_interval(0, 10))
    assert wilson_interval(5, 10) == pytest.approx((1 - wilson_interval(5, 10)[1], 1 - wilson_interval(5, 10)[0]))
    assert wilson_interval(2.5, 5)[0] < 0.5 < wilson_interval(2.5, 5)[1]
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(6, 5)


def test_elo_two_agents_matches_the_closed_form():
    # no prior: P(a beats b) = w / (w + l) at the maximum, so Ra - Rb = 400 log10(w / l)
    fit = fit_elo([[0, 7], [3, 0]], [[0, 10], [10, 0]], prior_games=0)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(7 / 3), abs=1e-6)
    assert sum(fit.ratings) / 2 == pytest.approx(1500)
    # its standard error: var(theta_a - theta_b) = 1 / (n p (1 - p)), each centred rating carries half of it
    p = 0.7
    assert fit.errors[0] == pytest.approx(400 / math.log(10) / 2 / math.sqrt(10 * p * (1 - p)), rel=1e-6)
    # draws count half: 5 wins, 2 draws, 3 losses -> 6 : 4
    fit = fit_elo([[0, 6], [4, 0]], [[0, 10], [10, 0]], prior_games=0)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(6 / 4), abs=1e-6)


def test_elo_maximum_likelihood_equations_hold_for_three_agents():
    scores = [[0, 30, 45], [20, 0, 33], [5, 17, 0]]
    counts = [[0, 50, 50], [50, 0, 50], [50, 50, 0]]
    ratings = fit_elo(scores, counts, prior_games=0).ratings
    for i in range(3):
        expected = sum(
            counts[i][j] / (1 + 10 ** ((ratings[j] - ratings[i]) / 400)) for j in range(3) if j != i
        )
        assert expected == pytest.approx(sum(scores[i]), abs=1e-6)
    assert ratings[0] > ratings[1] > ratings[2]


def test_elo_prior_keeps_unbeaten_agents_finite_and_shrinks():
    fit = fit_elo([[0, 10], [0, 0]], [[0, 10], [10, 0]], prior_games=1)
    assert all(math.isfinite(r) for r in fit.ratings)
    assert fit.ratings[0] > fit.ratings[1] and sum(fit.ratings) / 2 == pytest.approx(1500)
    # the prior pulls towards equal ratings: less spread than the plain estimate
    plain = fit_elo([[0, 7], [3, 0]], [[0, 10], [10, 0]], prior_games=0).ratings
    shrunk = fit_elo([[0, 7], [3, 0]], [[0, 10], [10, 0]], prior_games=1).ratings
    assert 0 < shrunk[0] - shrunk[1] < plain[0] - plain[1]
    with pytest.raises(ValueError, match="infinite"):
        fit_elo([[0, 10], [0, 0]], [[0, 10], [10, 0]], prior_games=0)


def test_elo_recovers_known_ratings_quickly():
    true = [0, 200, 400, 800]
    n = 100_000
    scores = [[0.0] * 4 for _ in true]
    counts = [[0.0] * 4 for _ in true]
    for i in range(4):
        for j in range(4):
            if i != j:
                counts[i][j] = n
                scores[i][j] = n / (1 + 10 ** ((true[j] - true[i]) / 400))
    ratings = fit_elo(scores, counts).ratings
    assert [r - ratings[0] for r in ratings] == pytest.approx(true, abs=0.5)


def R(seating, scores, winner, hands=3, pairing=0, game=0):
    return GameResult(pairing, game, 0, tuple(seating), tuple(scores), winner, hands)


def test_summarize_two_player_games_by_hand():
    names = ["x", "y"]
    results = [R((0, 1), (250, 100), 0, hands=5), R((1, 0), (260, 40), 0, hands=4), R((0, 1), (90, 255), 1, hands=6)]
    pairings, agents, ratings = summarize(results, names, side_of=(0, 1))
    (p,) = pairings
    assert (p["a"], p["b"], p["games"], p["a_wins"], p["b_wins"], p["draws"]) == ("x", "y", 3, 1, 2, 0)
    assert p["a_win_rate"] == pytest.approx(1 / 3)
    assert (p["ci_low"], p["ci_high"]) == pytest.approx(wilson_interval(1, 3))
    # x scored 250, 40, 90; y scored 100, 260, 255
    assert p["mean_score_diff"] == pytest.approx(((250 - 100) + (40 - 260) + (90 - 255)) / 3)
    assert p["a_points_per_hand"] == pytest.approx((250 + 40 + 90) / 15)
    assert p["b_points_per_hand"] == pytest.approx((100 + 260 + 255) / 15)
    x, y = agents
    assert (x["games"], x["wins"], y["games"], y["wins"]) == (3, 1, 3, 2)
    assert list(ratings) == ["y", "x"] and y["rank"] == 1 and x["rank"] == 2


def test_summarize_partnership_games_count_each_game_once():
    side_of = (0, 1, 0, 1)
    results = [R((0, 1, 0, 1), (200, 150), 0), R((1, 0, 1, 0), (120, 210), 1)]
    (p,), agents, _ = summarize(results, ["x", "y"], side_of)
    assert (p["games"], p["a_wins"], p["b_wins"]) == (2, 2, 0)
    assert p["mean_score_diff"] == pytest.approx(((200 - 150) + (210 - 120)) / 2)
    assert agents[0]["wins"] == 2 and agents[0]["games"] == 2


def test_summarize_cut_throat_compares_finishing_order_with_draws():
    # seats 0, 1, 2 are agents x, y, z; z wins; x and y tie on 100
    results = [R((0, 1, 2), (100, 100, 200), 2)]
    pairings, agents, _ = summarize(results, ["x", "y", "z"], (0, 1, 2))
    by_pair = {(p["a"], p["b"]): p for p in pairings}
    assert by_pair["x", "y"]["draws"] == 1 and by_pair["x", "y"]["a_win_rate"] == 0.5
    assert by_pair["x", "z"]["b_wins"] == 1 and by_pair["y", "z"]["b_wins"] == 1
    assert [a["wins"] for a in agents] == [0, 0, 1]


def test_summarize_padded_group_counts_one_meeting_per_seat():
    # x holds seats 0 and 2: it meets y twice in the game
    results = [R((0, 1, 0), (150, 100, 50), None)]
    (p,), agents, _ = summarize(results, ["x", "y"], (0, 1, 2))
    assert (p["games"], p["a_wins"], p["b_wins"]) == (2, 1, 1)
    assert p["mean_score_diff"] == pytest.approx(((150 - 100) + (50 - 100)) / 2)
    assert agents[0]["games"] == 1 and agents[1]["games"] == 1
