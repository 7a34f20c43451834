"""The one home of the search's options: types, defaults, ranges, dependencies; the registry, the
agent and the docs derived from it."""

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allfives_agents import AGENTS, AgentSpec, make_agent
from allfives_agents.search.ismcts import ISMCTSAgent
from allfives_agents.search.options import OPTIONS, SearchOptions, options_table

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_table_is_generated_from_the_options():
    doc = (ROOT / "docs" / "search.md").read_text()
    assert options_table() in doc, "docs/search.md's options table is out of date: paste options_table()"


def test_the_registry_and_the_agent_read_the_same_options():
    assert AGENTS["ismcts"].options == OPTIONS
    assert list(OPTIONS) == [f.name for f in dataclasses.fields(SearchOptions)]
    agent = ISMCTSAgent(seed=1)
    for field in dataclasses.fields(SearchOptions):
        if not OPTIONS[field.name].file:  # a file option's attribute is the network it loaded
            assert getattr(agent, field.name) == field.default
    assert agent.options == SearchOptions()


def test_defaults_are_never_refused_and_a_default_given_changes_nothing():
    # btemp's default written with belief=uniform is what the search uses anyway: accepted
    assert SearchOptions(btemp=0.5) == SearchOptions()
    assert make_agent("ismcts:btemp=0.5,beps=0.02,select=puct", seed=1).options == SearchOptions()


IGNORED = [
    ("ismcts:worlds=50", "option worlds=50 needs belief=policy|expert; with belief=uniform it would be ignored"),
    ("ismcts:btemp=0.7", "option btemp=0.7 needs belief=policy; with belief=uniform it would be ignored"),
    ("ismcts:beps=0.1", "option beps=0.1 needs belief=policy|expert; with belief=uniform it would be ignored"),
    ("ismcts:belief=expert,btemp=0.7", "option btemp=0.7 needs belief=policy; with belief=expert it would be ignored"),
    ("ismcts:cpuct=10", "option cpuct=10 needs a network: policy=PATH; with no policy it would be ignored"),
    ("ismcts:temp=2", "option temp=2 needs a network: policy=PATH"),
    ("ismcts:select=bias", "option select=bias needs a network: policy=PATH"),
    ("ismcts:guide=tree", "option guide=tree needs a network: policy=PATH"),
    ("ismcts:belief=policy", "option belief=policy needs a network: policy=PATH"),
    ("ismcts:opp=model", "option opp=model needs belief=policy|expert"),
    ("ismcts:bweights=m.json", "option bweights=m.json needs belief=expert"),
    ("ismcts:belief=policy,policy=allfives_2p,bweights=m.json", "option bweights=m.json needs belief=expert; with belief=policy"),
    ("ismcts:seconds=0.1,stop=full", "option stop=full needs seconds=0; with seconds=0.1 it would be ignored"),
]


@pytest.mark.parametrize("spec, message", IGNORED, ids=[s for s, _ in IGNORED])
def test_an_option_the_setting_would_ignore_is_refused_with_the_reason(spec, message):
    with pytest.raises(ValueError, match=message.replace("|", r"\|").replace(".", r"\.")):
        make_agent(spec)


def test_the_same_rules_hold_without_a_spec():
    with pytest.raises(ValueError, match="option worlds=50 needs belief"):
        ISMCTSAgent(worlds=50)
    with pytest.raises(ValueError, match="option cpuct=10 needs a network"):
        SearchOptions(cpuct=10)
    with pytest.raises(ValueError, match="option iters=0 must be >= 1"):
        SearchOptions(iters=0)
    with pytest.raises(TypeError, match="options or keywords"):
        ISMCTSAgent(options=SearchOptions(), iters=3)
    opts = SearchOptions(iters=30, policy="allfives_2p", belief="policy", worlds=10, select="bias", cpuct=10)
    assert ISMCTSAgent(seed=1, options=opts).options is opts
    assert opts.changed() == {"iters": 30, "policy": "allfives_2p", "select": "bias", "cpuct": 10, "belief": "policy", "worlds": 10}
    assert opts.pool_size == 10 and SearchOptions(iters=7).pool_size == 7


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({}, optional={
    "iters": st.integers(1, 5), "policy": st.sampled_from(["", "allfives_2p"]), "cpuct": st.sampled_from([1.0, 3.0]),
    "select": st.sampled_from(["puct", "bias"]), "belief": st.sampled_from(["uniform", "policy", "expert"]),
    "worlds": st.sampled_from([0, 4]), "btemp": st.sampled_from([0.5, 1.0]), "opp": st.sampled_from(["search", "model"]),
    "seconds": st.sampled_from([0.0, 0.5]), "stop": st.sampled_from(["early", "full"]),
}))
def test_every_option_a_setting_accepts_is_one_it_uses(given_options):
    # the dependency rules, restated independently: a non-default value is accepted exactly when what it needs is set
    defaults = SearchOptions()
    needs_policy = [k for k in ("cpuct", "select") if given_options.get(k, getattr(defaults, k)) != getattr(defaults, k)]
    belief = given_options.get("belief", "uniform")
    ok = not (needs_policy or belief == "policy") or given_options.get("policy")
    ok = ok and (given_options.get("worlds", 0) == 0 or belief != "uniform")
    ok = ok and (given_options.get("btemp", 0.5) == 0.5 or belief == "policy")
    ok = ok and (given_options.get("opp", "search") == "search" or belief != "uniform")
    ok = ok and (given_options.get("stop", "early") == "early" or given_options.get("seconds", 0.0) == 0.0)
    try:
        SearchOptions(**given_options)
    except ValueError as exc:
        assert not ok, f"{given_options} refused: {exc}"
    else:
        assert ok, f"{given_options} accepted"


def test_a_spec_round_trips_through_its_text():
    spec = AgentSpec.parse("ismcts:iters=300,policy=allfives_2p,belief=policy,worlds=100,select=bias,cpuct=10")
    assert AgentSpec.parse(spec.text()) == AgentSpec.parse(spec.text())
    assert AgentSpec.parse(spec.text()).option_dict() == spec.option_dict()
    assert SearchOptions(**spec.option_dict()).changed() == spec.option_dict()
