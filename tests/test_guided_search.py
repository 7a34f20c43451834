"""``ismcts:policy=...``: the search guided by a trained network's move probabilities at the root."""

import os

import pytest

from allfives_agents import make_agent
from allfives_agents.nets.policy import PolicyFileError, PolicyPlayersError, check_policy_players
from allfives_env.engine import Game, Rules

GUIDED = "ismcts:iters=12,policy=allfives_2p"


def views(rules, games=3, seed=0):
    """Views with two or more legal moves from greedy self-play games."""
    greedy = make_agent("greedy")
    found = []
    for s in range(seed, seed + games):
        game = Game(rules, s, max_hands=1)
        while not game.over:
            view = game.view(game.current_player)
            if len(view.legal_actions) > 1:
                found.append(view)
            game.step(greedy.act(view))
    return found


def test_one_iteration_plays_the_networks_favourite():
    # the first PUCT step visits the move of highest prior, and the most visited move is played
    guided = make_agent("ismcts:iters=1,policy=allfives_2p", seed=1)
    network = make_agent("ppo:allfives_2p")
    for view in views(Rules.make(num_players=2)):
        assert guided.act(view) == network.act(view)


def test_the_prior_is_a_distribution_over_the_legal_moves():
    guided = make_agent("ismcts:iters=5,policy=allfives_2p,temp=2", seed=1)
    for view in views(Rules.make(num_players=2), games=1):
        prior = guided.prior(view)
        assert sorted(prior) == sorted(view.legal_actions)
        assert sum(prior.values()) == pytest.approx(1.0) and min(prior.values()) > 0


def test_the_prior_steers_the_visits():
    # with a large cpuct the visits follow the prior; with cpuct=0 they follow the values alone
    view = max(views(Rules.make(num_players=2), games=2), key=lambda v: len(v.legal_actions))
    steered = make_agent("ismcts:iters=200,policy=allfives_2p,cpuct=100", seed=2)
    prior = steered.prior(view)
    root = steered.search(view)
    favourite = max(prior, key=prior.get)
    assert root.children[favourite].visits == max(child.visits for child in root.children.values())
    assert sum(child.visits for child in root.children.values()) == 200


def test_progressive_bias_tries_every_move_once_likeliest_first_then_fades():
    view = max(views(Rules.make(num_players=2), games=2), key=lambda v: len(v.legal_actions))
    k = len(view.legal_actions)
    agent = make_agent(f"ismcts:iters={k},policy=allfives_2p,select=bias,stop=full", seed=2)
    prior = agent.prior(view)
    root = agent.search(view)
    assert sorted(root.children) == sorted(prior) and all(child.visits == 1 for child in root.children.values())
    # one iteration: the likeliest move, as PUCT's first step
    assert make_agent("ismcts:iters=1,policy=allfives_2p,select=bias", seed=2).act(view) == max(prior, key=prior.get)
    # with a huge weight the visits follow the prior, with none they follow the values: the prior is
    # the only difference between the two searches, so the root's visits must differ
    steered = make_agent("ismcts:iters=300,policy=allfives_2p,select=bias,cpuct=1000,stop=full", seed=2).search(view)
    assert steered.children[max(prior, key=prior.get)].visits == max(c.visits for c in steered.children.values())
    unbiased = make_agent("ismcts:iters=300,policy=allfives_2p,select=bias,cpuct=0,stop=full", seed=2).search(view)
    assert sum(c.visits for c in unbiased.children.values()) == 300
    assert [c.visits for c in unbiased.children.values()] != [c.visits for c in steered.children.values()]
    with pytest.raises(ValueError, match="select=bias needs a network"):
        make_agent("ismcts:select=bias")


@pytest.mark.parametrize("spec", [GUIDED, GUIDED + ",guide=tree", GUIDED + ",select=bias"])
def test_guided_search_is_deterministic_for_a_seed_and_legal(spec):
    rules = Rules.make(num_players=2)
    for view in views(rules, games=1, seed=4)[:8]:
        a, b = make_agent(spec, seed=9), make_agent(spec, seed=9)
        assert a.act(view) == b.act(view)
        assert a.act(view) in view.legal_actions


