"""Rebuild one seat's view of a hand from public facts: its own tiles and the history of events.

Frontends and the bot server know the seat's hand and what everybody did (in record form, with
other players' drawn tiles hidden), not the other hands. ``view_from_history`` checks that
history against the rules wherever public information allows (the turn order, every placement
and its points, passes only with nothing left to draw, the seat's own draws only when it could
not place a tile, its hand consistent with its plays and draws, tiles another seat played while
known to lack their pips) and returns the ``PlayerView`` an agent or encoder needs. Anything
impossible raises ``PositionError`` naming the event and the problem.

The turn rules come from ``turn`` and events are read by ``events.event_from_dict``, the ones
``Game`` and records use.
"""

from __future__ import annotations

from .events import DRAW, HIDDEN, PASS, PLAY, EventError, event_from_dict, play_end, seat_from_json, tile_from_json
from .layout import Layout
from .rules import Rules
from .tiles import END_NAMES, TILE_NAMES
from .turn import could_hold, is_blocked, missing_after_turn, next_seat, passes_after, turn_action
from .view import PlayerView

#: scores further from zero than this are refused (no real game comes close)
MAX_SCORE = 1_000_000


class PositionError(ValueError):
    """A position that the rules cannot reach; the message names the event or field."""


def parse_events(events, n: int) -> list[tuple]:
    """Record-form events (dicts) as engine tuples; a draw's tile may be null (hidden)."""
    if not isinstance(events, list):
        raise PositionError(f"history must be a list of events, got {type(events).__name__}")
    try:
        return [event_from_dict(e, n, strict=False, where=f"history event {i + 1}") for i, e in enumerate(events)]
    except EventError as exc:
        raise PositionError(str(exc)) from None


def view_from_history(rules: Rules, seat: int, hand, history, scores=None, hand_index: int = 0) -> PlayerView:
    """The ``PlayerView`` of ``seat`` holding ``hand`` (tiles) after ``history`` (record-form events).

    ``scores`` are the side scores when the hand began (zeros by default). The seat must be the
    one to act, with at least one legal placement. Raises ``PositionError``.
    """
    try:
        seat = seat_from_json(seat, rules.num_players, "seat")
        hand_mask = _hand_mask(hand)
    except EventError as exc:
        raise PositionError(str(exc)) from None
    scores = _start_scores(rules, scores)
    events = parse_events(history, rules.num_players)
    own, own_played = _dealt_hand(rules, seat, hand_mask, events)
    starter = events[0][1] if events else seat  # nothing played yet: the seat leads
    replay = _Replay(rules, seat, own, hand_mask | own_played, scores, starter)
    for i, e in enumerate(events):
        events[i] = replay.apply(e, f"history event {i + 1}")  # a play's points filled in
    return replay.view(events, hand_index)


def _hand_mask(hand) -> int:
    if not isinstance(hand, list):
        raise PositionError(f"hand must be a list of tiles, got {type(hand).__name__}")
    mask = 0
    for value in hand:
        t = tile_from_json(value, "hand", strict=False)
        if mask >> t & 1:
            raise PositionError(f"hand: tile {TILE_NAMES[t]} appears twice")
        mask |= 1 << t
    return mask


def _start_scores(rules: Rules, scores) -> list[int]:
    if scores is None:
        scores = [0] * rules.num_sides
    if not isinstance(scores, list) or len(scores) != rules.num_sides or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in scores
    ):
        raise PositionError(f"scores must be {rules.num_sides} integers (one per side), got {scores!r}")
    scores = list(scores)
    if any(abs(x) > MAX_SCORE for x in scores):
        raise PositionError(f"scores {scores}: each must be within +-{MAX_SCORE}")
    if max(scores) >= rules.target_score:
        raise PositionError(f"scores {scores}: a side has already reached the target {rules.target_score}")
    return scores


def _dealt_hand(rules: Rules, seat: int, hand_mask: int, events: list[tuple]) -> tuple[int, int]:
    """The seat's hand when the hand began (what it holds now, plus what it played, minus what it
    drew: its own draws show their tiles) and the tiles it played, as masks."""
    own_played = own_drawn = 0
    for e in events:
        if e[1] == seat and e[0] == PLAY:
            own_played |= 1 << e[2]
        elif e[1] == seat and e[0] == DRAW:
            if e[2] == HIDDEN:
                raise PositionError("history: the seat's own draws must show the tile drawn")
            own_drawn |= 1 << e[2]
    if own_played & hand_mask:
        raise PositionError(f"hand holds {TILE_NAMES[(own_played & hand_mask).bit_length() - 1]}, which the seat already played")
    own = (hand_mask | own_played) & ~own_drawn
    if own.bit_count() != rules.tiles_per_hand:
        raise PositionError(
            f"hand: {hand_mask.bit_count()} tiles now, after {own_played.bit_count()} played and {own_drawn.bit_count()} drawn, "
            f"means {own.bit_count()} dealt; the rules deal {rules.tiles_per_hand}"
        )
    return own, own_played


