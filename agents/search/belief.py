"""What a seat can infer about hidden tiles, and sampling hidden hands consistent with its view.

Only public information and the seat's own hand are used: the tiles it has not seen (neither in
its hand nor on the table), every other seat's tile count, the boneyard size, and the pips each
seat is known not to hold (tracked by the engine from draws and passes). Those belief facts live in
``allfives_env.lookahead`` (the observation reads them too); this module samples worlds from them.
"""

from __future__ import annotations

import random

from allfives_env.engine import Game
from allfives_env.engine.tiles import mask_tiles, tiles_mask
from allfives_env.lookahead import TILES_WITH_PIPS, allowed_mask, unseen_mask

__all__ = ["TILES_WITH_PIPS", "allowed_mask", "unseen_mask", "HiddenSampler", "sample_hidden", "determinizer", "determinize", "world_game"]


class HiddenSampler:
    """``sample_hidden`` for one view, its belief facts worked out once (a search samples hundreds
    of worlds per decision): ``HiddenSampler(view)(rng)`` is ``sample_hidden(view, rng)``."""

    __slots__ = ("seat", "hand", "n", "unseen", "counts", "order", "allow", "tries")

    def __init__(self, view, tries: int = 30) -> None:
        self.seat, self.hand, self.n, self.tries = view.seat, view.hand, view.rules.num_players, tries
        self.unseen = unseen = unseen_mask(view)
        self.counts = view.tile_counts
        others = [s for s in range(self.n) if s != view.seat]
        allow = {s: allowed_mask(view, s, unseen) for s in others}
        self.order = sorted(others, key=lambda s: allow[s].bit_count() - self.counts[s])
        self.allow = [allow.get(s, 0) for s in range(self.n)]

    def __call__(self, rng: random.Random) -> tuple[list[int], list[int]]:
        counts, allow, sample = self.counts, self.allow, rng.sample
        for attempt in range(self.tries + 1):
            strict = attempt < self.tries
            hands = [0] * self.n
            hands[self.seat] = self.hand
            remaining = self.unseen
            for s in self.order:
                pool = mask_tiles(remaining & allow[s] if strict else remaining)
                if len(pool) < counts[s]:
                    break
                chosen = tiles_mask(sample(pool, counts[s]))
                hands[s] = chosen
                remaining &= ~chosen
            else:
                boneyard = mask_tiles(remaining)
                rng.shuffle(boneyard)
                return hands, boneyard
        raise ValueError("the view is inconsistent: its tile counts do not fit the unseen tiles")


def sample_hidden(view, rng: random.Random, tries: int = 30) -> tuple[list[int], list[int]]:
    """Hands (tile masks per seat, the viewer's own included) and a boneyard order, consistent with ``view``.

    Seats are filled most-constrained first, each with a uniform sample of the tiles it may hold;
    if that dead-ends (rare), it retries, and after ``tries`` attempts ignores the known-missing
    pips rather than fail.
    """
    return HiddenSampler(view, tries)(rng)


def determinizer(view, max_hands: int | None = 1):
    """``determinize`` for one view: a function of ``rng`` giving a fresh possible world per call."""
    sample = HiddenSampler(view)

    def world(rng: random.Random) -> Game:
        hands, boneyard = sample(rng)
        return world_game(view, hands, boneyard, rng, max_hands)

    return world


def determinize(view, rng: random.Random, max_hands: int | None = 1) -> Game:
    """A ``Game`` at the view's position with hidden tiles sampled (the search's "possible world")."""
    return determinizer(view, max_hands)(rng)


def world_game(view, hands: list[int], boneyard: list[int], rng: random.Random, max_hands: int | None = 1) -> Game:
    """A ``Game`` at the view's position with the given hidden hands and boneyard order."""
    return Game.resume(
        view.rules,
        hands=hands,
        boneyard=boneyard,
        drawable=view.drawable,
        layout=view.layout_copy(),
        scores=list(view.scores),
        current_player=view.current_player,
        forced=view.forced_tile,  # -1 unless the view's seat is to act
        passes=view.passes,
        missing=list(view.missing_pips),
        seed=rng.getrandbits(63),
        max_hands=max_hands,
    )
