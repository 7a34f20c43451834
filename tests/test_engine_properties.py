"""Property tests (hypothesis) over random games of every variant."""

import json
import random

from hypothesis import given, strategies as st

from allfives_env.engine import DRAW, PASS, PLAY, Game, Rules
from allfives_env.engine.record import replay_record
from allfives_env.engine.tiles import ALL_TILES_MASK, TILE_PIP_MASK, mask_tiles


@st.composite
def rules_strategy(draw):
    players = draw(st.sampled_from([2, 3, 4]))
    partnerships = players == 4 and draw(st.booleans())
    hand_size = draw(st.sampled_from(["standard", "five", "seven_five", 1, 3, 28 // players]))
    tiles = Rules.make(num_players=players, hand_size=hand_size).tiles_per_hand
    reserve = draw(st.integers(0, min(3, 28 - players * tiles)))
    return Rules.make(
        num_players=players,
        partnerships=partnerships,
        hand_size=hand_size,
        boneyard_reserve=reserve,
        hand_end=draw(st.sampled_from(["subtract", "winner_takes"])),
        target_score=draw(st.sampled_from([25, 60, 150])),
    )


def play_random(game: Game, move_seed: int, check=None) -> None:
    rng = random.Random(move_seed)
    while not game.over:
        legal = game.legal_actions()
        assert legal, "the engine asks for a choice only when there is a legal placement"
        if check:
            check(game)
        game.step(rng.choice(legal))


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_invariants_hold_through_random_games(rules, seed, move_seed):
    game = Game(rules, seed, max_hands=30)

    def check(g: Game):
        held = 0
        for h in g.hands:
            assert held & h == 0
            held |= h
        undrawn = 0
        for t in g.boneyard[g.draw_pos :]:
            undrawn |= 1 << t
        assert held & undrawn == 0 and held & g.layout.played == 0 and undrawn & g.layout.played == 0
        assert held | undrawn | g.layout.played == ALL_TILES_MASK, "all 28 tiles accounted for"
        for seat, missing in enumerate(g.missing):
            for t in mask_tiles(g.hands[seat]):
                if t != g.forced or seat != g.current_player:  # a drawn tile about to be placed
                    assert not TILE_PIP_MASK[t] & missing, "a seat never holds a pip it is known to lack"

    play_random(game, move_seed, check)
    for log in game.hand_logs:
        for e in log.events:
            if e[0] == PLAY:
                assert e[4] >= 0 and e[4] % 5 == 0
    # scores are exactly the points of play and of hand ends, per side
    expected = [0] * rules.num_sides
    for log in game.hand_logs:
        for e in log.events:
            if e[0] == PLAY:
                expected[rules.side_of[e[1]]] += e[4]
        for seat, pen in enumerate(log.result["penalties"]):
            expected[rules.side_of[seat]] -= pen
        for side, bonus in enumerate(log.result["bonus"]):
            expected[side] += bonus
        assert log.result["scores_after"] == expected
    assert game.scores == expected
    if game.winner is not None:
        assert game.scores[game.winner] >= rules.target_score
        assert sorted(game.scores)[-2] < rules.target_score


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_every_score_change_in_play_is_a_positive_multiple_of_five(rules, seed, move_seed):
    game = Game(rules, seed, max_hands=20)
    rng = random.Random(move_seed)
    while not game.over:
        before = list(game.scores)
        hand = game.hand_index
        points = game.step(rng.choice(game.legal_actions()))
        if game.hand_index == hand and not (game.over and game.winner is None):
            changes = [a - b for a, b in zip(game.scores, before)]
            if game.hand_logs[-1].result is None or game.hand_logs[-1].result["outcome"] == "target":
                assert sorted(c for c in changes if c) == ([points] if points else [])
                assert points % 5 == 0


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_replaying_a_record_reproduces_it_and_same_seed_gives_same_record(rules, seed, move_seed):
    game = Game(rules, seed, max_hands=25)
    play_random(game, move_seed)
    record = json.loads(json.dumps(game.to_record(["a"] * rules.num_players)))
    assert replay_record(record).to_record(["a"] * rules.num_players) == record
    again = Game(rules, seed, max_hands=25)
    play_random(again, move_seed)
    assert again.to_record(["a"] * rules.num_players) == record


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_draws_and_passes_only_when_no_placement(rules, seed, move_seed):
    game = Game(rules, seed, max_hands=10)
    play_random(game, move_seed)
    for log in game.hand_logs:
        for i, e in enumerate(log.events):
            if e[0] == PASS:
                assert i == 0 or log.events[i - 1][0] != DRAW or log.events[i - 1][1] == e[1]
        assert sum(e[0] == DRAW for e in log.events) <= len(log.boneyard) - rules.boneyard_reserve


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_points_preview_equals_points_scored(rules, seed, move_seed):
    game = Game(rules, seed, max_hands=3)
    rng = random.Random(move_seed)
    while not game.over:
        legal = game.legal_actions()
        view = game.view(game.current_player)
        for a in legal:
            copy = game.layout.copy()
            assert copy.place(a >> 2, a & 3) == game.layout.points_if(a >> 2, a & 3) == view.points_of(a)
        game.step(rng.choice(legal))


def view_facts(view) -> tuple:
    """Everything a view shows, as plain values."""
    names = [name for name in type(view).__slots__ if not name.startswith("_")]
    return tuple(getattr(view, name) for name in names) + (view.arms, view.history, view.hand_tiles)


@given(rules=rules_strategy(), seed=st.integers(0, 2**32), move_seed=st.integers(0, 2**32))
def test_views_are_snapshots(rules, seed, move_seed):
    """A view shows the same arms, history and counts however far the game has moved on since."""
    game = Game(rules, seed, max_hands=2)
    rng = random.Random(move_seed)
    taken = []
    while not game.over:
        if rng.random() < 0.3:
            view = game.view(rng.randrange(game.num_players))
            taken.append((view, view_facts(view)))
        game.step(rng.choice(game.legal_actions()))
    for view, facts in taken:
        assert view_facts(view) == facts
    # and its arms hold exactly the tiles on the table when it was taken
    for view, _ in taken:
        on_table = sorted(t for arm in view.arms for t in arm) + ([view.lead] if view.lead >= 0 else [])
        assert sorted(on_table) == mask_tiles(view.played)


@given(st.integers(0, ALL_TILES_MASK))
def test_mask_tiles_lists_the_set_bits_in_order(mask):
    tiles = mask_tiles(mask)
    assert tiles == [t for t in range(28) if mask >> t & 1]
    tiles.append(99)  # a fresh list: the tables behind it stay as they were
    assert mask_tiles(mask) == [t for t in range(28) if mask >> t & 1]
