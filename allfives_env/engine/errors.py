"""Errors the engine raises on bad moves and bad records."""

from __future__ import annotations

from .tiles import ACTION_END, ACTION_TILE, END_NAMES, NUM_ACTIONS, TILE_NAMES, action_name


class IllegalMoveError(ValueError):
    """A move that the rules do not allow now. The game is left exactly as it was.

    Attributes: ``action`` (what was asked), ``player``, ``tile`` and ``end`` (names, when the
    action decodes), ``legal`` (the legal action ids) and ``reason``.
    """

    def __init__(self, action, player: int, legal: list[int], reason: str):
        self.action = action
        self.player = player
        self.legal = list(legal)
        self.reason = reason
        self.tile = self.end = None
        if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < NUM_ACTIONS:
            self.tile = TILE_NAMES[ACTION_TILE[action]]
            self.end = END_NAMES[ACTION_END[action]]
            what = f"tile {self.tile} on {self.end} (action {action})"
        else:
            what = f"action {action!r}"
        legal_text = ", ".join(f"{a} ({action_name(a)})" for a in self.legal) or "none"
        super().__init__(f"illegal move for player {player}: {what}: {reason}; legal moves: {legal_text}")

    # so that it crosses process boundaries (vector env workers) whole, message and notes included
    def __reduce__(self):
        return type(self), (self.action, self.player, self.legal, self.reason), dict(self.__dict__, args=self.args)

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        self.args = state.pop("args", self.args)
        self.__dict__.update(state)


class GameOverError(RuntimeError):
    """A move was asked for after the game ended."""


class RecordError(ValueError):
    """A game record that is malformed or breaks a rule; the message names the game, hand and event."""
