"""The named bots: a short list a newcomer can pick from, each a measured setting per game.

``fast`` is the shipped network alone (under a millisecond a move), ``strong`` the strongest search
measured that plays every opponent alike, ``strongest`` the strongest such search within about
100 ms a move (where no larger budget measured stronger it is ``strong``'s setting), and
``counter-expert`` a specialist: a search that answers a model of ``expert``'s play fitted to its
game records (far stronger against ``expert``, weaker against players the model does not fit).

A name works wherever an agent spec does (``allfives tournament --agents strong expert``,
``allfives play --opponent fast``, ``allfives serve --policy strongest``, ``make_agent("strong",
rules=...)``, the web page's menu): it resolves to its setting for the game's number of players
and partnerships, and is refused for a game it has no setting for. ``allfives bots`` prints this
list, the README's bot table is ``bots_table()`` (tests/test_bots.py keeps them equal), and
``DEFAULT`` is ``allfives play``'s opponent. Every figure is from 2000 duplicate games against
``expert`` with the command recorded here; docs/results.md holds the same figures with their
commands and the experiments behind them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: a game the bots have settings for: (number of players, partnerships)
Game = tuple[int, bool]

#: the named bot ``allfives play`` seats by default (``expert`` where it has no setting)
DEFAULT = "strong"

#: the 2-player searches' prior: the 1.5M-step network that shipped before the 6M one (models/README.md,
#: "Toward the search's strength": the sharper networks measured no better as a prior)
_PRIOR_2P = "allfives_2p_prior"
#: the 3- and 4-player searches' priors: the networks (observation version 2) their figures were
#: measured with, kept apart from the shipped version-3 networks (stop 57)
_PRIOR_3P = "allfives_3p_prior"
_PRIOR_4P = "allfives_4p_prior"
_SEARCH_2P = f"ismcts:iters=300,policy={_PRIOR_2P},belief=policy,worlds=100,select=bias,cpuct=10"
_SEARCH_3P = f"ismcts:iters=300,policy={_PRIOR_3P},belief=policy,worlds=100,select=bias,cpuct=10"
_SEARCH_4P = f"ismcts:iters=300,policy={_PRIOR_4P},belief=policy,worlds=100"
_SEARCH_4P_200 = f"ismcts:iters=300,policy={_PRIOR_4P},belief=policy,worlds=200"
_COUNTER_2P = (
    f"ismcts:iters=300,policy={_PRIOR_2P},belief=expert,bweights=expert_2p,worlds=300,select=bias,cpuct=10,opp=model"
)
_COUNTER_4P = f"ismcts:iters=1000,policy={_PRIOR_4P},belief=expert,bweights=expert_4p,worlds=200,opp=model"
_SHIP = "python -m allfives_train.ship runs/ppo_{n}p --name allfives_{n}p --games 2000 --workers 2"
_TIME = "python benchmarks/search_time.py --players {n} --positions 100 --agents SPEC... (every bot's spec for the game in one run; the median)"


@dataclass(frozen=True)
class Measured:
    """A setting's measured strength against ``expert`` (2000 duplicate games, 95% Wilson interval)
    and its time per move, each with the command that measured it."""

    win_rate: float
    ci: tuple[float, float]
    command: str
    ms_per_move: float
    time_command: str


@dataclass(frozen=True)
class Setting:
    """A bot's agent spec for one game, with what it measured there."""

    spec: str
    measured: Measured


@dataclass(frozen=True)
class Bot:
    name: str
    summary: str
    settings: dict[Game, Setting]
    #: whether it plays every opponent alike (``counter-expert`` answers a model of one player)
    generic: bool = True

    def plays(self, num_players: int, partnerships: bool = False) -> bool:
        """Whether it has a setting for the game."""
        return game_key(num_players, partnerships) in self.settings

    def setting(self, num_players: int, partnerships: bool = False) -> Setting:
        """The setting for a game; ``ValueError`` naming the games it has settings for."""
        found = self.settings.get(game_key(num_players, partnerships))
        if found is None:
            raise ValueError(f"bot {self.name!r} has no setting for {describe_game((num_players, partnerships))}; "
                             f"it plays {', '.join(describe_game(g) for g in self.settings)}")
        return found


def game_key(num_players: int, partnerships: bool = False) -> Game:
    """The game of the settings: partnerships count with 4 players only."""
    return num_players, bool(partnerships) if num_players == 4 else False


def default_bot(num_players: int, partnerships: bool = False) -> str:
    """The bot ``allfives play`` and the web page seat by default: ``DEFAULT`` where it has a
    setting for the game, else ``expert``."""
    return DEFAULT if BOTS[DEFAULT].plays(num_players, partnerships) else "expert"


