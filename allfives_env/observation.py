"""The observation spec (``OBS_VERSION`` 1): one flat float32 vector per seat, built from a ``PlayerView``.

The vector is egocentric: "relative seat" ``r`` is the seat ``r`` places after the viewer in turn
order (``r = 0`` is the viewer; with partnerships ``r = 2`` is the partner); pieces for seats that do
not exist in a smaller game are zero. Every value lies in [-1, 1]. The pieces, in order, are
listed in ``PIECES`` (name, size, meaning); ``docs/observation.md`` is generated from that table,
and a frontend can build the same vector from it without this package.

The encoder needs only numpy and the engine's ``PlayerView``: the environment, the ONNX runtime
agent and the bot server all call ``encode``. ``encode_python`` is the reference implementation;
where the optional C accelerator (``allfives_env/_fastobs.c``) was built, ``encode`` uses it instead
and gives the same vectors, about two and a half times faster. Set ``ALLFIVES_PURE_PYTHON=1`` to turn it off.
"""

from __future__ import annotations

import os
from array import array

import numpy as np

from allfives_env.engine.tiles import CLOSED, NUM_ACTIONS, PIP_TILES, TILES, mask_pips

OBS_VERSION = 1

#: (name, size, meaning) of every piece, in vector order
PIECES: tuple[tuple[str, int, str], ...] = (
    ("hand", 28, "1 for each tile (index 0..27) in the viewer's hand"),
    ("played", 28, "1 for each tile on the table"),
    ("arm_pip", 28, "per arm (west, east, north, south), one-hot of the pip its end shows (7 each); zeros if the arm does not exist"),
    ("arm_open", 4, "per arm, 1 if it exists (west and east after the lead; north and south once both spinner sides are covered)"),
    ("arm_double", 4, "per arm, 1 if the tile at its end is a double (the spinner too, while an end of the west or east arm); 0 for an empty north or south arm"),
    ("arm_value", 4, "per arm, what its end counts now / 12"),
    ("spinner_pip", 7, "one-hot of the spinner's pip; zeros before the first double"),
    ("spinner_sides", 2, "[at least one spinner side covered, both sides covered]"),
    ("ends_total", 1, "the count of the open ends / 60, clipped to 1 (a lone double lead counts its pips once: 5-5 counts 10)"),
    ("lead", 1, "1 if the layout is empty (the viewer leads)"),
    ("forced", 1, "1 if the viewer drew a playable tile and must place it"),
    ("move_points", 112, "per action id, the points it would score now / 30 (0 for illegal actions); clipped to 1"),
    ("tile_counts", 4, "per relative seat, tiles in hand / 14, clipped to 1"),
    ("boneyard", 2, "[tiles in the boneyard / 28, tiles that can still be drawn / 28]"),
    ("missing_pips", 28, "per relative seat, 1 for each pip (7 each) that seat is known not to hold, from its draws and passes"),
    ("scores", 4, "per relative seat, its side's score / target, clipped to [-1, 1]"),
    ("target", 1, "target score / 500, clipped to 1"),
    ("seats", 4, "per relative seat, 1 if that seat exists"),
    ("partner", 4, "one-hot of the partner's relative seat (2) in a partnership game, else zeros"),
    ("num_players", 3, "one-hot of 2, 3, 4 players"),
    ("rules", 3, "[hand_end is winner_takes, boneyard_reserve / 28, tiles dealt per hand / 14]"),
    ("hand_pips", 1, "pips in the viewer's hand / 100, clipped to 1"),
    ("unseen_pips", 7, "per pip, tiles showing it that are neither in the viewer's hand nor on the table / 7"),
)

OFFSETS: dict[str, int] = {}
_offset = 0
for _name, _size, _ in PIECES:
    OFFSETS[_name] = _offset
    _offset += _size
OBS_SIZE = _offset
del _offset, _name, _size

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

_ZEROS = array("f", bytes(4 * OBS_SIZE))
#: 7 bits of a mask as float32 rows, to expand a 28-bit mask in four slice copies (a 2**14-row table
#: would take two, but its rows miss the CPU cache on most reads, which is slower)
_BITS7 = [array("f", [(m >> b) & 1 for b in range(7)]) for m in range(1 << 7)]
_TEMPLATES: dict[int, tuple] = {}
_frombuffer = np.frombuffer
_float32 = np.float32
_int8 = np.int8


