"""Scenario tests of whole hands from explicit deals: draws, passes, blocks, hand ends, partnerships, target."""

import random

import pytest

from allfives_env.engine import DRAW, PASS, PLAY, Game, GameOverError, IllegalMoveError, Rules
from allfives_env.engine.tiles import round_to_five
from helpers import A, T, game_from, make_deal


def kinds(game):
    return [(e[0], e[1]) for e in game.events]


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_players": 5}, "num_players must be 2, 3 or 4"),
        ({"num_players": 1}, "num_players must be 2, 3 or 4"),
        ({"num_players": 2, "hand_size": 15}, "hand_size 15 does not fit"),
        ({"num_players": 4, "hand_size": 8}, "hand_size 8 does not fit"),
        ({"num_players": 2, "hand_size": 0}, "hand_size 0 does not fit"),
        ({"hand_size": "six"}, "hand_size must be one of standard, five, seven_five"),
        ({"hand_end": "muggins"}, "hand_end must be one of subtract, winner_takes"),
        ({"num_players": 3, "partnerships": True}, "partnerships need num_players=4"),
        ({"boneyard_reserve": -1}, "boneyard_reserve must be"),
        ({"boneyard_reserve": 11}, "boneyard_reserve must be"),
        ({"target_score": 0}, "target_score must be a positive integer"),
        ({"target_score": 10**400}, "target_score must be a positive integer up to 100000"),
    ],
)
def test_invalid_options_name_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        Rules.make(**options)


def test_unknown_option_is_named():
    with pytest.raises(ValueError, match="unknown rules option.*'players'"):
        Rules.from_dict({"players": 2})


@pytest.mark.parametrize(
    "players, hand_size, partnerships, tiles, target",
    [
        (2, "standard", False, 9, 250),
        (3, "standard", False, 7, 200),
        (4, "standard", True, 5, 200),
        (2, "five", False, 5, 250),
        (3, "five", False, 5, 200),
        (2, "seven_five", False, 7, 250),
        (3, "seven_five", False, 5, 200),
        (4, "seven_five", True, 5, 200),
        (4, 7, True, 7, 200),
    ],
)
def test_option_defaults(players, hand_size, partnerships, tiles, target):
    rules = Rules.make(num_players=players, hand_size=hand_size)
    assert (rules.tiles_per_hand, rules.partnerships, rules.target_score) == (tiles, partnerships, target)
    game = Game(rules, seed=3)
    assert [h.bit_count() for h in game.hands] == [tiles] * players
    assert len(game.boneyard) == 28 - players * tiles


def test_four_player_cut_throat_has_four_sides():
    rules = Rules.make(num_players=4, partnerships=False)
    assert rules.num_sides == 4 and rules.side_of == (0, 1, 2, 3)
    assert Rules.make(num_players=4).side_of == (0, 1, 0, 1)


@pytest.mark.parametrize("pips, rounded", [(0, 0), (1, 0), (2, 0), (3, 5), (4, 5), (5, 5), (6, 5), (7, 5), (8, 10), (12, 10), (13, 15), (42, 40)])
def test_rounding(pips, rounded):
    assert round_to_five(pips) == rounded


# --------------------------------------------------------------------------- draws and passes
def test_draw_until_playable_then_forced_play_of_that_tile():
    game = game_from([["5-5", "1-2"], ["0-1", "0-2"]], boneyard=["3-4", "6-6", "5-6"], starter=0)
    assert game.step(A("5-5", "lead")) == 10
    assert game.current_player == 1
    assert kinds(game) == [(PLAY, 0), (DRAW, 1), (DRAW, 1), (DRAW, 1)]
    assert [e[2] for e in game.events[1:]] == [T("3-4"), T("6-6"), T("5-6")]
    assert game.forced == T("5-6")
    assert game.legal_actions() == [A("5-6", "west"), A("5-6", "east")], "still chooses the end"
    with pytest.raises(IllegalMoveError, match="must place it"):
        game.step(A("3-4", "west"))
    assert game.missing[1] == 1 << 5, "known not to hold a 5"
    seen_by_0, seen_by_1 = game.view(0), game.view(1)
    assert seen_by_0.tile_counts == (1, 5) and seen_by_0.boneyard_size == 21 and seen_by_0.drawable == 21
    assert [e[2] for e in seen_by_0.history[1:]] == [-1, -1, -1], "other players' draws are hidden"
    assert [e[2] for e in seen_by_1.history[1:]] == [T("3-4"), T("6-6"), T("5-6")]
    assert seen_by_0.missing_pips[1] == 1 << 5 and seen_by_0.legal_actions == []
    assert seen_by_1.legal_actions == game.legal_actions() and seen_by_1.forced_tile == T("5-6")
    game.step(A("5-6", "west"))
    assert game.layout.count == 6 + 10


