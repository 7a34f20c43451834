"""What a seat can infer from its view, and what each of its moves leaves for the next replies.

The one home of two things that the ``expert`` heuristic, the search's world sampler
(``allfives_agents.search.belief``) and the lookahead pieces of the observation (versions 2 to 4) all read:

- **Belief facts**, from public information and the seat's own hand only: the tiles it has not
  seen (``unseen_mask``) and, per other seat, the unseen tiles that seat may hold given the pips it
  is known to lack (``allowed_mask``).
- **Move facts** (``move_facts``): for every legal move, what the layout after it offers the next
  seat and the partner, what the move leaves in hand, and what the seat itself can score next
  (``follow_up``). The reply model treats each tile a seat may hold as held independently with
  probability ``tiles it holds / tiles it may hold`` (at most 1).

Every placement and count comes from the engine's layout (``Layout`` and the functions beside
it: ``ends_after``, ``scoring_replies``, ``fitting_tiles``); nothing here restates a rule.

``facts_of_moves_python`` is the reference implementation of the move facts; where the optional C
accelerator (``allfives_env/_fastlook.c``) was built, ``facts_of_moves`` is ``facts_of_moves_c``,
which gives the same facts bit for bit from the engine's tables (``ACCELERATED``; set
``ALLFIVES_PURE_PYTHON=1`` to turn it off).
"""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

from allfives_env import accelerator
from allfives_env.engine.layout import (
    end_after_reply,
    fitting_tiles,
    placements_points,
    reply_tables,
    scoring_replies,
    tile_replies,
)
from allfives_env.engine.tiles import (
    ACTION_TILE,
    ALL_TILES_MASK,
    CLOSED,
    IS_DOUBLE,
    PIP_TILES,
    TILE_PIP_MASK,
    TILE_PIPS,
    mask_pip_set,
    mask_pips,
    mask_tiles,
)

#: ``TILES_WITH_PIPS[m]``: mask of the tiles showing any pip of the 7-bit mask ``m``
TILES_WITH_PIPS: tuple[int, ...] = tuple(
    functools.reduce(operator.or_, (PIP_TILES[p] for p in range(7) if m >> p & 1), 0) for m in range(128)
)


def unseen_mask(view) -> int:
    """Tiles the seat has not seen: in other hands or in the boneyard."""
    return ALL_TILES_MASK & ~view.hand & ~view.played


def allowed_mask(view, seat: int, unseen: int | None = None) -> int:
    """Unseen tiles that ``seat`` may hold, given the pips it is known to lack."""
    if unseen is None:
        unseen = unseen_mask(view)
    return unseen & ~TILES_WITH_PIPS[view.missing_pips[seat]]


def expected_best(values: list[int], p: float) -> float:
    """E[max] of independent prizes ``values``, each present with probability ``p`` (0 if none)."""
    if p <= 0.0 or not values:
        return 0.0
    values = sorted(values, reverse=True)
    miss = 1.0
    total = 0.0
    for v in values:
        if v <= 0:
            break
        total += v * p * miss
        miss *= 1.0 - p
    return total


class ReplyModel(NamedTuple):
    """A seat whose reply is modelled: the tiles it may hold, each held with probability ``p``."""

    seat: int
    allowed: int
    p: float


def reply_model(view, seat: int | None, unseen: int) -> ReplyModel | None:
    """The model of ``seat``'s reply; ``None`` for no seat, the viewer itself, or an empty hand."""
    if seat is None or seat == view.seat or view.tile_counts[seat] == 0:
        return None
    allowed = allowed_mask(view, seat, unseen)
    k = allowed.bit_count()
    return ReplyModel(seat, allowed, min(1.0, view.tile_counts[seat] / k) if k else 0.0)


class MoveFacts(NamedTuple):
    """What one legal move leaves (see ``move_facts``)."""

    action: int
    points: int  #: points it scores now
    out: bool  #: it places the seat's last tile
    threat: float  #: expected best points of the next seat's reply (0 when it is the partner or out)
    threat_max: int  #: the most the next seat could score in reply with a tile it may hold
    no_reply: float  #: probability that the next seat holds no tile that fits (it must draw or pass)
    partner: float  #: expected best points of the partner's reply (partnerships; else 0)
    pips_left: int  #: pips left in the seat's hand
    variety: int  #: different pips left in the seat's hand
    mobility: int  #: tiles left in the seat's hand that fit the ends the move leaves
    double: bool  #: the tile is a double
    follow_up: float  #: expected most the seat scores with one tile next turn, after the next seat's reply (``follow_up_of``)
    follow_up_net: float  #: the same turn judged one exchange deep: its best move net of the reply to it (``follow_up_net_of``)


