"""The bots a web game may seat, by id: the page names an id, never an agent spec or a file.

The menu is the named bots that play every opponent alike (``allfives_agents.bots``: ``fast``, ``strong``,
``strongest``), each picking its setting for the game, then the hand-written baselines. A named
bot lists the games it has settings for, so the page can say so; the server refuses it for
another game when the game is created.
"""

from __future__ import annotations

from dataclasses import dataclass

from allfives_agents.bots import BOTS, describe_game


@dataclass(frozen=True)
class Bot:
    id: str
    spec: str
    label: str
    #: the games (num_players, partnerships) it has a setting for; ``None``: any game
    games: tuple[tuple[int, bool], ...] | None = None
    #: what the page calls it (``Strong``) and one line on how it plays
    name: str = ""
    summary: str = ""

    def to_dict(self) -> dict:
        games = None if self.games is None else [{"num_players": n, "partnerships": p} for n, p in self.games]
        return {"id": self.id, "label": self.label, "games": games, "name": self.name or self.id.capitalize(),
                "summary": self.summary}


def bot_choices() -> dict[str, Bot]:
    """Every bot the page may choose, by id (the named bots first)."""
    named = [
        Bot(name, name, f"{name}: {bot.summary} ({', '.join(describe_game(g) for g in bot.settings)})", tuple(bot.settings),
            name.capitalize(), bot.summary)
        for name, bot in BOTS.items()
        if bot.generic
    ]
    bots = named + [
        Bot("expert", "expert", "expert (hand-written heuristic)", None, "Expert", "a hand-written heuristic"),
        Bot("greedy", "greedy", "greedy (most points now)", None, "Greedy", "the most points now"),
        Bot("random", "random", "random", None, "Random", "any legal move"),
    ]
    return {bot.id: bot for bot in bots}