def test_draw_that_is_immediately_playable_keeps_earlier_knowledge():
    game = game_from([["5-5", "1-2"], ["0-1", "0-2"]], boneyard=["5-6"], starter=0)
    game.missing[1] = 1 << 3
    game.step(A("5-5", "lead"))
    assert game.forced == T("5-6")
    assert game.missing[1] == (1 << 3) | (1 << 5)


def test_reserve_tiles_are_never_drawn_and_player_passes():
    # 2 x 13 dealt, boneyard of 2, both reserved: nothing can be drawn
    hands = [
        ["5-5", "0-0", "0-1", "0-2", "0-3", "0-4", "0-6", "1-1", "1-2", "1-3", "1-4", "1-6", "2-2"],
        ["2-3", "2-4", "2-6", "3-3", "3-4", "3-6", "4-4", "4-6", "6-6", "0-5", "1-5", "2-5", "3-5"],
    ]
    game = game_from(hands, boneyard=["4-5", "5-6"], boneyard_reserve=2)
    assert game.draw_limit == 0
    game.step(A("5-5", "lead"))
    assert game.current_player == 1 and kinds(game) == [(PLAY, 0)]
    game.step(A("0-5", "west"))
    # player 0 holds 0-x tiles: plays; check that nobody ever draws a reserved tile
    rng = random.Random(0)
    while not game.over:
        game.step(rng.choice(game.legal_actions()))
    assert all(e[0] != DRAW for e in game.hand_logs[0].events)


def test_reserve_leaves_last_tiles_undrawable():
    # 2 x 3 dealt, boneyard 22 with a reserve of 20: exactly two tiles can be drawn
    game = game_from([["6-6", "0-1", "0-2"], ["1-1", "1-2", "2-2"]], boneyard=["0-3", "0-4"], boneyard_reserve=20)
    game.step(A("6-6", "lead"))
    # player 1 has no 6: draws the two drawable tiles (no 6 on them) and passes; then player 0
    # cannot play nor draw: blocked
    log = game.hand_logs[0]
    assert [(e[0], e[1]) for e in log.events] == [(PLAY, 0), (DRAW, 1), (DRAW, 1), (PASS, 1), (PASS, 0)]
    assert [e[2] for e in log.events[1:3]] == [T("0-3"), T("0-4")]
    assert log.result["outcome"] == "blocked" and log.result["pips"] == [3, 2 + 3 + 4 + 3 + 4]


BLOCK_HANDS = [["6-6", "0-1", "0-2"], ["1-1", "1-2", "2-2"]]


@pytest.mark.parametrize(
    "hand_end, scores, penalties, bonus",
    [
        # pips 3 -> 5 and 9 -> 10
        ("subtract", [-5, -10], [5, 10], [0, 0]),
        # fewest pips (3) scores the others' rounded total less its own: 10 - 5
        ("winner_takes", [5, 0], [0, 0], [5, 0]),
    ],
)
def test_blocked_hand(hand_end, scores, penalties, bonus):
    game = game_from(BLOCK_HANDS, boneyard_reserve=22, hand_end=hand_end)
    game.step(A("6-6", "lead"))
    log = game.hand_logs[0]
    assert [(e[0], e[1]) for e in log.events] == [(PLAY, 0), (PASS, 1), (PASS, 0)]
    assert log.result["outcome"] == "blocked" and log.result["went_out"] is None
    assert log.result["pips"] == [3, 9]
    assert log.result["penalties"] == penalties and log.result["bonus"] == bonus
    assert game.scores == scores == log.result["scores_after"]
    assert game.hand_index == 1, "the next hand is dealt at once"


