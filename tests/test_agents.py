"""Agents: always legal, deterministic for a seed, blind to hidden tiles; greedy's tie-break; the registry."""

import random

import pytest
from hypothesis import given, settings, strategies as st

from allfives_agents import AGENTS, AgentSpec, FunctionAgent, make_agent
from allfives_agents.search.belief import TILES_WITH_PIPS, sample_hidden, unseen_mask
from allfives_agents.greedy import GreedyAgent
from allfives_env.engine import Deal, Game, Rules
from helpers import A, T, game_from

SPECS = ["random", "greedy", "expert", "ismcts:iters=12", "ismcts:iters=8,rollout=random", "ismcts:iters=6,rollout=expert"]
VARIANTS = [
    dict(num_players=2),
    dict(num_players=2, hand_size="five", boneyard_reserve=2, hand_end="winner_takes"),
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=4, partnerships=False, hand_size="seven_five"),
]


def play(specs, rules, seed, max_hands=3, record_actions=False):
    agents = [make_agent(s, seed=seed + i) for i, s in enumerate(specs)]
    game = Game(rules, seed, max_hands=max_hands)
    actions = []
    while not game.over:
        seat = game.current_player
        view = game.view(seat)
        action = agents[seat].act(view)
        assert action in view.legal_actions, f"{specs[seat]} chose an illegal move"
        actions.append(action)
        game.step(action)
    return actions


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_agents_always_play_legal_moves(spec, variant):
    rules = Rules.make(**VARIANTS[variant])
    for seed in range(3 if spec.startswith("ismcts") else 12):
        play([spec] * rules.num_players, rules, seed)


@pytest.mark.parametrize("spec", SPECS)
def test_agents_are_deterministic_for_a_seed(spec):
    rules = Rules.make(num_players=3)
    assert play([spec] * 3, rules, 7, max_hands=2) == play([spec] * 3, rules, 7, max_hands=2)


# Two deals with the same hand for seat 0 and different hidden tiles: the view of seat 0 at the lead
# is identical, so an agent that only sees its view must choose the same move in both.
HAND0 = ["5-5", "0-5", "1-4", "2-3", "3-6", "6-6", "0-0", "2-4", "1-2"]


@pytest.mark.parametrize("spec", ["expert", "ismcts:iters=30", "ismcts:iters=30,rollout=expert", "ismcts:iters=30,policy=allfives_2p", "ismcts:iters=30,policy=allfives_2p,guide=tree"])
def test_agents_never_see_hidden_tiles(spec):
    mine = tuple(T(x) for x in HAND0)
    rest = [t for t in range(28) if t not in mine]
    rng = random.Random(0)
    choices = set()
    for _ in range(4):
        rng.shuffle(rest)
        deal = Deal((mine, tuple(rest[:9])), tuple(rest[9:]), 0)
        game = Game(Rules.make(num_players=2), 1, deals=[deal])
        choices.add(make_agent(spec, seed=3).act(game.view(0)))
    assert len(choices) == 1


@pytest.mark.parametrize(
    "hand, expected",
    [
        # lead: 5-5 and 0-5 both score (10 and 5): the most points wins
        (["5-5", "0-5", "6-6"], A("5-5", "lead")),
        # 4-6 and 5-5 both score 10: tie broken toward the heavier tile (5-5: 10 pips = 4-6: 10 pips) then the double
        (["4-6", "5-5", "0-1"], A("5-5", "lead")),
        # nothing scores: heaviest tile
        (["1-2", "6-6", "2-4"], A("6-6", "lead")),
        # nothing scores, equal pips, no double: the lower action id
        (["1-3", "0-4", "1-1"], A("0-4", "lead")),
    ],
)
def test_greedy_tie_break(hand, expected):
    other = ["2-2", "2-3", "2-5"]
    game = game_from([hand, other], starter=0)
    assert GreedyAgent().act(game.view(0)) == expected


def test_greedy_prefers_more_points_over_heavier_tile():
    game = game_from([["5-5", "6-6"], ["5-2", "1-1"]], starter=0, boneyard_reserve=24)
    game.step(A("5-5", "lead"))  # player 1: 5-2 on west gives 2 + 10 = 12, on east the same
    assert GreedyAgent().act(game.view(1)) == A("5-2", "west")


@settings(max_examples=40, deadline=None)
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**31), moves=st.integers(0, 60))
def test_sampled_hidden_hands_are_consistent_with_the_view(players, seed, moves):
    game = Game(Rules.make(num_players=players), seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if game.over:
            return
        game.step(rng.choice(game.legal_actions()))
    if game.over:
        return
    seat = game.current_player
    view = game.view(seat)
    hands, boneyard = sample_hidden(view, rng)
    assert hands[seat] == view.hand
    assert [h.bit_count() for h in hands] == list(view.tile_counts)
    assert len(boneyard) == view.boneyard_size
    everything = view.played
    for h in hands:
        assert not everything & h
        everything |= h
    for t in boneyard:
        assert not everything >> t & 1
        everything |= 1 << t
    assert everything == (1 << 28) - 1
    for s, h in enumerate(hands):
        if s != seat:
            assert not h & TILES_WITH_PIPS[view.missing_pips[s]] & unseen_mask(view)


def test_registry_parses_specs_and_names_problems():
    spec = AgentSpec.parse("ismcts:iters=400,rollout=greedy")
    assert (spec.kind, spec.option_dict(), str(spec)) == ("ismcts", {"iters": 400, "rollout": "greedy"}, "ismcts:iters=400,rollout=greedy")
    assert AgentSpec.parse("expert:threat=0.5").option_dict() == {"threat": 0.5}
    agent = make_agent("ismcts:iters=50,c=1.2", seed=1)
    assert agent.iters == 50 and agent.c == 1.2 and agent.name == "ismcts:iters=50,c=1.2"
    with pytest.raises(ValueError, match="unknown agent 'alphago'; available: random, greedy"):
        make_agent("alphago")
    with pytest.raises(ValueError, match="agent 'ismcts' has no option 'depth'; its options: iters, seconds, rollout, c, policy, cpuct, temp, guide, select, belief, worlds, bpolicy, bweights, bpartner, btemp, beps, opp, stop, value"):
        make_agent("ismcts:depth=3")
    with pytest.raises(ValueError, match="option iters='many' is not a valid int"):
        make_agent("ismcts:iters=many")
    with pytest.raises(ValueError, match="option rollout='smart' must be one of greedy, random, expert"):
        make_agent("ismcts:rollout=smart")
    assert {"random", "greedy", "expert", "ismcts"} <= set(AGENTS)
    fn = make_agent(lambda view: view.legal_actions[0])
    assert isinstance(fn, FunctionAgent)


def test_tiles_with_pips_table():
    from allfives_env.engine.tiles import TILES

    for m in range(128):
        expected = {t for t, (a, b) in enumerate(TILES) if m >> a & 1 or m >> b & 1}
        assert {t for t in range(28) if TILES_WITH_PIPS[m] >> t & 1} == expected
