"""The live web games: unguessable ids, a cap on how many (in all and per client), idle ones expire,
one request at a time each."""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager

from allfives.server.service import ApiError

#: default caps on live games, in all and per client, and idle seconds before a game is dropped
#: (``allfives serve --ui-games/--ui-client-games/--ui-idle``)
MAX_GAMES, MAX_CLIENT_GAMES, IDLE_SECONDS = 64, 8, 1800.0


class GameStore:
    """The live ``WebGame`` objects by id, each with the client (address) that created it;
    ``clock`` (seconds) is replaceable for tests."""

    def __init__(self, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS, clock=time.monotonic,
                 max_client_games: int = MAX_CLIENT_GAMES) -> None:
        self.max_games = max_games
        self.max_client_games = max_client_games
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._games: dict = {}
        self._owners: dict[str, str] = {}
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
                self._owners.pop(game_id, None)

    def new_id(self) -> str:
        return secrets.token_urlsafe(18)

    def _check_room(self, client: str) -> None:
        self._sweep()
        if len(self._games) >= self.max_games:
            raise ApiError(503, f"the server holds its limit of {self.max_games} live games; "
                                f"try again when one ends or after {self.idle_seconds:g} s idle")
        held = sum(owner == client for owner in self._owners.values())
        if held >= self.max_client_games:
            raise ApiError(429, f"client {client} holds {held} live games, the limit per client (--ui-client-games "
                                f"{self.max_client_games}); delete one (DELETE /api/games/ID) or let one expire "
                                f"after {self.idle_seconds:g} s idle")

    def check_room(self, client: str = "-") -> None:
        """``ApiError`` 503 when the cap on live games is reached, 429 when ``client``'s is (before
        a new game is built)."""
        with self._lock:
            self._check_room(client)

    def add(self, game, client: str = "-") -> None:
        """Hold ``game``, created by ``client`` (503 or 429 if a cap was reached meanwhile)."""
        with self._lock:
            self._check_room(client)
            game.last_used = self.clock()
            self._games[game.id] = game
            self._owners[game.id] = client

    def remove(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise ApiError(404, f"no such game {game_id[:40]!r}")
            self._owners.pop(game_id, None)

    def take(self, game_id: str):
        """The game ``game_id``, locked for one request until ``give_back``: 404 for an unknown (or
        expired) id, 409 while another request for the same game is being answered."""
        with self._lock:
            self._sweep()
            game = self._games.get(game_id)
            if game is None:
                raise ApiError(404, f"no such game {game_id[:40]!r} (games expire after {self.idle_seconds:g} s idle)")
            if not game.lock.acquire(blocking=False):
                raise ApiError(409, "another request for this game is being answered; send one at a time")
        return game

    def give_back(self, game) -> None:
        game.last_used = self.clock()
        game.lock.release()

    @contextmanager
    def using(self, game_id: str):
        """``take`` and ``give_back`` around a block."""
        game = self.take(game_id)
        try:
            yield game
        finally:
            self.give_back(game)
