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

__all__ = ["TILES_WITH_PIPS", "allowed_mask", "unseen_mask", "sample_hidden", "determinize", "world_game"]


def sample_hidden(view, rng: random.Random, tries: int = 30) -> tuple[list[int], list[int]]:
    """Hands (tile masks per seat, the viewer's own included) and a boneyard order, consistent with ``view``.

    Seats are filled most-constrained first, each with a uniform sample of the tiles it may hold;
    if that dead-ends (rare), it retries, and after ``tries`` attempts ignores the known-missing
    pips rather than fail.
    """
    n = view.rules.num_players
    unseen = unseen_mask(view)
    counts = view.tile_counts
    others = [s for s in range(n) if s != view.seat]
    allow = {s: allowed_mask(view, s, unseen) for s in others}
    order = sorted(others, key=lambda s: allow[s].bit_count() - counts[s])
    for attempt in range(tries + 1):
        strict = attempt < tries
        hands = [0] * n
        hands[view.seat] = view.hand
        remaining = unseen
        for s in order:
            pool = mask_tiles(remaining & allow[s] if strict else remaining)
            if len(pool) < counts[s]:
                break
            chosen = tiles_mask(rng.sample(pool, counts[s]))
            hands[s] = chosen
            remaining &= ~chosen
        else:
            boneyard = mask_tiles(remaining)
            rng.shuffle(boneyard)
            return hands, boneyard
    raise ValueError("the view is inconsistent: its tile counts do not fit the unseen tiles")


def determinize(view, rng: random.Random, max_hands: int | None = 1) -> Game:
    """A ``Game`` at the view's position with hidden tiles sampled (the search's "possible world")."""
    hands, boneyard = sample_hidden(view, rng)
    return world_game(view, hands, boneyard, rng, max_hands)


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
