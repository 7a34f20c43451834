"""One web game: the engine's ``Game``, a person at one seat, bots at the others.

The person's moves and the bots' turns go through the engine one decision at a time
(``play``, ``advance``); what the page shows is ``state()``: the picture of the person's view
(``allfives_env.picture``), the legal moves grouped by tile, the scores and the game's log in
words (forced draws and passes included, as the engine carried them out). The page never decides
anything the rules decide. Every refusal is an ``ApiError`` (409 for a request out of turn, 422
for an illegal move).

Every decision is kept (``moves``), so a casual game can take the person's last move back: the
game is played again through the engine from its seed up to before that move (``takeback``).
Resigning ends the game at once; the other side with the most points wins. ``review`` (after the
end) steps through the game for ``review.Review``.
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

from .board import board
from .bots import Bot
from .explain import hand_summaries, rules_lines

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

    def __init__(self, game_id: str, rules: Rules, human: int, bots: list[Bot | None], hint: Bot, seed: int,
                 casual: bool = True) -> None:
        self.id = game_id
        self.seed = seed
        self.casual = casual
        self.resigned = False
        #: every decision so far, ``(seat, action)``, for ``takeback``
        self.moves: list[tuple[int, int]] = []
        self._review = None
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
        if self.over:
            raise ApiError(409, "the game is over")
        if game.current_player != self.human:
            raise ApiError(409, f"it is player {game.current_player}'s turn, not yours: advance the bots first")
        if isinstance(action, bool) or not isinstance(action, int):
            raise ApiError(422, f"action must be an integer action id, got {json.dumps(action)[:40]}")
        try:
            game.step(action)
        except IllegalMoveError as exc:
            raise ApiError(422, f"illegal move: {exc}") from None
        self.moves.append((self.human, action))

    def advance(self) -> None:
        """One bot decision: the bot to move plays (the engine then carries out any forced draws
        and passes up to the next decision)."""
        game = self.game
        if self.over:
            raise ApiError(409, "the game is over")
        seat = game.current_player
        if seat == self.human:
            raise ApiError(409, "it is your turn: the bots wait for your move")
        action = self.agents[seat].act(game.view(seat))
        game.step(action)
        self.moves.append((seat, action))

    @property
    def over(self) -> bool:
        return self.game.over or self.resigned

    def takeback(self) -> None:
        """Undo the person's last move and the bots' moves after it: the engine plays the game again
        from its seed up to before that move (409 in a rated game, after the end, or before any move)."""
        if not self.casual:
            raise ApiError(409, "takebacks are for casual games; this one was started with casual off")
        if self.over:
            raise ApiError(409, "the game is over")
        mine = [i for i, (seat, _) in enumerate(self.moves) if seat == self.human]
        if not mine:
            raise ApiError(409, "you have made no move to take back")
        kept = self.moves[:mine[-1]]
        game = Game(self.rules, self.seed)
        for _, action in kept:
            game.step(action)
        self.game, self.moves = game, kept

    def resign(self) -> None:
        """End the game now: the other side with the most points wins."""
        if self.over:
            raise ApiError(409, "the game is over")
        self.resigned = True

    def winner_side(self) -> int | None:
        if self.resigned:
            mine = self.rules.side_of[self.human]
            others = [k for k in range(self.rules.num_sides) if k != mine]
            return max(others, key=lambda k: self.game.scores[k])
        return self.game.winner

    def review(self):
        """The game's ``review.Review`` (409 before the end: it shows every hidden tile)."""
        from .review import Review

        if not self.over:
            raise ApiError(409, "the review is ready when the game is over (it shows every hidden tile)")
        if self._review is None:
            self._review = Review(self.game, self.human, self.names)
        return self._review

    def hint(self, max_worlds: int, max_seconds: float) -> dict:
        """The hint bot's preferred move, its per-move values, and the move analysis."""
        game = self.game
        if self.over or game.current_player != self.human:
            raise ApiError(409, "a hint is for your turn")
        view = game.view(self.human)
        choice, label, values = bot_preference(self.hinter, view)
        analysis = analyze(view, "greedy", min(HINT_WORLDS, max_worlds), seed=game.hand_index, seconds=max_seconds)
        moves = [dict(view.describe(a), value=v) for a, v in zip(view.legal_actions, values or [None] * len(view.legal_actions))]
        return {"bot": self.hint_bot.id, "move": view.describe(choice), "label": label, "moves": moves, "analysis": analysis}

    def record(self) -> dict:
        """The finished game as an ``allfives-record/1`` object (409 before the end: it shows every hand)."""
        if not self.over:
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
        side = self.winner_side()
        over = self.over
        to_move = -1 if over else game.current_player
        table = board(view)
        players = [{"seat": s, "name": self.names[s], "tiles": view.tile_counts[s], "side": self.rules.side_of[s],
                    "to_move": s == to_move} for s in range(self.rules.num_players)]
        return {
            "id": self.id,
            "rules": self.rules.to_dict(),
            "rules_text": rules_lines(self.rules),
            "seat": self.human,
            "names": self.names,
            "sides": sides,
            "scores": list(game.scores),
            "over": over,
            "resigned": self.resigned,
            "winner": None if side is None else sides[side],
            "to_move": to_move,
            "your_turn": not over and game.current_player == self.human,
            "casual": self.casual,
            "can_takeback": self.casual and not over and any(seat == self.human for seat, _ in self.moves),
            "hint_bot": self.hint_bot.id,
            "hand_number": view.hand_index + 1,
            "picture": svg(view),
            "board": table["svg"],
            "ends": table["ends"],
            "last": table["last"],
            "count": table["count"],
            "players": players,
            "boneyard": view.boneyard_size,
            "drawable": view.drawable,
            "hand": hand,
            "hands": hand_summaries(game, self.names, sides),
            "log": self.log(),
        }
