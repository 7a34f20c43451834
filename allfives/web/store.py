"""The live web games: unguessable ids, a cap on how many, idle ones expire, one request at a time each."""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager

from allfives.server.service import ApiError

#: default cap on live games and idle seconds before a game is dropped (``allfives serve --ui-games/--ui-idle``)
MAX_GAMES, IDLE_SECONDS = 64, 1800.0


class GameStore:
    """The live ``WebGame`` objects by id; ``clock`` (seconds) is replaceable for tests."""

    def __init__(self, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS, clock=time.monotonic) -> None:
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._games: dict = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._games)

    def _sweep(self) -> None:
        """Drop the games idle for longer than ``idle_seconds`` (not one in use)."""
        now = self.clock()
        for game_id, game in list(self._games.items()):
            if now - game.last_used > self.idle_seconds and not game.lock.locked():
                del self._games[game_id]

    def new_id(self) -> str:
        return secrets.token_urlsafe(18)

    def _check_room(self) -> None:
        self._sweep()
        if len(self._games) >= self.max_games:
            raise ApiError(503, f"the server holds its limit of {self.max_games} live games; "
                                f"try again when one ends or after {self.idle_seconds:g} s idle")

    def check_room(self) -> None:
        """``ApiError`` 503 when the cap on live games is reached (before a new game is built)."""
        with self._lock:
            self._check_room()

    def add(self, game) -> None:
        """Hold ``game`` (503 if the cap was reached meanwhile)."""
        with self._lock:
            self._check_room()
            game.last_used = self.clock()
            self._games[game.id] = game

    def remove(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise ApiError(404, f"no such game {game_id[:40]!r}")

    @contextmanager
    def using(self, game_id: str):
        """The game ``game_id``, held for this request: 404 for an unknown (or expired) id, 409
        while another request for the same game is being answered."""
        with self._lock:
            self._sweep()
            game = self._games.get(game_id)
            if game is None:
                raise ApiError(404, f"no such game {game_id[:40]!r} (games expire after {self.idle_seconds:g} s idle)")
            if not game.lock.acquire(blocking=False):
                raise ApiError(409, "another request for this game is being answered; send one at a time")
        try:
            yield game
        finally:
            game.last_used = self.clock()
            game.lock.release()
