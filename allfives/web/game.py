"""One web game: the engine's ``Game``, a person at one seat, bots at the others.

The person's moves and the bots' turns go through the engine one decision at a time
(``play``, ``advance``); what the page shows is ``state()``: the picture of the person's view
(``allfives_env.picture``), the legal moves grouped by tile, the scores and the game's log in
words (forced draws and passes included, as the engine carried them out). The page never decides
anything the rules decide. Every refusal is an ``ApiError`` (409 for a request out of turn, 422
for an illegal move).
"""

from __future__ import annotations

import json
import random
import threading
import time

from allfives_agents import make_agent
from allfives_agents.analysis import analyze
from allfives.play import bot_preference
from allfives.server.service import ApiError
from allfives_env.engine import Game, Rules
from allfives_env.engine.errors import IllegalMoveError
from allfives_env.engine.events import public_event
from allfives_env.engine.tiles import ACTION_END, ACTION_TILE, END_NAMES, TILES
from allfives_env.picture import svg, tile_svg
from allfives_env.render import event_sentence, result_lines

from .bots import Bot

#: worlds the hint's move analysis samples at most (the server's /analyze cap also applies)
HINT_WORLDS = 100


def seat_names(rules: Rules, human: int, bots: list[Bot | None]) -> list[str]:
    return ["you" if s == human else f"player {s} ({bots[s].id})" for s in range(rules.num_players)]


def side_names(rules: Rules, names: list[str]) -> list[str]:
    if not rules.partnerships:
        return list(names)
    return [f"{names[s]} & {names[s + 2]}" for s in range(2)]


class WebGame:
    """A game held by the server. Callers hold ``lock`` around every call (one request at a time)."""

    def __init__(self, game_id: str, rules: Rules, human: int, bots: list[Bot | None], hint: Bot, seed: int) -> None:
        self.id = game_id
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.rules = rules
        self.human = human
        self.bots = bots
        rng = random.Random(seed)
        self.game = Game(rules, seed)
        self.agents = {}
        for seat, bot in enumerate(bots):
            if seat == human:
                continue
            self.agents[seat] = self._agent(bot, rng.getrandbits(63), f"seat {seat}")
        self.hint_bot = hint
        self.hinter = self._agent(hint, rng.getrandbits(63), "the hint")
        self.names = seat_names(rules, human, bots)

    def _agent(self, bot: Bot, seed: int, where: str):
        try:
            agent = make_agent(bot.spec, seed=seed, rules=self.rules)  # a network for another game is refused
        except (ValueError, ImportError) as exc:
            raise ApiError(422, f"{where}: bot {bot.id!r}: {exc}") from None
        return agent

    # -- turns ------------------------------------------------------------------------------

    def play(self, action) -> None:
        """The person's move (an action id the state listed)."""
        game = self.game
        if game.over:
            raise ApiError(409, "the game is over")
        if game.current_player != self.human:
            raise ApiError(409, f"it is player {game.current_player}'s turn, not yours: advance the bots first")
        if isinstance(action, bool) or not isinstance(action, int):
            raise ApiError(422, f"action must be an integer action id, got {json.dumps(action)[:40]}")
        try:
            game.step(action)
        except IllegalMoveError as exc:
            raise ApiError(422, f"illegal move: {exc}") from None

    def advance(self) -> None:
        """One bot decision: the bot to move plays (the engine then carries out any forced draws
        and passes up to the next decision)."""
        game = self.game
        if game.over:
            raise ApiError(409, "the game is over")
        seat = game.current_player
        if seat == self.human:
            raise ApiError(409, "it is your turn: the bots wait for your move")
        game.step(self.agents[seat].act(game.view(seat)))

    def hint(self, max_worlds: int, max_seconds: float) -> dict:
        """The hint bot's preferred move, its per-move values, and the move analysis."""
        game = self.game
        if game.over or game.current_player != self.human:
            raise ApiError(409, "a hint is for your turn")
        view = game.view(self.human)
        choice, label, values = bot_preference(self.hinter, view)
        analysis = analyze(view, "greedy", min(HINT_WORLDS, max_worlds), seed=game.hand_index, seconds=max_seconds)
        moves = [dict(view.describe(a), value=v) for a, v in zip(view.legal_actions, values or [None] * len(view.legal_actions))]
        return {"bot": self.hint_bot.id, "move": view.describe(choice), "label": label, "moves": moves, "analysis": analysis}

    def record(self) -> dict:
        """The finished game as an ``allfives-record/1`` object (409 before the end: it shows every hand)."""
        if not self.game.over:
            raise ApiError(409, "the record is ready when the game is over (it shows every hidden tile)")
        players = ["human" if s == self.human else self.bots[s].spec for s in range(self.rules.num_players)]
        return self.game.to_record(players)

    # -- what the page shows ----------------------------------------------------------------

    def log(self) -> list[str]:
        """The game so far in sentences, as the person saw it: each hand's start, its events, its result."""
        sides = side_names(self.rules, self.names)
        lines = []
        for h, hand in enumerate(self.game.hand_logs):
            lines.append(f"hand {h + 1}: {self.names[hand.starter]} to start")
            lines += [event_sentence(public_event(e, self.human), self.names) for e in hand.events]
            if hand.result is not None:
                lines += result_lines(hand.result, h + 1, self.names, sides)
        return lines

    def state(self) -> dict:
        game = self.game
        view = game.view(self.human)
        by_tile: dict[int, list[dict]] = {}
        for action, points in zip(view.legal_actions, view.move_points()):
            end = "lead" if view.lead < 0 else END_NAMES[ACTION_END[action]]
            by_tile.setdefault(ACTION_TILE[action], []).append({"action": action, "end": end, "points": points})
        hand = [{"tile": list(TILES[t]), "svg": tile_svg(*TILES[t]), "moves": by_tile.get(t, [])} for t in view.hand_tiles]
        sides = side_names(self.rules, self.names)
        winner = None if game.winner is None else sides[game.winner]
        return {
            "id": self.id,
            "rules": self.rules.to_dict(),
            "seat": self.human,
            "names": self.names,
            "sides": sides,
            "scores": list(game.scores),
            "over": game.over,
            "winner": winner,
            "to_move": game.current_player,
            "your_turn": not game.over and game.current_player == self.human,
            "hint_bot": self.hint_bot.id,
            "picture": svg(view),
            "hand": hand,
            "log": self.log(),
        }
