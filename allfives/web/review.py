"""A game review for the web page: every placement of a finished game (played on the page or read
from an uploaded ``allfives-record/1``), the position before it, and the person's moves rated.

The positions come from ``allfives_env.engine.record.replay_steps`` (the game's own deals and
placements played again through the engine). A move is rated by the move analysis the server
already offers (``allfives_agents.analysis.analyze``, greedy playouts, the same call as
``POST /analyze``): the points it lost against the best move by that estimate, with the 95%
intervals of both. Each rating is worked out on request, one move at a time, on the server's
analysis queue, and kept.
"""

from __future__ import annotations

import threading
import time

from allfives_agents.analysis import analyze
from allfives.server.service import ApiError
from allfives_env.engine.events import event_to_dict
from allfives_env.engine.record import replay_steps
from allfives_env.engine.tiles import END_NAMES, TILES

from .board import board

#: worlds a review's rating samples (the server's ``--analyze-worlds`` cap also applies), and its seed
REVIEW_WORLDS, REVIEW_SEED = 24, 0


class Review:
    """The review of ``game`` (a finished ``Game``) for the person at ``seat``."""

    def __init__(self, game, seat: int, names: list[str]) -> None:
        self.game = game
        self.seat = seat
        self.names = names
        self.moves = []
        for index, (h, placement, again, event) in enumerate(replay_steps(game)):
            _, player, tile, end, points = event
            self.moves.append({"index": index, "hand": h + 1, "placement": placement + 1, "seat": player,
                               "name": names[player], "tile": list(TILES[tile]),
                               "end": "lead" if placement == 0 else END_NAMES[end], "points": points,
                               "yours": player == seat, "choices": len(again.legal_actions())})
        self.ratings: dict[int, dict] = {}

    def summary(self) -> dict:
        return {"seat": self.seat, "names": self.names, "rules": self.game.rules.to_dict(),
                "final_scores": list(self.game.scores), "moves": self.moves}

    def _check(self, index) -> int:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.moves):
            raise ApiError(404, f"no move {index!r}: the game has moves 0..{len(self.moves) - 1}")
        return index

    def _game_before(self, index: int):
        for k, (_, _, again, _) in enumerate(replay_steps(self.game)):
            if k == index:
                return again
        raise AssertionError("unreachable")  # _check bounds the index

    def position(self, index: int) -> dict:
        """The position before move ``index`` as the mover saw it: the board, the mover's hand,
        the scores, and the ``POST /analyze`` body of that position."""
        index = self._check(index)
        again = self._game_before(index)
        mover = self.moves[index]["seat"]
        view = again.view(mover)
        table = board(view, f"before move {index + 1}")
        h = self.moves[index]["hand"] - 1
        position = {"rules": self.game.rules.to_dict(), "seat": mover,
                    "hand": [list(TILES[t]) for t in view.hand_tiles],
                    "history": [event_to_dict(e) for e in view.history],
                    "scores": list(self.game.hand_logs[h].scores_before)}
        return {"index": index, "move": self.moves[index], "board": table["svg"], "last": table["last"],
                "scores": list(view.scores), "hand": position["hand"], "position": position,
                "rating": self.ratings.get(index)}

    def rate(self, index: int, max_worlds: int, max_seconds: float) -> dict:
        """Move ``index`` rated: the analysis of its position, the points lost against the best move."""
        index = self._check(index)
        if index in self.ratings:
            return self.ratings[index]
        move = self.moves[index]
        again = self._game_before(index)
        view = again.view(move["seat"])
        worlds = min(REVIEW_WORLDS, max_worlds)
        start = time.perf_counter()
        analysis = analyze(view, "greedy", worlds, seed=REVIEW_SEED, seconds=max_seconds)
        chosen = next(m for m in analysis["moves"] if m["tile"] == move["tile"] and m["end"] == move["end"])
        best = analysis["moves"][0]
        loss = round(max(0.0, best["value"] - chosen["value"]), 3)
        rating = {"index": index, "loss": loss, "best": best, "chosen": chosen, "analysis": analysis,
                  "seconds": round(time.perf_counter() - start, 3)}
        self.ratings[index] = rating
        return rating


class RecordReview:
    """An uploaded record held in the game store for its review: ``id``, ``lock`` and
    ``last_used`` as the store needs, and ``review()``."""

    def __init__(self, review_id: str, game, seat: int, players: list[str]) -> None:
        self.id = review_id
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        names = [f"player {s} ({name})" if s != seat else f"player {s} ({name}, you)" for s, name in enumerate(players)]
        self._review = Review(game, seat, names)

    def review(self) -> Review:
        return self._review
