"""What one seat can see of a game: the input of every agent, encoder and frontend.

A ``PlayerView`` is a snapshot: it never changes when the game moves on. It holds no hidden
information (other hands, the boneyard's order); other players' draws appear without their tile.
"""

from __future__ import annotations

from .events import LEAD, PLAY, event_to_dict, public_events
from .layout import Layout, placement_points, placements_points
from .rules import Rules
from .tiles import ACTION_END, ACTION_TILE, END_NAMES, TILES, WEST, mask_tiles


#: draws a view as an SVG document, for notebooks (``PlayerView._repr_svg_``). The engine draws
#: nothing itself and imports nothing to draw: ``allfives_env`` (the package above it) sets this to
#: ``allfives_env.picture.svg``, loaded on first use. ``None``: notebooks show the text repr.
svg_renderer = None


class PlayerView:
    """One seat's view. Build it with ``Game.view(seat)`` (or ``player_view(game, seat)``)."""

    __slots__ = (
        "seat",
        "rules",
        "hand",
        "current_player",
        "legal_actions",
        "forced_tile",
        "scores",
        "tile_counts",
        "boneyard_size",
        "drawable",
        "missing_pips",
        "pips",
        "values",
        "double_ends",
        "spinner",
        "spinner_covered",
        "count",
        "played",
        "lead",
        "hand_index",
        "starter",
        "passes",
        "_layout",
        "_events",
        "_num_events",
    )

    def __init__(self, game, seat: int) -> None:
        if type(seat) is not int or not 0 <= seat < game.num_players:
            raise ValueError(f"seat must be 0..{game.num_players - 1}, got {seat!r}")
        layout = game.layout
        hands = game.hands
        to_act = game.current_player
        self.seat = seat
        self.rules: Rules = game.rules
        #: mask of the tiles in this seat's hand
        self.hand: int = hands[seat]
        self.current_player: int = to_act
        if to_act == seat:
            #: legal action ids when this seat is to act, else an empty list
            self.legal_actions: list[int] = game.legal_actions()
            #: the tile this seat just drew and must place, or -1
            self.forced_tile: int = game.forced
        else:
            self.legal_actions = []
            self.forced_tile = -1
        self.scores: tuple[int, ...] = tuple(game.scores)
        self.tile_counts: tuple[int, ...] = tuple(map(int.bit_count, hands))
        #: tiles left in the boneyard (the reserve included)
        self.boneyard_size: int = len(game.boneyard) - game.draw_pos
        #: tiles that can still be drawn
        self.drawable: int = game.draw_limit - game.draw_pos
        #: per seat, 7-bit mask of pips that seat is known not to hold
        self.missing_pips: tuple[int, ...] = tuple(game.missing)
        self._take_layout(layout)
        self.hand_index: int = len(game.hand_logs) - 1
        self.starter: int = game.starter
        #: passes in a row since the last placement (the hand is blocked when every player passed)
        self.passes: int = game.passes
        self._events = game.events
        self._num_events = len(game.events)

    def _take_layout(self, layout: Layout) -> None:
        """Snapshot what the layout shows (both constructors)."""
        #: per arm (west, east, north, south): pip shown, ``CLOSED`` (7) if the arm does not exist
        self.pips: tuple[int, ...] = tuple(layout.pips)
        #: per arm: what its end counts now
        self.values: tuple[int, ...] = tuple(layout.values)
        #: bit ``e`` set when the tile at the end of arm ``e`` is a double
        self.double_ends: int = layout.double_ends
        #: pip of the spinner, or -1 before the first double
        self.spinner: int = layout.spinner
        #: how many of the spinner's two sides are covered
        self.spinner_covered: int = layout.spinner_covered
        #: total of the open ends
        self.count: int = layout.count
        #: mask of the tiles on the table
        self.played: int = layout.played
        #: the lead tile, or -1 before the lead
        self.lead: int = layout.lead
        self._layout = layout

    @classmethod
    def from_public(
        cls,
        rules: Rules,
        seat: int,
        hand: int,
        layout: Layout,
        events: list[tuple],
        *,
        current_player: int,
        legal_actions: list[int],
        forced_tile: int,
        scores: list[int],
        tile_counts: list[int],
        boneyard_size: int,
        drawable: int,
        missing_pips: list[int],
        passes: int,
        hand_index: int,
        starter: int,
    ) -> "PlayerView":
        """A view assembled from public facts (see ``engine.position``), without a ``Game``."""
        view = cls.__new__(cls)
        view.seat = seat
        view.rules = rules
        view.hand = hand
        view.current_player = current_player
        view.legal_actions = list(legal_actions)
        view.forced_tile = forced_tile
        view.scores = tuple(scores)
        view.tile_counts = tuple(tile_counts)
        view.boneyard_size = boneyard_size
        view.drawable = drawable
        view.missing_pips = tuple(missing_pips)
        view._take_layout(layout)
        view.hand_index = hand_index
        view.starter = starter
        view.passes = passes
        view._events = list(events)
        view._num_events = len(events)
        return view

    def _repr_svg_(self) -> str | None:
        """The picture of the view in a notebook (``svg_renderer``)."""
        return None if svg_renderer is None else svg_renderer(self)

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def hand_tiles(self) -> list[int]:
        """Tile indices in this seat's hand, ascending."""
        return mask_tiles(self.hand)

    @property
    def arms(self) -> list[list[int]]:
        """Tiles on each arm (west, east, north, south), from the centre outwards."""
        played = self.played  # the layout's arms grow in place; keep the tiles placed by then
        return [[t for t in arm if played >> t & 1] for arm in self._layout.arms]

    @property
    def history(self) -> list[tuple]:
        """This hand's events so far, as this seat sees them (engine tuples)."""
        return public_events(self._events, self.seat, 0, self._num_events)

    def history_dicts(self) -> list[dict]:
        """This hand's events so far in record form, as this seat sees them."""
        return [event_to_dict(e) for e in self.history]

    def side_of(self, seat: int) -> int:
        return self.rules.side_of[seat]

    @property
    def is_my_turn(self) -> bool:
        return self.current_player == self.seat

    def points_of(self, action: int) -> int:
        """Points a legal action of this seat would score now."""
        return placement_points(self.pips, self.values, self.lead < 0, ACTION_TILE[action], ACTION_END[action])

    def describe(self, action: int, points: int | None = None) -> dict:
        """A legal action in the JSON form of the bot server and the move analysis: ``action``,
        ``tile`` ``[a, b]``, ``end`` (``lead`` for the first tile of a hand) and the ``points`` it
        scores now (``points`` when the caller has them already)."""
        return {
            "action": action,
            "tile": list(TILES[ACTION_TILE[action]]),
            "end": "lead" if self.lead < 0 else END_NAMES[ACTION_END[action]],
            "points": self.points_of(action) if points is None else points,
        }

    def move_points(self) -> list[int]:
        """Points each of ``legal_actions`` would score now, in the same order."""
        return placements_points(self.pips, self.values, self.lead < 0, self.legal_actions)

    def layout_copy(self) -> Layout:
        """An independent ``Layout`` equal to the one this view saw (for search)."""
        return self._seen_layout().copy()

    def ends_after(self, action: int) -> tuple[list[int], list[int]]:
        """The arms' pips and values that a legal action of this seat would leave (``Layout.ends_after``)."""
        return self._seen_layout().ends_after(ACTION_TILE[action], ACTION_END[action])

    def ends_after_moves(self) -> list[tuple[list[int], list[int]]]:
        """``ends_after`` of each of ``legal_actions``, in the same order."""
        ends_after = self._seen_layout().ends_after
        return [ends_after(ACTION_TILE[a], ACTION_END[a]) for a in self.legal_actions]

    def _seen_layout(self) -> Layout:
        """The layout as this view saw it, not to be changed: the game's own while it has not moved
        on, else one rebuilt from the history (kept for the next call)."""
        if self._layout.played != self.played:
            self._layout = rebuild_layout(self.history)
        return self._layout


def rebuild_layout(events) -> Layout:
    """Replay the play events of a hand (engine tuples) onto an empty ``Layout``."""
    layout = Layout()
    for e in events:
        if e[0] == PLAY:
            layout.place(e[2], WEST if e[3] == LEAD else e[3])
    return layout