def test_blocked_hand_tie_for_fewest_scores_nobody():
    game = game_from([["6-6", "1-2", "0-3"], ["0-0", "0-1", "0-5"]], boneyard_reserve=22, hand_end="winner_takes")
    game.step(A("6-6", "lead"))
    result = game.hand_logs[0].result
    assert result["outcome"] == "blocked" and result["pips"] == [6, 6]
    assert result["bonus"] == [0, 0] and game.scores == [0, 0]


def test_after_a_blocked_hand_the_starter_is_random_from_the_seed():
    starters = set()
    for seed in range(12):
        game = game_from(BLOCK_HANDS, boneyard_reserve=22, seed=seed)
        game.step(A("6-6", "lead"))
        again = game_from(BLOCK_HANDS, boneyard_reserve=22, seed=seed)
        again.step(A("6-6", "lead"))
        assert game.starter == again.starter, "same seed, same starter"
        starters.add(game.starter)
    assert starters == {0, 1}


# --------------------------------------------------------------------------- hand end, starters
DOMINO_HANDS = [["5-5", "5-0"], ["1-1", "2-3"]]


@pytest.mark.parametrize(
    "hand_end, scores, penalties, bonus",
    [
        ("subtract", [20, -5], [0, 5], [0, 0]),  # player 1 holds 7 pips -> 5
        ("winner_takes", [25, 0], [0, 0], [5, 0]),
    ],
)
def test_domino(hand_end, scores, penalties, bonus):
    game = game_from(DOMINO_HANDS, boneyard_reserve=24, hand_end=hand_end)
    assert game.step(A("5-5", "lead")) == 10
    assert kinds(game) == [(PLAY, 0), (PASS, 1)]
    assert game.step(A("5-0", "west")) == 10  # 0 + 10
    result = game.hand_logs[0].result
    assert result["outcome"] == "domino" and result["went_out"] == 0
    assert result["penalties"] == penalties and result["bonus"] == bonus
    assert game.scores == scores


def test_winner_takes_can_reach_the_target_at_hand_end():
    game = game_from(DOMINO_HANDS, boneyard_reserve=24, hand_end="winner_takes", target_score=25)
    game.step(A("5-5", "lead"))
    game.step(A("5-0", "west"))
    assert game.over and game.winner == 0 and game.scores == [25, 0]
    assert game.hand_logs[0].result["outcome"] == "domino"


def test_player_who_went_out_starts_the_next_hand():
    game = game_from(DOMINO_HANDS, boneyard_reserve=24, starter=0, seed=5)
    game.step(A("5-5", "lead"))
    game.step(A("5-0", "west"))
    assert game.hand_index == 1 and game.starter == 0 and game.current_player == 0
    # an explicit deal whose starter is not the player who went out is refused
    bad = make_deal([["6-6", "0-1"], ["1-1", "1-2"]], starter=1)
    with pytest.raises(ValueError, match="starter must be seat 0"):
        g = game_from(DOMINO_HANDS, boneyard_reserve=24, extra_deals=[bad])
        g.step(A("5-5", "lead"))
        g.step(A("5-0", "west"))


def test_went_out_starter_rule_in_random_games():
    rng = random.Random(1)
    for seed in range(40):
        game = Game(seed=seed, num_players=3)
        while not game.over:
            game.step(rng.choice(game.legal_actions()))
        for prev, nxt in zip(game.hand_logs, game.hand_logs[1:]):
            if prev.result["outcome"] == "domino":
                assert nxt.starter == prev.result["went_out"]


# --------------------------------------------------------------------------- partnerships, target
PAIRS_HANDS = [["5-5", "1-1"], ["5-0", "2-2"], ["0-0", "3-3"], ["6-6", "4-4"]]