def test_tree_guidance_asks_the_network_below_the_root():
    view = max(views(Rules.make(num_players=2), games=2), key=lambda v: len(v.legal_actions))
    root = make_agent("ismcts:iters=100,policy=allfives_2p,guide=tree", seed=3).search(view)
    below = [node for child in root.children.values() for node in child.children.values()] + list(root.children.values())
    assert any(node.prior is not None for node in below)
    assert all(node.prior is None for node in make_agent("ismcts:iters=100,policy=allfives_2p", seed=3).search(view).children.values())


def test_onnx_and_numpy_priors_agree():
    numpy_prior = make_agent("ismcts:iters=1,policy=allfives_2p", seed=1)
    onnx_prior = make_agent("ismcts:iters=1,policy=models/allfives_2p.onnx", seed=1)
    for view in views(Rules.make(num_players=2), games=1):
        a, b = numpy_prior.prior(view), onnx_prior.prior(view)
        assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], abs=1e-4) for k in a)


def test_bad_policies_are_named():
    with pytest.raises(PolicyFileError, match="policy file not found: nowhere.zip"):
        make_agent("ismcts:policy=nowhere.zip")
    with pytest.raises(ValueError, match="option guide=tree needs a network: policy=PATH"):
        make_agent("ismcts:guide=tree")
    with pytest.raises(ValueError, match="option guide='everywhere' must be one of root, tree"):
        make_agent("ismcts:policy=allfives_2p,guide=everywhere")
    guided = make_agent(GUIDED)
    with pytest.raises(PolicyPlayersError, match="trained for 2 players"):
        check_policy_players(guided, Rules.make(num_players=4))


def test_policy_files_of_a_spec_are_checked_and_made_absolute(tmp_path, monkeypatch):
    from allfives_agents import AgentSpec
    from allfives_agents.tournament import TournamentError, check_specs
    from allfives_agents.tournament.on_ray import resolve

    def spec_files(text):
        return AgentSpec.parse(text).files()

    def with_absolute_files(text):
        return AgentSpec.parse(text).with_absolute_files().text()

    shipped = spec_files("ismcts:policy=allfives_2p")["policy"]
    assert shipped.endswith("allfives_2p.zip") and os.path.isabs(shipped)
    assert spec_files("ismcts:iters=5") == {} and spec_files("ppo:models/x.zip") == {"policy": "models/x.zip"}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.onnx").write_bytes(b"")
    spec = "ismcts:iters=5,policy=m.onnx,cpuct=2.0"
    assert with_absolute_files(spec) == resolve(AgentSpec.parse(spec)).text() == f"ismcts:iters=5,policy={tmp_path / 'm.onnx'},cpuct=2"
    assert with_absolute_files("ismcts:iters=5") == "ismcts:iters=5"
    team = "ismcts:belief=expert,bweights=w.json,bpartner=p.json,worlds=9"
    assert with_absolute_files(team) == f"ismcts:belief=expert,bweights={tmp_path / 'w.json'},bpartner={tmp_path / 'p.json'},worlds=9"
    with pytest.raises(TournamentError, match="agent 'ismcts:policy=gone.zip': policy file not found: gone.zip"):
        check_specs(["ismcts:policy=gone.zip"])
    with pytest.raises(TournamentError, match="agent 'ismcts:belief=expert,bweights=gone.json': bweights file not found: gone.json"):
        check_specs(["ismcts:belief=expert,bweights=gone.json"])


@pytest.mark.parametrize(
    "spec",
    [
        "ismcts:iters=60,policy=allfives_2p",
        "ismcts:iters=60",
        "ismcts:iters=40,policy=allfives_2p,belief=policy,worlds=20",
        "ismcts:iters=60,policy=allfives_2p,select=bias",
    ],
)
def test_stopping_early_plays_the_move_of_the_whole_search_in_fewer_iterations(spec):
    # stop=early ends once the leader cannot be overtaken; started from the same seed, the iterations
    # it did run are those of the full search, so the move is the same
    shortened = 0
    for i, view in enumerate(views(Rules.make(num_players=2), games=2)):
        early, full = make_agent(spec, seed=i), make_agent(spec + ",stop=full", seed=i)
        assert early.act(view) == full.act(view)
        root = make_agent(spec, seed=i).search(view, decide=True)
        whole = make_agent(spec, seed=i).search(view)
        assert whole.visits == early.iters and root.visits <= early.iters
        leader = max(root.children.values(), key=lambda c: c.visits)
        others = [c.visits for c in root.children.values() if c is not leader]
        if root.visits < early.iters:
            shortened += 1
            assert leader.visits - max(others, default=0) > early.iters - root.visits
    assert shortened > 0
