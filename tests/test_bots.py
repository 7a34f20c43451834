"""The named bots: one list, a name wherever a spec goes, the right setting per game, refused elsewhere."""

import re
from pathlib import Path

import pytest

from allfives_agents import AgentSpec, make_agent
from allfives_agents.bots import BOTS, DEFAULT, bot_spec, bots_table, describe_game
from allfives_agents.factory import BotAgent
from allfives_agents.tournament import TournamentError, run_tournament
from allfives_env.engine import Game, Rules
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
GAMES = [(2, False), (3, False), (4, True)]


def test_every_game_with_a_shipped_policy_has_a_fast_a_strong_and_a_strongest_bot():
    for name in ("fast", "strong", "strongest"):
        assert set(BOTS[name].settings) == set(GAMES), name
    assert DEFAULT in BOTS


def test_every_setting_is_a_valid_spec_with_its_measurement():
    for bot in BOTS.values():
        for game, setting in bot.settings.items():
            spec = AgentSpec.parse(setting.spec)
            assert not spec.missing_files(), (bot.name, game)
            m = setting.measured
            assert 0 < m.ci[0] < m.win_rate < m.ci[1] < 100, (bot.name, game, m)
            assert m.ms_per_move > 0, (bot.name, game)
            assert m.command.startswith(("allfives tournament", "python -m allfives_train.ship")), m.command


def test_the_strong_bot_is_the_measured_80_percent_search_in_2_players():
    setting = BOTS["strong"].settings[(2, False)]
    assert setting.measured.win_rate >= 78
    assert setting.spec == "ismcts:iters=300,policy=allfives_2p_prior,belief=policy,worlds=100,select=bias,cpuct=10"


def test_the_2_player_searches_keep_their_measured_prior_apart_from_the_shipped_network():
    """The searches' 2-player figures were measured with the 1.5M-step network; ``fast`` ships the 6M one.
    The prior is a plain file (no card, so not one of the shipped models) that loads as a 2-player policy
    of its own weights."""
    from allfives_agents.models import available_models, model_path
    from allfives_agents.nets.policy import NumpyPolicy

    for bot in ("strong", "strongest", "counter-expert"):
        assert "policy=allfives_2p_prior," in BOTS[bot].settings[(2, False)].spec, bot
    assert BOTS["fast"].settings[(2, False)].spec == "ppo:allfives_2p"
    assert "allfives_2p_prior" not in available_models()
    assert NumpyPolicy.load(model_path("allfives_2p_prior", "zip")).obs_version == 2
    prior, shipped = make_agent("ppo:allfives_2p_prior", seed=1), make_agent("ppo:allfives_2p", seed=1)
    game = Game(Rules.make(num_players=2), seed=5)
    views = []
    while not game.over and len(views) < 60:
        view = game.view(game.current_player)
        views.append(view)
        game.step(view.legal_actions[0])
    assert any(prior.act(v) != shipped.act(v) for v in views), "two trainings of different length are different policies"


@pytest.mark.parametrize("n, partnerships", GAMES)
def test_a_name_resolves_to_its_setting_for_the_game(n, partnerships):
    rules = Rules.make(num_players=n, partnerships=partnerships) if n == 4 else Rules.make(num_players=n)
    agent = make_agent("fast", seed=1, rules=rules)
    assert agent.name == "fast" and agent.spec.text() == AgentSpec.parse(bot_spec("fast", n, partnerships)).text()
    game = Game(rules, seed=3)
    view = game.view(game.current_player)
    assert agent.act(view) in view.legal_actions


def test_a_name_without_rules_picks_its_setting_at_its_first_move():
    bot = make_agent("fast", seed=1)
    assert isinstance(bot, BotAgent)
    for n in (2, 3):
        game = Game(Rules.make(num_players=n), seed=4)
        view = game.view(game.current_player)
        assert bot.act(view) == make_agent(bot_spec("fast", n), seed=1).act(view)
    game = Game(Rules.make(num_players=4, partnerships=False), seed=4)
    with pytest.raises(ValueError, match="bot 'fast' has no setting for 4 players, cut-throat; it plays 2 players, 3 players, 4 players in partnerships"):
        bot.act(game.view(game.current_player))


def test_a_name_is_refused_for_a_game_it_has_no_setting_for():
    with pytest.raises(ValueError, match="bot 'counter-expert' has no setting for 3 players"):
        make_agent("counter-expert", rules=Rules.make(num_players=3))
    with pytest.raises(TournamentError, match="bot 'strong' has no setting for 4 players, cut-throat"):
        run_tournament(["strong", "greedy"], Rules.make(num_players=4, partnerships=False), games=2, seed=1)
    assert describe_game((4, False)) == "4 players, cut-throat"


def test_a_name_plays_in_a_tournament_under_its_name_and_as_its_setting():
    named = run_tournament(["fast", "greedy"], Rules.make(), games=4, seed=2)
    spelled = run_tournament([bot_spec("fast", 2), "greedy"], Rules.make(), games=4, seed=2)
    assert named.config["agents"] == ["fast", "greedy"]
    assert named.config["specs"][0] == AgentSpec.parse(bot_spec("fast", 2)).text()
    assert [r.final_scores for r in named.results] == [r.final_scores for r in spelled.results]


def test_the_readme_shows_the_bots_table():
    readme = (ROOT / "README.md").read_text()
    assert bots_table() in readme, "README.md's bot table is out of date: paste allfives bots --markdown"
    first_screen = readme.split("\n## ", 2)[:2]
    assert any(bots_table() in part for part in first_screen)


def test_allfives_bots_lists_them():
    out = run_cli("bots", timeout=60)
    assert out.returncode == 0, out.stderr
    for name, bot in BOTS.items():
        assert re.search(rf"^{re.escape(name)}: ", out.stdout, re.M)
        for setting in bot.settings.values():
            assert setting.spec in out.stdout
    assert run_cli("bots", "--markdown", timeout=60).stdout.strip() == bots_table()


def test_the_results_log_shows_every_bot_with_its_commands():
    from allfives_agents.bots import bots_results

    results = (ROOT / "docs" / "results.md").read_text()
    assert bots_results() in results, "docs/results.md's named bots are out of date: paste allfives_agents.bots.bots_results()"