class _Replay:
    """The hand replayed event by event from ``seat``'s side, each event checked against the rules."""

    def __init__(self, rules: Rules, seat: int, own: int, seat_tiles: int, scores: list[int], starter: int) -> None:
        n = rules.num_players
        self.rules = rules
        self.seat = seat
        #: the seat's hand (it knows its own draws)
        self.own = own
        #: tiles that were in the seat's hand at some time, so that no other seat plays them
        self.seat_tiles = seat_tiles
        self.scores = scores
        self.starter = self.to_act = starter
        self.layout = Layout()
        self.counts = [rules.tiles_per_hand] * n
        self.missing = [0] * n
        self.drawable = rules.boneyard_size - rules.boneyard_reserve
        self.drawn = self.passes = 0
        #: draws of the player to act this turn (the layout has not changed since they began)
        self.turn_draws = 0
        self.last_draw = HIDDEN
        #: tiles other seats were seen to draw (a revealed draw cannot come twice)
        self.revealed = 0

    @property
    def can_draw(self) -> bool:
        return self.drawn < self.drawable

    def apply(self, e: tuple, where: str) -> tuple:
        """Check event ``e`` and carry it out; return it (a play with its points)."""
        if e[1] != self.to_act:
            raise PositionError(f"{where}: it is player {self.to_act}'s turn, not player {e[1]}'s")
        if e[0] == PLAY:
            return self._play(e, where)
        if e[0] == DRAW:
            self._draw(e, where)
        else:
            self._pass(e, where)
        return e

    def _play(self, e: tuple, where: str) -> tuple:
        _, player, t, end, given = e
        seat, layout, missing = self.seat, self.layout, self.missing
        try:
            a = play_end(end, layout.num_tiles == 0)
        except ValueError as exc:
            raise PositionError(f"{where}: {exc}") from None
        if layout.played >> t & 1:
            raise PositionError(f"{where}: {TILE_NAMES[t]} is already on the table")
        if player == seat:
            if not self.own >> t & 1:
                raise PositionError(f"{where}: player {seat} does not hold {TILE_NAMES[t]}")
        elif self.seat_tiles >> t & 1:
            raise PositionError(f"{where}: {TILE_NAMES[t]} is in player {seat}'s hand")
        elif self.turn_draws == 0 and not could_hold(t, missing[player]):
            raise PositionError(f"{where}: player {player} plays {TILE_NAMES[t]} but was known not to hold its pips")
        if self.turn_draws and player == seat and t != self.last_draw:
            raise PositionError(f"{where}: player {seat} drew {TILE_NAMES[self.last_draw]} and must place it")
        if not layout.fits(t, a):
            raise PositionError(f"{where}: {TILE_NAMES[t]} does not match the {END_NAMES[a]} end")
        if self.turn_draws:
            missing[player] = missing_after_turn(missing[player], layout.open_pips_mask(), self.turn_draws > 1)
        points = layout.place(t, a)
        if given is not None and given != points:
            raise PositionError(f"{where}: wrong points: {given} given, the placement scores {points}")
        if player == seat:
            self.own &= ~(1 << t)
        self.counts[player] -= 1
        side = self.rules.side_of[player]
        self.scores[side] += points
        if self.scores[side] >= self.rules.target_score:
            raise PositionError(f"{where}: side {side} reaches the target: the game is over")
        if self.counts[player] == 0:
            raise PositionError(f"{where}: player {player} went out: the hand is over")
        self.passes = passes_after(PLAY, self.passes)
        self.turn_draws = 0
        self.to_act = next_seat(player, self.rules.num_players)
        return (PLAY, player, t, end, points)

    def _draw(self, e: tuple, where: str) -> None:
        player, seat, layout = e[1], self.seat, self.layout
        if layout.num_tiles == 0:
            raise PositionError(f"{where}: nobody draws before the lead")
        if not self.can_draw:
            raise PositionError(f"{where}: nothing is left to draw")
        if player == seat and turn_action(self.own, layout.open_tiles, self.can_draw) == PLAY:
            if self.turn_draws == 0:
                raise PositionError(f"{where}: draw while able to play: player {seat} holds a tile that fits")
            drew = TILE_NAMES[self.last_draw]
            raise PositionError(f"{where}: player {seat} drew {drew}, which fits, and must place it")
        t = e[2]
        if player != seat and t != HIDDEN:  # another seat's draw that the history reveals
            if layout.played >> t & 1:
                raise PositionError(f"{where}: player {player} draws {TILE_NAMES[t]}, which is on the table")
            if self.seat_tiles >> t & 1:
                raise PositionError(f"{where}: player {player} draws {TILE_NAMES[t]}, which is in player {seat}'s hand")
            if self.revealed >> t & 1:
                raise PositionError(f"{where}: player {player} draws {TILE_NAMES[t]}, which was drawn before")
            self.revealed |= 1 << t
        if player == seat:
            self.own |= 1 << t
        self.last_draw = t
        self.turn_draws += 1
        self.drawn += 1
        self.counts[player] += 1

    def _pass(self, e: tuple, where: str) -> None:
        player, seat, layout = e[1], self.seat, self.layout
        if layout.num_tiles == 0:
            raise PositionError(f"{where}: nobody passes before the lead")
        if self.can_draw:
            raise PositionError(f"{where}: pass while tiles can be drawn")
        if player == seat and turn_action(self.own, layout.open_tiles, self.can_draw) == PLAY:
            raise PositionError(f"{where}: pass while able to play: player {seat} holds a tile that fits")
        self.missing[player] = missing_after_turn(self.missing[player], layout.open_pips_mask(), self.turn_draws > 0)
        self.passes = passes_after(PASS, self.passes)
        self.turn_draws = 0
        if is_blocked(self.passes, self.rules.num_players):
            raise PositionError(f"{where}: every player passed: the hand is blocked and over")
        self.to_act = next_seat(player, self.rules.num_players)

    def view(self, events: list[tuple], hand_index: int) -> PlayerView:
        """The seat's view once every event is in; the seat must be the one to place a tile."""
        seat, layout, rules = self.seat, self.layout, self.rules
        if self.to_act != seat:
            raise PositionError(f"it is player {self.to_act}'s turn, not player {seat}'s")
        action = turn_action(self.own, layout.open_tiles, self.can_draw)
        forced = -1
        if self.turn_draws:
            if action != PLAY:
                raise PositionError(
                    f"the history ends with player {seat} drawing {TILE_NAMES[self.last_draw]}, which does not fit: "
                    "it must draw again or pass"
                )
            forced = self.last_draw
            self.missing[seat] = missing_after_turn(self.missing[seat], layout.open_pips_mask(), self.turn_draws > 1)
        if action != PLAY:
            need = "pass" if action == PASS else "draw"
            raise PositionError(
                f"player {seat} has no legal placement: it must {need} (send that event in the history)"
            )
        legal = layout.actions_for(1 << forced if forced >= 0 else self.own)
        # the view shows other seats' draws without their tiles
        return self.public_view(seat, self.own, layout, events, legal, forced, hand_index)

    def public_view(self, seat: int, hand: int, layout: Layout, events: list[tuple], legal: list[int], forced: int, hand_index: int) -> PlayerView:
        """The view of ``seat`` (to act, holding ``hand``) at this point of the replay."""
        return PlayerView.from_public(
            self.rules,
            seat,
            hand,
            layout,
            events,
            current_player=seat,
            legal_actions=legal,
            forced_tile=forced,
            scores=self.scores,
            tile_counts=self.counts,
            boneyard_size=self.rules.boneyard_size - self.drawn,
            drawable=self.drawable - self.drawn,
            missing_pips=self.missing,
            passes=self.passes,
            hand_index=hand_index,
            starter=self.starter,
        )


def placement_views(view: PlayerView) -> list[tuple[int, PlayerView]]:
    """The choices other seats made in ``view``'s hand: for every placement by another seat that did
    not draw first that turn, its index in ``view.history`` and that seat's view just before it, with
    what ``view``'s seat cannot see left out (``hand`` 0, no legal actions) for the caller to fill in
    from a sampled world (``allfives_agents.search.inference``). The hand is replayed through the rules from its start.
    """
    rules, seat = view.rules, view.seat
    events = view.history
    scores = list(view.scores)
    for e in events:
        if e[0] == PLAY:
            scores[rules.side_of[e[1]]] -= e[4]
    own, own_played = _dealt_hand(rules, seat, view.hand, events)
    starter = events[0][1] if events else seat
    replay = _Replay(rules, seat, own, view.hand | own_played, scores, starter)
    out = []
    for i, e in enumerate(events):
        if e[0] == PLAY and e[1] != seat and replay.turn_draws == 0:
            snapshot = replay.public_view(e[1], 0, replay.layout.copy(), events[:i], [], -1, view.hand_index)
            out.append((i, snapshot))
        replay.apply(e, f"history event {i + 1}")
    return out