@pytest.mark.parametrize(
    "partnerships, hand_end, scores",
    [
        # plays: side 0 +10 (5-5), side 1 +10 (5-0), side 0 +10 (0-0); then four passes: blocked
        # pips 2, 4, 6, 20 -> 0, 5, 5, 20
        (True, "subtract", [20 - 0 - 5, 10 - 5 - 20]),
        # side pips 8 and 24: side 0 scores round(24) - round(8) = 25 - 10
        (True, "winner_takes", [35, 10]),
        (False, "subtract", [10, 5, 5, -20]),
        # seat pips 2, 4, 6, 20: seat 0 has the fewest: round(30) - round(2) = 30
        (False, "winner_takes", [40, 10, 10, 0]),
    ],
)
def test_partnership_and_cut_throat_scoring(partnerships, hand_end, scores):
    game = game_from(PAIRS_HANDS, boneyard_reserve=20, partnerships=partnerships, hand_end=hand_end)
    game.step(A("5-5", "lead"))
    game.step(A("5-0", "west"))
    game.step(A("0-0", "west"))
    log = game.hand_logs[0]
    assert [e[0] for e in log.events] == [PLAY, PLAY, PLAY, PASS, PASS, PASS, PASS]
    assert log.result["outcome"] == "blocked"
    assert game.scores == scores


def test_partners_share_points_scored_in_play():
    game = game_from(PAIRS_HANDS, boneyard_reserve=20)
    game.step(A("5-5", "lead"))
    assert game.scores == [10, 0]
    game.step(A("5-0", "west"))
    assert game.scores == [10, 10]
    assert game.step(A("0-0", "west")) == 10
    # the hand then blocks; before its penalties (0 + 5 for side 0, 5 + 20 for side 1) side 0 had 20
    result = game.hand_logs[0].result
    assert result["penalties"] == [0, 5, 5, 20]
    assert result["scores_after"] == [20 - 0 - 5, 10 - 5 - 20]


def test_target_reached_mid_hand_ends_the_game_without_penalties():
    game = game_from(DOMINO_HANDS, boneyard_reserve=24, target_score=10)
    assert game.step(A("5-5", "lead")) == 10
    assert game.over and game.winner == 0 and game.current_player == -1
    result = game.hand_logs[0].result
    assert result["outcome"] == "target" and result["penalties"] == [0, 0] and result["bonus"] == [0, 0]
    assert game.scores == [10, 0] and game.legal_actions() == []
    with pytest.raises(GameOverError):
        game.step(A("5-0", "west"))


def test_target_reached_by_the_last_tile_is_a_target_stop():
    game = game_from(DOMINO_HANDS, boneyard_reserve=24, target_score=20)
    game.step(A("5-5", "lead"))
    game.step(A("5-0", "west"))
    assert game.over and game.winner == 0
    assert game.hand_logs[0].result["outcome"] == "target"
    assert game.scores == [20, 0], "no penalty for player 1"


# --------------------------------------------------------------------------- illegal moves
@pytest.mark.parametrize(
    "action, reason",
    [
        (A("6-6", "lead"), "not in the player's hand"),
        (A("5-5", "east"), "the lead must use west"),
        (112, "not an action id"),
        (-1, "not an action id"),
        ("5-5", "not an integer"),
    ],
)
def test_illegal_lead_is_refused_and_changes_nothing(action, reason):
    game = game_from(DOMINO_HANDS, boneyard_reserve=24)
    before = game.to_record()
    with pytest.raises(IllegalMoveError, match=reason) as info:
        game.step(action)
    assert "legal moves: " in str(info.value) and "5-5@west" in str(info.value)
    assert game.to_record() == before and game.legal_actions() == [A("5-0", "lead"), A("5-5", "lead")]


def test_illegal_move_error_names_tile_end_and_legal_moves():
    game = game_from(DOMINO_HANDS, boneyard_reserve=24)
    game.step(A("5-5", "lead"))  # player 1 passes, player 0 to play
    with pytest.raises(IllegalMoveError) as info:
        game.step(A("5-0", "north"))
    err = info.value
    assert err.tile == "0-5" and err.end == "north" and err.player == 0
    assert err.legal == [A("5-0", "west"), A("5-0", "east")]
    assert "does not match that end" in str(err)
    assert game.is_legal(A("5-0", "east")) and not game.is_legal(A("5-0", "north"))