def best_score(pips, values, hand: int) -> int:
    """The most one tile of ``hand`` scores on a started layout's ends ``pips``, ``values`` (0: none scores)."""
    replies = scoring_replies(pips, values, False, hand)
    return max(replies) if replies else 0


def after_next_reply(pips, values, nxt: ReplyModel | None, value) -> float:
    """The expected ``value(pips, values, allowed, p)`` of the ends once the next seat (``nxt``; ``None``:
    no reply) has replied on the ends ``pips``, ``values``: its fitting tiles ranked by the most each
    scores (``tile_replies``: ties to the lower tile, each on the first end where it scores that),
    the first one it holds (each with probability ``p``) played; holding none, it leaves the ends as
    they are. ``allowed`` is what it may still hold: after a reply, not the tile it played. The seats
    after it are not modelled, nor north and south opening on its reply."""
    allowed, p = (0, 0.0) if nxt is None else (nxt.allowed, nxt.p)
    miss = 1.0
    expected = 0.0
    for tile, end, _ in tile_replies(pips, values, allowed) if nxt is not None else ():
        after_pips, after_values = end_after_reply(pips, values, tile, end)
        expected += value(after_pips, after_values, allowed & ~(1 << tile), p) * p * miss
        miss *= 1.0 - p
    return expected + value(pips, values, allowed, p) * miss


def follow_up_of(pips, values, left: int, nxt: ReplyModel | None) -> float:
    """The expected most a seat holding ``left`` scores with one tile on its next turn, once the next
    seat (``nxt``: its reply model; ``None``: no reply) has replied on the ends ``pips``, ``values``
    (``after_next_reply``)."""
    return after_next_reply(pips, values, nxt, lambda pips, values, allowed, p: float(best_score(pips, values, left)))


def net_after(pips, values, left: int, allowed: int, p: float) -> float:
    """The seat's best next move on a started layout's ends ``pips``, ``values``, judged one exchange
    deep: the most, over the tiles of ``left`` and the ends each fits, of the points it scores there
    minus the expected best scoring reply (``expected_best``) of a seat holding each tile of
    ``allowed`` with probability ``p``, on the ends it leaves; holding no tile that fits, 0 minus
    that reply on the ends as they are (the seat draws or passes)."""
    best = None
    for e in range(4):
        if pips[e] == CLOSED:
            continue
        for t in mask_tiles(left & PIP_TILES[pips[e]]):
            after_pips, after_values = end_after_reply(pips, values, t, e)
            points = placements_points(pips, values, False, [4 * t + e])[0]
            v = float(points) - expected_best(scoring_replies(after_pips, after_values, False, allowed), p)
            if best is None or v > best:
                best = v
    if best is None:
        return 0.0 - expected_best(scoring_replies(pips, values, False, allowed), p)
    return best


def follow_up_net_of(pips, values, left: int, nxt: ReplyModel | None) -> float:
    """``follow_up_of`` one exchange deeper: the expected ``net_after`` of a seat holding ``left``
    once the next seat (``nxt``; ``None``: no reply) has replied on the ends ``pips``, ``values``
    (``after_next_reply``; after a reply the next seat no longer holds that tile)."""
    return after_next_reply(pips, values, nxt, lambda pips, values, allowed, p: net_after(pips, values, left, allowed, p))


class Context(NamedTuple):
    """Per-view facts the move facts share: the reply models and the unseen tiles."""

    unseen: int
    next_model: ReplyModel | None  #: the next seat, when it is an opponent
    partner_model: ReplyModel | None


def reply_seats(rules, seat: int) -> tuple[int, int]:
    """The seats whose replies ``context`` models for the viewer ``seat``, -1 for none: the next seat
    when it plays for another side, and the partner (what the C accelerator's ``fill_view`` reads)."""
    nxt = (seat + 1) % rules.num_players
    partner = rules.partner_of(seat)
    return (nxt if rules.side_of[nxt] != rules.side_of[seat] else -1, -1 if partner is None else partner)