def _template(rules) -> tuple[array, tuple]:
    """Per ``Rules`` object (cached): the pieces that depend only on the rules, and per viewer the
    side of each seat in relative order."""
    entry = _TEMPLATES.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    o = _ZEROS[:]
    n = rules.num_players
    for r in range(n):
        o[_SEATS + r] = 1.0
    o[_TARGET] = min(rules.target_score / 500.0, 1.0)
    if rules.partnerships:
        o[_PARTNER + 2] = 1.0
    o[_NUM_PLAYERS + n - 2] = 1.0
    if rules.hand_end == "winner_takes":
        o[_RULES] = 1.0
    o[_RULES + 1] = rules.boneyard_reserve / 28.0
    o[_RULES + 2] = min(rules.tiles_per_hand / 14.0, 1.0)
    rel_sides = tuple(tuple(rules.side_of[(v + r) % n] for r in range(n)) for v in range(n))
    if len(_TEMPLATES) > 64:
        _TEMPLATES.clear()
    entry = (o, rel_sides)
    _TEMPLATES[id(rules)] = (rules, entry)
    return entry


def encode_python(view, out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector of ``view`` (a ``PlayerView``); copied into ``out`` when given."""
    rules = view.rules
    template, rel_sides = _template(rules)
    o = template[:]
    hand = view.hand
    played = view.played
    for start, mask in ((_HAND, hand), (_PLAYED, played)):
        o[start : start + 7] = _BITS7[mask & 127]
        o[start + 7 : start + 14] = _BITS7[mask >> 7 & 127]
        o[start + 14 : start + 21] = _BITS7[mask >> 14 & 127]
        o[start + 21 : start + 28] = _BITS7[mask >> 21]
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
            o[_ARM_VALUE + e] = values[e] / 12.0
    spinner = view.spinner
    if spinner >= 0:
        o[_SPIN_PIP + spinner] = 1.0
        covered = view.spinner_covered
        if covered >= 1:
            o[_SPIN_SIDES] = 1.0
            if covered >= 2:
                o[_SPIN_SIDES + 1] = 1.0
    count = view.count
    o[_TOTAL] = count / 60.0 if count < 60 else 1.0
    if view.lead < 0:
        o[_LEAD] = 1.0
    if view.forced_tile >= 0:
        o[_FORCED] = 1.0
    legal = view.legal_actions
    if legal:
        for a, pts in zip(legal, view.move_points()):
            if pts:
                o[_MOVE_POINTS + a] = pts / 30.0 if pts < 30 else 1.0
    n = rules.num_players
    v = view.seat
    counts = view.tile_counts
    missing = view.missing_pips
    scores = view.scores
    target = rules.target_score
    for r, side in enumerate(rel_sides[v]):  # relative seats
        seat = (v + r) % n
        c = counts[seat]
        o[_COUNTS + r] = c / 14.0 if c < 14 else 1.0
        if missing[seat]:
            o[_MISSING + 7 * r : _MISSING + 7 * r + 7] = _BITS7[missing[seat]]
        x = scores[side] / target
        o[_SCORES + r] = x if -1.0 <= x <= 1.0 else (1.0 if x > 0 else -1.0)
    o[_BONEYARD] = view.boneyard_size / 28.0
    o[_BONEYARD + 1] = view.drawable / 28.0
    hp = mask_pips(hand)
    o[_HAND_PIPS] = hp / 100.0 if hp < 100 else 1.0
    unseen = ~(hand | played)
    for p in range(7):
        o[_UNSEEN + p] = (PIP_TILES[p] & unseen).bit_count() / 7.0
    vec = _frombuffer(o, _float32)
    if out is not None:
        out[...] = vec
        return out
    return vec


def _load_accelerator():
    if os.environ.get("ALLFIVES_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from allfives_env import _fastobs
    except ImportError:
        return None
    _fastobs.configure(OFFSETS, OBS_SIZE, TILES)
    return _fastobs.fill


_fill = _load_accelerator()
#: whether ``encode`` runs the C accelerator
ACCELERATED = _fill is not None


def encode_c(view, out: np.ndarray | None = None) -> np.ndarray:
    """``encode_python`` by the C accelerator (only where it was built: ``ACCELERATED``)."""
    rules = view.rules
    template, rel_sides = _template(rules)
    o = template[:]
    _fill(o, view, rel_sides[view.seat], rules.target_score, view.move_points())
    vec = _frombuffer(o, _float32)
    if out is not None:
        out[...] = vec
        return out
    return vec


#: ``encode(view, out=None)``: the observation vector of ``view`` (a ``PlayerView``), copied into
#: ``out`` when given. The C accelerator where it was built, else ``encode_python``: the same bits.
encode = encode_c if ACCELERATED else encode_python


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
    size = next(s for n, s, _ in PIECES if n == name)
    return obs[..., OFFSETS[name] : OFFSETS[name] + size]


def spec_table() -> str:
    """The observation layout as a Markdown table (the body of docs/observation.md)."""
    lines = ["| piece | offset | size | meaning |", "|---|---|---|---|"]
    for name, size, meaning in PIECES:
        lines.append(f"| `{name}` | {OFFSETS[name]} | {size} | {meaning} |")
    lines.append(f"| total | | {OBS_SIZE} | |")
    return "\n".join(lines)
