"""The observation spec: one flat float32 vector per seat, built from a ``PlayerView``.

Four versions share one table. Version 1 (``OBS_SIZE`` values) holds the pieces of ``PIECES``; each
later version appends its pieces (``VERSION_PIECES``) to the one before, so a vector starts with the
vector of every earlier version of the same view. Version 2 appends ``LOOKAHEAD_PIECES``: the tiles
each other seat may hold and, per action id, what the move leaves for the replies
(``allfives_env.lookahead``); version 3 ``FOLLOW_UP_PIECES``, the seat's expected best next move after
the next seat's reply; version 4, ``OBS_VERSION`` (the environments' default and the version every
shipped policy reads), ``FOLLOW_UP_NET_PIECES``, that follow-up judged one exchange deeper.
``OBS_SIZES`` gives each version's size and ``encoder(version)`` its encoder; a policy records the
version it was trained on.

The vector is egocentric: "relative seat" ``r`` is the seat ``r`` places after the viewer in turn
order (``r = 0`` is the viewer; with partnerships ``r = 2`` is the partner); pieces for seats that do
not exist in a smaller game are zero. Every value lies in [-1, 1]. The pieces, in order, are
listed in ``PIECES`` (name, size, scale, meaning); both encoders take their offsets and scales from
that table, ``docs/observation.md`` is generated from it, and a frontend can build the same vector
from it without this package.

The encoder needs only numpy and the engine's ``PlayerView``: the environment, the ONNX runtime
agent and the bot server all call ``encode``. ``encode_python`` is the reference implementation;
where the optional C accelerator (``allfives_env/_fastobs.c``) was built, ``encode`` uses it instead
and gives the same vectors, about two and a half times faster. ``encode_lookahead_python`` is the
reference of version 2; where the move facts' accelerator (``allfives_env/_fastlook.c``) was built
too, ``encode_lookahead`` is ``encode_lookahead_c``, which writes the per-move pieces from C and gives
the same vectors. Set ``ALLFIVES_PURE_PYTHON=1`` to turn both off.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple

import numpy as np

from allfives_env import accelerator, lookahead
from allfives_env.engine.tiles import CLOSED, NORTH, NUM_ACTIONS, NUM_TILES, PIP_TILES, SOUTH, TILES, mask_pips, mask_tiles

class Piece(NamedTuple):
    """One piece of the vector: ``size`` values from ``OFFSETS[name]`` on, each the quantity that
    ``meaning`` describes divided by ``scale`` (then clipped where ``meaning`` says so).

    ``scale`` is one of:

    - ``None``: flags and one-hots, written as 0 or 1;
    - a number, the divisor of every value;
    - a string, the name of the ``Rules`` field to divide by (``scores`` uses ``"target_score"``:
      each side's score as a fraction of the target);
    - a tuple of the above, one per value, for a piece that mixes them (``rules``).

    Only the pieces fixed by the rules (the encoder's per-``Rules`` template) and ``scores`` may
    name a ``Rules`` field; the other scales are numbers, handed to the C accelerator once by
    ``configure``.
    """

    name: str
    size: int
    scale: int | str | tuple[int | str | None, ...] | None
    meaning: str


#: every piece, in vector order
PIECES: tuple[Piece, ...] = (
    Piece("hand", 28, None, "1 for each tile (index 0..27) in the viewer's hand"),
    Piece("played", 28, None, "1 for each tile on the table"),
    Piece("arm_pip", 28, None, "per arm (west, east, north, south), one-hot of the pip its end shows (7 each); zeros if the arm does not exist"),
    Piece("arm_open", 4, None, "per arm, 1 if it exists (west and east after the lead; north and south once both spinner sides are covered)"),
    Piece("arm_double", 4, None, "per arm, 1 if the tile at its end is a double (the spinner too, while an end of the west or east arm); 0 for an empty north or south arm"),
    Piece("arm_value", 4, 12, "per arm, what its end counts now"),
    Piece("spinner_pip", 7, None, "one-hot of the spinner's pip; zeros before the first double"),
    Piece("spinner_sides", 2, None, "[at least one spinner side covered, both sides covered]"),
    Piece("ends_total", 1, 60, "the count of the open ends, clipped to 1 (a lone double lead counts its pips once: 5-5 counts 10)"),
    Piece("lead", 1, None, "1 if the layout is empty (the viewer leads)"),
    Piece("forced", 1, None, "1 if the viewer drew a playable tile and must place it"),
    Piece("move_points", 112, 30, "per action id, the points it would score now (0 for illegal actions), clipped to 1"),
    Piece("tile_counts", 4, 14, "per relative seat, tiles in hand, clipped to 1"),
    Piece("boneyard", 2, 28, "[tiles in the boneyard, tiles that can still be drawn]"),
    Piece("missing_pips", 28, None, "per relative seat, 1 for each pip (7 each) that seat is known not to hold, from its draws and passes"),
    Piece("scores", 4, "target_score", "per relative seat, its side's score, clipped to [-1, 1]"),
    Piece("target", 1, 500, "the target score, clipped to 1"),
    Piece("seats", 4, None, "per relative seat, 1 if that seat exists"),
    Piece("partner", 4, None, "one-hot of the partner's relative seat (2) in a partnership game, else zeros"),
    Piece("num_players", 3, None, "one-hot of 2, 3, 4 players"),
    Piece("rules", 3, (None, 28, 14), "[hand_end is winner_takes, boneyard_reserve, tiles dealt per hand (clipped to 1)]"),
    Piece("hand_pips", 1, 100, "pips in the viewer's hand, clipped to 1"),
    Piece("unseen_pips", 7, 7, "per pip, tiles showing it that are neither in the viewer's hand nor on the table"),
)

#: the pieces version 2 appends, computed by ``allfives_env.lookahead`` (zeros for illegal actions
#: and for seats that do not exist)
LOOKAHEAD_PIECES: tuple[Piece, ...] = (
    Piece("may_hold", 84, None, "per relative seat 1, 2, 3 (28 each), 1 for each tile that seat may hold: unseen by the viewer and showing no pip the seat is known to lack"),
    Piece("reply_threat", 112, 30, "per action id, the expected best points the next seat (an opponent) scores in reply after the move, each tile it may hold held with probability its tile count / tiles it may hold; clipped to 1"),
    Piece("reply_max", 112, 30, "per action id, the most the next seat could score in reply with a tile it may hold, clipped to 1"),
    Piece("reply_none", 112, 1, "per action id, the probability (same model) that the next seat holds no tile fitting the ends the move leaves, so it must draw or pass; 0 for a move that goes out"),
    Piece("partner_reply", 112, 30, "per action id, the expected best points of the partner's reply after the move (partnerships; else 0), clipped to 1"),
    Piece("mobility", 112, 9, "per action id, tiles left in the viewer's hand that fit the ends the move leaves, clipped to 1"),
    Piece("variety", 112, 7, "per action id, different pips left in the viewer's hand after the move"),
)
#: the piece version 3 appends: what the viewer itself can score next, per move (``lookahead.follow_up_of``)
FOLLOW_UP_PIECES: tuple[Piece, ...] = (
    Piece("follow_up", 112, 30, "per action id, the expected most the viewer scores with one tile on its next turn, once the next seat has replied to the move: the first tile it holds (same model) of those that fit, ranked by what each scores, on the end where it scores most; the ends as they are when it holds none (0 for a move that goes out); clipped to 1"),
)
#: the piece version 4 appends: the follow-up one exchange deeper (``lookahead.follow_up_net_of``)
FOLLOW_UP_NET_PIECES: tuple[Piece, ...] = (
    Piece("follow_up_net", 112, 30, "per action id, the follow-up judged one exchange deep: over the same replies of the next seat, the seat's best next move by the points it scores minus the next seat's expected best scoring reply to it (without the tile it just played); with no tile that fits, minus that reply on the ends as they are (0 for a move that goes out); may be negative; clipped to 1"),
)
#: the pieces each version appends to the one before it
VERSION_PIECES: dict[int, tuple[Piece, ...]] = {1: PIECES, 2: LOOKAHEAD_PIECES, 3: FOLLOW_UP_PIECES, 4: FOLLOW_UP_NET_PIECES}
#: every piece of the latest version, in vector order
ALL_PIECES: tuple[Piece, ...] = PIECES + LOOKAHEAD_PIECES + FOLLOW_UP_PIECES + FOLLOW_UP_NET_PIECES

OFFSETS: dict[str, int] = {}
_offset = 0
for _piece in ALL_PIECES:
    OFFSETS[_piece.name] = _offset
    _offset += _piece.size
    if _piece is PIECES[-1]:
        OBS_SIZE = _offset
del _offset, _piece
#: the environments' default version, the one the shipped policies read (one contract: a policy
#: loaded as its library's docs say plays in an environment made with no options)
OBS_VERSION = 4
#: the size of each observation version's vector
OBS_SIZES: dict[int, int] = {v: sum(p.size for u in VERSION_PIECES if u <= v for p in VERSION_PIECES[u]) for v in VERSION_PIECES}
#: the ``scale`` of every piece, by name
SCALES: dict[str, int | str | tuple | None] = {p.name: p.scale for p in ALL_PIECES}

_HAND = OFFSETS["hand"]
_PLAYED = OFFSETS["played"]
_ARM_PIP = OFFSETS["arm_pip"]
_ARM_OPEN = OFFSETS["arm_open"]
_ARM_DOUBLE = OFFSETS["arm_double"]
_ARM_VALUE = OFFSETS["arm_value"]
_SPIN_PIP = OFFSETS["spinner_pip"]
_SPIN_SIDES = OFFSETS["spinner_sides"]
_TOTAL = OFFSETS["ends_total"]
_LEAD = OFFSETS["lead"]
_FORCED = OFFSETS["forced"]
_MOVE_POINTS = OFFSETS["move_points"]
_COUNTS = OFFSETS["tile_counts"]
_BONEYARD = OFFSETS["boneyard"]
_MISSING = OFFSETS["missing_pips"]
_SCORES = OFFSETS["scores"]
_TARGET = OFFSETS["target"]
_SEATS = OFFSETS["seats"]
_PARTNER = OFFSETS["partner"]
_NUM_PLAYERS = OFFSETS["num_players"]
_RULES = OFFSETS["rules"]
_HAND_PIPS = OFFSETS["hand_pips"]
_UNSEEN = OFFSETS["unseen_pips"]

_ARM_VALUE_SCALE = SCALES["arm_value"]
_TOTAL_SCALE = SCALES["ends_total"]
_MOVE_POINTS_SCALE = SCALES["move_points"]
_COUNTS_SCALE = SCALES["tile_counts"]
_BONEYARD_SCALE = SCALES["boneyard"]
_HAND_PIPS_SCALE = SCALES["hand_pips"]
_UNSEEN_SCALE = SCALES["unseen_pips"]

_ZEROS = array("f", bytes(4 * OBS_SIZE))
#: 7 bits of a mask as float32 rows, to expand a 28-bit mask in four slice copies (a 2**14-row table
#: would take two, but its rows miss the CPU cache on most reads, which is slower)
_BITS7 = [array("f", [(m >> b) & 1 for b in range(7)]) for m in range(1 << 7)]
_TEMPLATES: dict[int, tuple] = {}
_frombuffer = np.frombuffer
_float32 = np.float32
_int8 = np.int8


def _divisor(scale, rules):
    """A number ``scale`` as it is; a ``Rules`` field's name read from ``rules``."""
    return getattr(rules, scale) if isinstance(scale, str) else scale


def _per_rules(cache: dict, rules, build):
    """``build(rules)``, kept in ``cache`` per ``Rules`` object: by ``id`` with the object itself, so
    another object at a reused id is built again; the cache is emptied past 64 entries."""
    entry = cache.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    value = build(rules)
    if len(cache) > 64:
        cache.clear()
    cache[id(rules)] = (rules, value)
    return value


def _template(rules) -> tuple[array, tuple, int | float]:
    """Per ``Rules`` object (cached): the pieces that depend only on the rules, per viewer the side
    of each seat in relative order, and the divisor of the scores."""
    return _per_rules(_TEMPLATES, rules, _build_template)


def _build_template(rules) -> tuple[array, tuple, int | float]:
    o = _ZEROS[:]
    n = rules.num_players
    for r in range(n):
        o[_SEATS + r] = 1.0
    o[_TARGET] = min(rules.target_score / _divisor(SCALES["target"], rules), 1.0)
    if rules.partnerships:
        o[_PARTNER + 2] = 1.0
    o[_NUM_PLAYERS + n - 2] = 1.0
    if rules.hand_end == "winner_takes":
        o[_RULES] = 1.0
    _, reserve_scale, tiles_scale = SCALES["rules"]
    o[_RULES + 1] = rules.boneyard_reserve / _divisor(reserve_scale, rules)
    o[_RULES + 2] = min(rules.tiles_per_hand / _divisor(tiles_scale, rules), 1.0)
    rel_sides = tuple(tuple(rules.side_of[(v + r) % n] for r in range(n)) for v in range(n))
    return o, rel_sides, _divisor(SCALES["scores"], rules)


def _put_tiles(o: array, start: int, mask: int) -> None:
    """Write the 28-bit tile ``mask`` as 0/1 floats at ``o[start : start + 28]`` (four 7-bit copies)."""
    o[start : start + 7] = _BITS7[mask & 127]
    o[start + 7 : start + 14] = _BITS7[mask >> 7 & 127]
    o[start + 14 : start + 21] = _BITS7[mask >> 14 & 127]
    o[start + 21 : start + 28] = _BITS7[mask >> 21]


def _vector(o: array, out: np.ndarray | None) -> np.ndarray:
    """``o`` as a float32 vector; copied into ``out`` when given."""
    vec = _frombuffer(o, _float32)
    if out is not None:
        out[...] = vec
        return out
    return vec


def encode_python(view, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector of ``view`` (a ``PlayerView``); copied into ``out`` when given."""
    template, rel_sides, score_scale = _template(view.rules)
    o = template[:]
    _fill_python(o, view, rel_sides[view.seat], score_scale, view.move_points())
    return _vector(o, out)


def _fill_python(o: array, view, viewer_sides: tuple, score_scale, move_points: list[int]) -> None:
    """Write the pieces of ``view`` that its rules' template lacks into ``o`` (a copy of it, or a
    longer array starting with one): ``_fastobs.fill`` in Python. ``viewer_sides``: the side of each
    relative seat; ``move_points``: ``view.move_points()``."""
    rules = view.rules
    hand = view.hand
    played = view.played
    _put_tiles(o, _HAND, hand)
    _put_tiles(o, _PLAYED, played)
    pips = view.pips
    values = view.values
    doubles = view.double_ends
    for e in range(4):
        p = pips[e]
        if p != CLOSED:
            o[_ARM_PIP + 7 * e + p] = 1.0
            o[_ARM_OPEN + e] = 1.0
            if doubles >> e & 1:
                o[_ARM_DOUBLE + e] = 1.0
            o[_ARM_VALUE + e] = values[e] / _ARM_VALUE_SCALE
    spinner = view.spinner
    if spinner >= 0:
        o[_SPIN_PIP + spinner] = 1.0
        covered = view.spinner_covered
        if covered >= 1:
            o[_SPIN_SIDES] = 1.0
            if covered >= 2:
                o[_SPIN_SIDES + 1] = 1.0
    count = view.count
    o[_TOTAL] = count / _TOTAL_SCALE if count < _TOTAL_SCALE else 1.0
    if view.lead < 0:
        o[_LEAD] = 1.0
    if view.forced_tile >= 0:
        o[_FORCED] = 1.0
    legal = view.legal_actions
    if legal:
        s = _MOVE_POINTS_SCALE
        for a, pts in zip(legal, move_points):
            if pts:
                o[_MOVE_POINTS + a] = pts / s if pts < s else 1.0
    n = rules.num_players
    v = view.seat
    counts = view.tile_counts
    missing = view.missing_pips
    scores = view.scores
    s = _COUNTS_SCALE
    for r, side in enumerate(viewer_sides):  # relative seats
        seat = (v + r) % n
        c = counts[seat]
        o[_COUNTS + r] = c / s if c < s else 1.0
        if missing[seat]:
            o[_MISSING + 7 * r : _MISSING + 7 * r + 7] = _BITS7[missing[seat]]
        x = scores[side] / score_scale
        o[_SCORES + r] = x if -1.0 <= x <= 1.0 else (1.0 if x > 0 else -1.0)
    o[_BONEYARD] = view.boneyard_size / _BONEYARD_SCALE
    o[_BONEYARD + 1] = view.drawable / _BONEYARD_SCALE
    hp = mask_pips(hand)
    o[_HAND_PIPS] = hp / _HAND_PIPS_SCALE if hp < _HAND_PIPS_SCALE else 1.0
    unseen = ~(hand | played)
    s = _UNSEEN_SCALE
    for p in range(7):
        o[_UNSEEN + p] = (PIP_TILES[p] & unseen).bit_count() / s


_fastobs = accelerator.load("_fastobs")
if _fastobs is not None:
    _fastobs.configure(OFFSETS, SCALES, OBS_SIZE, TILES)
_fill = None if _fastobs is None else _fastobs.fill
#: whether ``encode`` runs the C accelerator
ACCELERATED = _fill is not None


def encode_c(view, out: np.ndarray | None = None) -> np.ndarray:
    """``encode_python`` by the C accelerator (only where it was built: ``ACCELERATED``)."""
    template, rel_sides, score_scale = _template(view.rules)
    o = template[:]
    _fill(o, view, rel_sides[view.seat], score_scale, view.move_points())
    return _vector(o, out)


def _fill_c(o: array, view, viewer_sides: tuple, score_scale, move_points: list[int]) -> None:
    """``_fill_python`` by the C accelerator, which takes a buffer of exactly ``OBS_SIZE`` values."""
    _fill(memoryview(o)[:OBS_SIZE], view, viewer_sides, score_scale, move_points)


#: ``encode(view, out=None)``: the observation vector of ``view`` (a ``PlayerView``), copied into
#: ``out`` when given. The C accelerator where it was built, else ``encode_python``: the same bits.
encode = encode_c if ACCELERATED else encode_python


#: per version with the lookahead pieces: the zeros after the version-1 vector
_TAILS = {v: array("f", bytes(4 * (OBS_SIZES[v] - OBS_SIZE))) for v in OBS_SIZES if v >= 2}
_MAY_HOLD = OFFSETS["may_hold"]
#: the relative seats ``may_hold`` has room for
_MAY_HOLD_SEATS = next(p.size for p in LOOKAHEAD_PIECES if p.name == "may_hold") // NUM_TILES
#: per lookahead piece after ``may_hold``: its offset, its scale, its field's index in ``MoveFacts``
_LOOKAHEAD = tuple((OFFSETS[name], float(SCALES[name]), lookahead.MoveFacts._fields.index(field)) for name, field in (
    ("reply_threat", "threat"), ("reply_max", "threat_max"), ("reply_none", "no_reply"),
    ("partner_reply", "partner"), ("mobility", "mobility"), ("variety", "variety"), ("follow_up", "follow_up"),
    ("follow_up_net", "follow_up_net"),
))


def _may_hold(view, ctx: lookahead.Context) -> list[int]:
    """The ``may_hold`` masks of ``view``: per other seat, from the next one on, the unseen tiles it may hold."""
    n = view.rules.num_players
    return [lookahead.allowed_mask(view, (view.seat + r) % n, ctx.unseen) for r in range(1, n)]


def encode_lookahead_python(view, out: np.ndarray | None = None) -> np.ndarray:
    """The version-2 vector of ``view``: ``encode(view)`` followed by ``LOOKAHEAD_PIECES`` (the
    reference implementation, from ``lookahead.facts_of_moves_python``)."""
    return _lookahead_python(view, 2, out)


def encode_follow_up_python(view, out: np.ndarray | None = None) -> np.ndarray:
    """The version-3 vector of ``view``: the version-2 vector followed by ``FOLLOW_UP_PIECES`` (the
    reference implementation)."""
    return _lookahead_python(view, 3, out)


def encode_follow_up_net_python(view, out: np.ndarray | None = None) -> np.ndarray:
    """The version-4 vector of ``view``: the version-3 vector followed by ``FOLLOW_UP_NET_PIECES``
    (the reference implementation)."""
    return _lookahead_python(view, 4, out)


def _lookahead_python(view, version: int, out: np.ndarray | None) -> np.ndarray:
    template, rel_sides, score_scale = _template(view.rules)
    o = template + _TAILS[version]
    size = OBS_SIZES[version]
    move_points = view.move_points()
    _fill_python(o, view, rel_sides[view.seat], score_scale, move_points)
    ctx = lookahead.context(view)
    for r, mask in enumerate(_may_hold(view, ctx)):
        _put_tiles(o, _MAY_HOLD + NUM_TILES * r, mask)
    for f in lookahead.facts_of_moves_python(view, ctx, move_points, follow_up=version >= 3, follow_up_net=version >= 4):
        if f.out:  # every lookahead piece of a move that goes out is 0
            continue
        a = f.action
        for offset, scale, i in _LOOKAHEAD:
            if offset >= size:
                continue
            x = f[i] / scale
            o[offset + a] = x if x < 1.0 else 1.0
    return _vector(o, out)


def _load_lookahead_accelerator():
    """The C accelerator's fill of the lookahead pieces of a view, or ``None`` (see ``lookahead.ACCELERATED``)."""
    if not (ACCELERATED and lookahead.ACCELERATED):
        return None
    _fastlook = accelerator.load("_fastlook")
    _fastlook.configure_pieces(_LOOKAHEAD, (_MAY_HOLD, _MAY_HOLD_SEATS), tuple(OBS_SIZES[v] for v in _TAILS))
    return _fastlook.fill_view


_fill_view = _load_lookahead_accelerator()
#: whether ``encode_lookahead`` runs the C accelerators (both: the version-1 pieces and the move facts)
LOOKAHEAD_ACCELERATED = _fill_view is not None
#: per ``Rules`` object: what ``encode_lookahead_c`` reads of the rules (``_lookahead_template``)
_LOOKAHEAD_TEMPLATES: dict[int, tuple] = {}


def _lookahead_template(rules) -> tuple[dict[int, array], tuple, int | float, tuple]:
    """Per version with the lookahead pieces, ``_template`` of ``rules`` with that version's zeros
    after it; and per seat ``lookahead.reply_seats`` (cached like ``_template``)."""
    return _per_rules(_LOOKAHEAD_TEMPLATES, rules, _build_lookahead_template)


def _build_lookahead_template(rules) -> tuple[dict[int, array], tuple, int | float, tuple]:
    template, rel_sides, score_scale = _template(rules)
    templates = {v: template + tail for v, tail in _TAILS.items()}
    return templates, rel_sides, score_scale, tuple(lookahead.reply_seats(rules, s) for s in range(rules.num_players))


def encode_lookahead_c(view, out: np.ndarray | None = None) -> np.ndarray:
    """``encode_lookahead_python`` by the C accelerators (only where built: ``LOOKAHEAD_ACCELERATED``).
    The reply models and may-hold masks of ``lookahead.context`` are made in C (``fill_view``)."""
    return _lookahead_c(view, 2, out)


def encode_follow_up_c(view, out: np.ndarray | None = None) -> np.ndarray:
    """``encode_follow_up_python`` by the C accelerators (only where built: ``LOOKAHEAD_ACCELERATED``)."""
    return _lookahead_c(view, 3, out)


def encode_follow_up_net_c(view, out: np.ndarray | None = None) -> np.ndarray:
    """``encode_follow_up_net_python`` by the C accelerators (only where built: ``LOOKAHEAD_ACCELERATED``)."""
    return _lookahead_c(view, 4, out)


def _lookahead_c(view, version: int, out: np.ndarray | None) -> np.ndarray:
    templates, rel_sides, score_scale, reply_seats = _lookahead_template(view.rules)
    o = templates[version][:]
    move_points = view.move_points()
    seat = view.seat
    _fill_c(o, view, rel_sides[seat], score_scale, move_points)
    nxt, partner = reply_seats[seat]
    _fill_view(o, seat, nxt, partner, view.hand, view.played, view.missing_pips, view.tile_counts,
               view.legal_actions, move_points, view.ends_after_moves())
    return _vector(o, out)


#: ``encode_lookahead(view, out=None)``: the version-2 vector of ``view``, ``encode(view)`` followed
#: by ``LOOKAHEAD_PIECES``. The C accelerators where built, else ``encode_lookahead_python``: the same bits.
encode_lookahead = encode_lookahead_c if LOOKAHEAD_ACCELERATED else encode_lookahead_python
#: ``encode_follow_up(view, out=None)``: the version-3 vector of ``view``, the version-2 vector followed
#: by ``FOLLOW_UP_PIECES``. The C accelerators where built, else ``encode_follow_up_python``: the same bits.
encode_follow_up = encode_follow_up_c if LOOKAHEAD_ACCELERATED else encode_follow_up_python
#: ``encode_follow_up_net(view, out=None)``: the version-4 vector of ``view``, the version-3 vector
#: followed by ``FOLLOW_UP_NET_PIECES``. The C accelerators where built, else ``encode_follow_up_net_python``.
encode_follow_up_net = encode_follow_up_net_c if LOOKAHEAD_ACCELERATED else encode_follow_up_net_python


#: the encoder of each observation version
ENCODERS = {1: encode, 2: encode_lookahead, 3: encode_follow_up, 4: encode_follow_up_net}


def _load_game_accelerator():
    """The C accelerator's observation of a seat of a ``Game`` (``_fastlook.observe_game``), or ``None``."""
    if _fill_view is None:
        return None
    _fastlook = accelerator.load("_fastlook")
    _fastlook.configure_view(OFFSETS, SCALES, OBS_SIZE, TILES, (NORTH, SOUTH))
    return _fastlook.observe_game


_observe_game = _load_game_accelerator()
#: whether ``observe_game`` builds the observation in C, without a ``PlayerView``
GAME_ACCELERATED = _observe_game is not None


def observe_game_python(game, seat: int, version: int = OBS_VERSION) -> tuple[np.ndarray, np.ndarray]:
    """The observation vector (of ``version``) and the action mask of ``seat`` in ``game`` (an engine
    ``Game``), by way of its ``PlayerView``: ``encoder(version)(view)`` and ``action_mask(view)``."""
    view = game.view(seat)
    return encoder(version)(view), action_mask(view)


def observe_game_c(game, seat: int, version: int = OBS_VERSION) -> tuple[np.ndarray, np.ndarray]:
    """``observe_game_python`` by the C accelerators (only where built: ``GAME_ACCELERATED``): the
    legal moves, their points and what each leaves are made in C from the game's layout, so no
    ``PlayerView`` is built. The same bits. ``GameObserver`` does the same for one rules and version
    with less work per call."""
    return GameObserver(game.rules, version, block=1)(game, seat)


class GameObserver:
    """``observe_game`` for the games of ``rules`` in one ``version``: called as ``(game, seat) ->
    (observation, action mask)``, what an environment, whose rules never change, calls at every
    decision. What it reads of the rules is looked up once, and the C accelerator writes each
    observation and mask into the next row of a block of ``block`` rows made in advance: each call
    returns arrays of their own (rows of a block, never written again), at the cost of one block's
    memory kept while any of its rows is. Pickles as its arguments."""

    __slots__ = ("rules", "version", "block", "_template", "_per_seat", "_rows", "_buffers", "_next")

    def __init__(self, rules, version: int = OBS_VERSION, block: int = 64) -> None:
        encoder(version)  # the error that names the versions
        self.rules = rules
        self.version = version
        self.block = block
        templates, rel_sides, score_scale, reply_seats = _lookahead_template(rules)
        self._template = _template(rules)[0] if version == 1 else templates[version]
        self._per_seat = tuple((rel_sides[s], score_scale, *reply_seats[s]) for s in range(rules.num_players))
        if GAME_ACCELERATED:  # without the accelerator every call goes through the view: no block
            self._new_block()

    def _new_block(self) -> None:
        obs = np.empty((self.block, OBS_SIZES[self.version]), np.float32)
        masks = np.empty((self.block, NUM_ACTIONS), np.int8)
        self._rows = list(zip(obs, masks))  # the arrays handed out, cut in one go
        self._buffers = (memoryview(obs).cast("B"), memoryview(masks).cast("B"))
        self._next = 0

    def __reduce__(self):
        return (GameObserver, (self.rules, self.version, self.block))

    def __call__(self, game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        if not GAME_ACCELERATED:
            return observe_game_python(game, seat, self.version)
        if type(seat) is not int or not 0 <= seat < len(self._per_seat):
            raise ValueError(f"seat must be 0..{len(self._per_seat) - 1}, got {seat!r}")
        i = self._next
        if i == self.block:
            self._new_block()
            i = 0
        sides, scale, nxt, partner = self._per_seat[seat]
        out, masks = self._buffers
        _observe_game(out, masks, i, self._template, game, seat, sides, scale, nxt, partner)
        self._next = i + 1  # only once the row is written: a refused call hands out nothing
        return self._rows[i]


#: ``observe_game(game, seat, version=OBS_VERSION)``: the observation vector and the action mask of a
#: seat of an engine ``Game``, what the environments give an agent. The C accelerators where built
#: (no ``PlayerView`` is made), else ``observe_game_python``: the same bits.
observe_game = observe_game_c if GAME_ACCELERATED else observe_game_python


def encoder(version: int):
    """``encode`` for version 1, ``encode_lookahead`` for 2, ``encode_follow_up`` for 3, ``encode_follow_up_net``
    for 4; ``ValueError`` for any other."""
    if type(version) is not int or version not in ENCODERS:
        raise ValueError(f"unknown observation version {version!r}; known: {', '.join(map(str, ENCODERS))}")
    return ENCODERS[version]


def obs_version_of_size(size: int) -> int:
    """The observation version whose vectors have ``size`` values (``ValueError`` if none)."""
    for version, n in OBS_SIZES.items():
        if n == size:
            return version
    raise ValueError(f"no observation version has {size} values (sizes: {OBS_SIZES})")


def check_layout(version, size) -> str | None:
    """Why a policy recorded for observation ``version`` and ``size`` cannot be fed here (``None``: it can)."""
    if version in OBS_SIZES and size == OBS_SIZES[version]:
        return None
    known = "; ".join(f"OBS_VERSION {v}: size {n}" for v, n in OBS_SIZES.items())
    return f"observations of size {size} (OBS_VERSION {version}), a layout this package does not build ({known})"


def action_mask(view, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask of the 112 action ids: 1 for the legal actions of ``view`` (all zero when not its turn)."""
    m = bytearray(NUM_ACTIONS)
    for a in view.legal_actions:
        m[a] = 1
    vec = _frombuffer(m, _int8)
    if out is not None:
        out[...] = vec
        return out
    return vec


def piece(obs: np.ndarray, name: str) -> np.ndarray:
    """The slice of an observation vector holding piece ``name``."""
    size = next(p.size for p in ALL_PIECES if p.name == name)
    return obs[..., OFFSETS[name] : OFFSETS[name] + size]


def _scale_text(scale) -> str:
    if scale is None:
        return ""
    if isinstance(scale, str):
        return f"`{scale}`"
    if isinstance(scale, tuple):
        return ", ".join(_scale_text(s) or "-" for s in scale)
    return str(scale)


def spec_table() -> str:
    """The observation layout as a Markdown table (the body of docs/observation.md)."""
    lines = ["| piece | offset | size | scale | meaning |", "|---|---|---|---|---|"]
    for p in ALL_PIECES:
        lines.append(f"| `{p.name}` | {OFFSETS[p.name]} | {p.size} | {_scale_text(p.scale)} | {p.meaning} |")
        for version, pieces in VERSION_PIECES.items():
            if p is pieces[-1]:
                lines.append(f"| total, version {version} | | {OBS_SIZES[version]} | | |")
    return "\n".join(lines)