def context(view) -> Context:
    """The reply models of ``view``: the next seat when it plays for another side, and the partner."""
    rules = view.rules
    unseen = unseen_mask(view)
    nxt = (view.seat + 1) % rules.num_players
    next_model = reply_model(view, nxt, unseen) if rules.side_of[nxt] != rules.side_of[view.seat] else None
    return Context(unseen, next_model, reply_model(view, rules.partner_of(view.seat), unseen))


def move_facts(view, ctx: Context | None = None, follow_up: bool = True) -> list[MoveFacts]:
    """The facts of every legal move of ``view``, in ``view.legal_actions`` order; ``follow_up=False``
    leaves the two follow-ups, the costliest facts, 0.0 (for a caller that does not read them)."""
    return facts_of_moves(view, context(view) if ctx is None else ctx, view.move_points(), follow_up)


def facts_of_moves_python(view, ctx: Context, move_points: list[int], follow_up: bool = True,
                          follow_up_net: bool | None = None) -> list[MoveFacts]:
    """``move_facts`` given the context and ``view.move_points()`` (for a caller that has them);
    ``follow_up_net=False`` leaves only the second follow-up 0.0 (a version-3 vector does not read it;
    ``None``: as ``follow_up``)."""
    nxt, partner = ctx.next_model, ctx.partner_model
    net = follow_up if follow_up_net is None else follow_up_net
    hand = view.hand
    out = []
    for action, points, after in zip(view.legal_actions, move_points, view.ends_after_moves()):
        t = ACTION_TILE[action]
        left = hand & ~(1 << t)
        if not left:
            out.append(MoveFacts(action, points, True, 0.0, 0, 0.0, 0.0, 0, 0, 0, IS_DOUBLE[t], 0.0, 0.0))
            continue
        pips, values = after
        fitting = fitting_tiles(pips)
        threat, threat_max, no_reply, partner_best = 0.0, 0, 0.0, 0.0
        if nxt is not None:
            replies = scoring_replies(pips, values, False, nxt.allowed)
            if replies:
                threat = expected_best(replies, nxt.p)
                threat_max = max(replies)
            no_reply = (1.0 - nxt.p) ** (nxt.allowed & fitting).bit_count()
        if partner is not None:
            replies = scoring_replies(pips, values, False, partner.allowed)
            if replies:
                partner_best = expected_best(replies, partner.p)
        out.append(
            MoveFacts(
                action,
                points,
                False,
                threat,
                threat_max,
                no_reply,
                partner_best,
                mask_pips(left),
                mask_pip_set(left).bit_count(),
                (left & fitting).bit_count(),
                IS_DOUBLE[t],
                follow_up_of(pips, values, left, nxt) if follow_up else 0.0,
                follow_up_net_of(pips, values, left, nxt) if net else 0.0,
            )
        )
    return out


def accelerator_tables() -> dict:
    """What ``_fastlook.configure`` takes: the engine's tables and the classes it reads and makes."""
    return {
        **reply_tables(),
        "pip_tiles": PIP_TILES,
        "tile_pips": TILE_PIPS,
        "tile_pip_mask": TILE_PIP_MASK,
        "is_double": IS_DOUBLE,
        "action_tile": ACTION_TILE,
        "tiles_with_pips": TILES_WITH_PIPS,
        "move_facts": MoveFacts,
        "reply_model": ReplyModel,
    }


_fast = accelerator.load("_fastlook")
if _fast is not None:
    _fast.configure(accelerator_tables())
#: whether ``facts_of_moves`` runs the C accelerator
ACCELERATED = _fast is not None


def facts_of_moves_c(view, ctx: Context, move_points: list[int], follow_up: bool = True) -> list[MoveFacts]:
    """``facts_of_moves_python`` by the C accelerator (only where it was built: ``ACCELERATED``)."""
    after = view.ends_after_moves()
    return _fast.move_facts(view.hand, view.legal_actions, move_points, after, ctx.next_model, ctx.partner_model, follow_up)


#: ``facts_of_moves(view, ctx, move_points, follow_up=True)``: ``move_facts`` given the context and
#: ``view.move_points()``. The C accelerator where it was built, else ``facts_of_moves_python``.
facts_of_moves = facts_of_moves_c if ACCELERATED else facts_of_moves_python