def describe_game(game: Game) -> str:
    """``2 players``, ``4 players in partnerships``, ``4 players, cut-throat``."""
    n, partnerships = game
    if n == 4:
        return "4 players in partnerships" if partnerships else "4 players, cut-throat"
    return f"{n} players"


def _ship_setting(n: int, rate: float, ci: tuple[float, float], ms: float) -> Setting:
    return Setting(f"ppo:allfives_{n}p", Measured(rate, ci, _SHIP.format(n=n), ms, _TIME.format(n=n)))


def _tournament(spec: str, n: int, seed: int) -> str:
    players = f"--players {n} " if n != 2 else ""
    return f"allfives tournament {players}--agents {spec} expert --games 2000 --seed {seed} --workers 2"


_FAST = {
    (2, False): _ship_setting(2, 74.2, (72.2, 76.1), 0.39),
    (3, False): _ship_setting(3, 61.4, (59.9, 62.9), 0.22),
    (4, True): _ship_setting(4, 65.4, (63.3, 67.5), 0.37),
}
_STRONG = {
    (2, False): Setting(_SEARCH_2P, Measured(80.8, (79.0, 82.5), _tournament(_SEARCH_2P, 2, 17), 16.6, _TIME.format(n=2))),
    (3, False): Setting(_SEARCH_3P, Measured(64.9, (63.5, 66.4), _tournament(_SEARCH_3P, 3, 19), 17.2, _TIME.format(n=3))),
    (4, True): Setting(_SEARCH_4P, Measured(69.6, (67.5, 71.6), _tournament(_SEARCH_4P, 4, 18), 13.6, _TIME.format(n=4))),
}

BOTS: dict[str, Bot] = {
    bot.name: bot
    for bot in (
        Bot("fast", "the shipped network alone: its best move, no search", _FAST),
        Bot("strong", "search guided by the network, inferring hands from play", _STRONG),
        Bot(
            "strongest",
            "the strongest search measured within about 100 ms a move (strong's setting where nothing larger has measured stronger: 2 and 3 players)",
            {
                **_STRONG,
                (4, True): Setting(
                    _SEARCH_4P_200,
                    Measured(71.8, (69.8, 73.7), _tournament(_SEARCH_4P_200, 4, 18), 19.9, _TIME.format(n=4)),
                ),
            },
        ),
        Bot(
            "counter-expert",
            "a specialist: the best reply to a model of expert's play fitted to its records (weaker against others)",
            {
                (2, False): Setting(
                    _COUNTER_2P, Measured(91.3, (90.0, 92.5), _tournament(_COUNTER_2P, 2, 17), 32.4, _TIME.format(n=2))
                ),
                (4, True): Setting(
                    _COUNTER_4P, Measured(75.4, (73.5, 77.2), _tournament(_COUNTER_4P, 4, 18), 61.1, _TIME.format(n=4))
                ),
            },
            generic=False,
        ),
    )
}


def bot_spec(name: str, num_players: int, partnerships: bool = False) -> str:
    """The agent spec of bot ``name`` for a game; ``ValueError`` for an unknown name or a game it has no setting for."""
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; the bots: {', '.join(BOTS)}")
    return BOTS[name].setting(num_players, partnerships).spec


def bots_table(specialists: bool = False) -> str:
    """The Markdown table of the bots that play every opponent alike (the README's, and ``allfives
    bots --markdown``); ``specialists`` adds the others (``counter-expert``)."""
    games = [(2, False), (3, False), (4, True)]
    head = "| bot | what it is | " + " | ".join(f"{describe_game(g)}: vs `expert`, time a move" for g in games) + " |"
    rows = [head, "|---|---|" + "---|" * len(games)]
    for bot in BOTS.values():
        if not (bot.generic or specialists):
            continue
        cells = []
        for game in games:
            setting = bot.settings.get(game)
            if setting is None:
                cells.append("-")
            else:
                m = setting.measured
                cells.append(f"{m.win_rate:.1f}% [{m.ci[0]:.1f}, {m.ci[1]:.1f}], {m.ms_per_move:.2g} ms")
        rows.append(f"| `{bot.name}` | {bot.summary} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def bots_results() -> str:
    """Every named bot's setting per game with its figures and the commands that measured them
    (docs/results.md's "The named bots" holds it; tests/test_bots.py keeps them equal)."""
    rows = [
        "| bot | game | agent spec | vs `expert` | 95% CI | measured by | time a move (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for bot in BOTS.values():
        for game, setting in bot.settings.items():
            m = setting.measured
            rows.append(
                f"| `{bot.name}` | {describe_game(game)} | `{setting.spec}` | {m.win_rate:.1f}% | [{m.ci[0]:.1f}, {m.ci[1]:.1f}] "
                f"| `{m.command}` | {m.ms_per_move:.2f} ms |"
            )
    return "\n".join(rows)
