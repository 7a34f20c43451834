"""Agent specs: parsed once at the edge into ``AgentSpec``; paths with ',' and ':' work or are refused by name."""

import shutil
from pathlib import Path

import pytest

from allfives_agents import AgentSpec, make_agent
from allfives_agents.spec import parse_specs
from allfives_agents.tournament import run_tournament
from allfives_env.engine import Game, Rules

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "allfives_2p.zip"


def a_view():
    game = Game(Rules.make(), seed=5)
    return game.view(game.current_player)


def test_a_policy_path_with_commas_and_colons_works_where_the_grammar_allows(tmp_path):
    odd = tmp_path / "run:3,best.zip"
    shutil.copy(MODEL, odd)
    spec = AgentSpec.parse(f"ppo:{odd}")  # everything after a path kind's colon is the path
    assert spec.path == str(odd) and spec.files() == {"policy": str(odd)}
    view = a_view()
    assert make_agent(spec).act(view) == make_agent("ppo:allfives_2p").act(view)
    colon = tmp_path / "net:v2.zip"
    shutil.copy(MODEL, colon)
    guided = AgentSpec.parse(f"ismcts:iters=5,policy={colon}")  # a ':' in an option's path is kept
    assert guided.option_dict()["policy"] == str(colon) and not guided.missing_files()


def test_an_option_path_with_a_comma_is_refused_by_name_and_works_from_python(tmp_path):
    odd = tmp_path / "a,b.zip"
    shutil.copy(MODEL, odd)
    with pytest.raises(ValueError, match="a file path with ',' cannot be written in a spec"):
        AgentSpec.parse(f"ismcts:iters=5,policy={odd}")
    spec = AgentSpec.of("ismcts", iters=5, policy=str(odd))
    assert not spec.missing_files()
    view = a_view()
    assert make_agent(spec, seed=1).act(view) == make_agent(AgentSpec.of("ismcts", iters=5, policy=str(MODEL)), seed=1).act(view)


def test_the_tournament_takes_parsed_specs_and_parses_no_text(monkeypatch):
    specs = parse_specs("greedy,expert:threat=0.5")
    assert [s.label for s in specs] == ["greedy", "expert:threat=0.5"]

    def no_text(text):
        if isinstance(text, AgentSpec):
            return text
        raise AssertionError(f"text parsed again: {text!r}")

    monkeypatch.setattr(AgentSpec, "parse", staticmethod(no_text))
    result = run_tournament(specs, Rules.make(), games=2, seed=1)
    assert result.config["agents"] == ["greedy", "expert:threat=0.5"] and result.games == 2


def test_bad_specs_name_the_problem():
    for text, message in [
        ("", "an agent spec must be a non-empty string"),
        ("nope", "unknown agent 'nope'; available: random, greedy"),
        ("ppo", "agent 'ppo' needs a file: ppo:PATH"),
        ("greedy:x=1", "agent 'greedy' has no option 'x'"),
        ("ismcts:iters", "option 'iters' must be key=value"),
        ("ismcts:iters=2,iters=3", "option 'iters' is given twice"),
    ]:
        with pytest.raises(ValueError, match=message):
            AgentSpec.parse(text)
    with pytest.raises(ValueError, match="AgentSpec.of builds an option kind"):
        AgentSpec.of("ppo", path="x")
