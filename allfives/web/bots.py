"""The bots a web game may seat, by id: the page names an id, never an agent spec or a file.

Each choice is a registry spec (``agents.registry``): the hand-written bots, the search bot with
a capped budget, the shipped policies (``agents.models``) and the search guided by each of them
(``ismcts:policy=NAME``, docs/search.md); a policy's bots say the game it was trained for so the
page offers them only there (the server checks it again).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from agents.models import available_models, load_card

#: the search bot's budget: iterations per move (about 0.1 s on a 2-player opening)
SEARCH_ITERS = 1000


@dataclass(frozen=True)
class Bot:
    id: str
    spec: str
    label: str
    #: the (num_players, partnerships) the bot was trained for; ``None``: any game
    players: tuple[int, bool] | None = None

    def to_dict(self) -> dict:
        players = None if self.players is None else {"num_players": self.players[0], "partnerships": self.players[1]}
        return {"id": self.id, "label": self.label, "players": players}


def _shipped() -> list[Bot]:
    kind = "onnx" if importlib.util.find_spec("onnxruntime") else "ppo"
    out = []
    for name in available_models():
        rules = load_card(name).get("rules") or {}
        players = (rules["num_players"], bool(rules.get("partnerships"))) if "num_players" in rules else None
        out.append(Bot(name, f"{kind}:{name}", f"{name} (shipped policy)", players))
        out.append(Bot(f"search_{name}", f"ismcts:iters={SEARCH_ITERS},policy={name}",
                       f"search guided by {name} ({SEARCH_ITERS} iterations)", players))
    return out


def bot_choices() -> dict[str, Bot]:
    """Every bot the page may choose, by id (the shipped policies first)."""
    bots = _shipped() + [
        Bot("expert", "expert", "expert (hand-written heuristic)"),
        Bot("greedy", "greedy", "greedy (most points now)"),
        Bot("search", f"ismcts:iters={SEARCH_ITERS},rollout=greedy", f"search (ISMCTS, {SEARCH_ITERS} iterations)"),
        Bot("random", "random", "random"),
    ]
    return {bot.id: bot for bot in bots}
