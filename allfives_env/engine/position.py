"""Rebuild one seat's view of a hand from public facts: its own tiles and the history of events.

Frontends and the bot server know the seat's hand and what everybody did (in record form, with
other players' drawn tiles hidden), not the other hands. ``view_from_history`` checks that
history against the rules wherever public information allows (the turn order, every placement
and its points, passes only with nothing left to draw, the seat's own draws only when it could
not place a tile, its hand consistent with its plays and draws, tiles another seat played while
known to lack their pips) and returns the ``PlayerView`` an agent or encoder needs. Anything
impossible raises ``PositionError`` naming the event and the problem.
"""

from __future__ import annotations

from .events import DRAW, HIDDEN, PASS, PLAY, play_end
from .game import missing_after_turn
from .layout import Layout
from .rules import Rules
from .tiles import END_NAMES, TILE_NAMES, TILE_PIP_MASK, parse_end, tile_index
from .view import PlayerView


#: scores further from zero than this are refused (no real game comes close)
MAX_SCORE = 1_000_000


class PositionError(ValueError):
    """A position that the rules cannot reach; the message names the event or field."""


def _tile(value, where: str) -> int:
    try:
        return tile_index(value)
    except ValueError as exc:
        raise PositionError(f"{where}: {exc}") from None


def _seat(value, n: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise PositionError(f"{where}: player must be a seat 0..{n - 1}, got {value!r}")
    return value


def parse_events(events, n: int) -> list[tuple]:
    """Record-form events (dicts) as engine tuples; a draw's tile may be null (hidden)."""
    if not isinstance(events, list):
        raise PositionError(f"history must be a list of events, got {type(events).__name__}")
    out = []
    for i, e in enumerate(events):
        where = f"history event {i + 1}"
        if not isinstance(e, dict):
            raise PositionError(f"{where}: expected an object, got {type(e).__name__}")
        kind = e.get("type")
        player = _seat(e.get("player"), n, where)
        if kind == "play":
            unknown = set(e) - {"type", "player", "tile", "end", "points"}
            try:
                end = parse_end(e.get("end"))
            except ValueError as exc:
                raise PositionError(f"{where}: {exc}") from None
            points = e.get("points")
            if points is not None and (isinstance(points, bool) or not isinstance(points, int)):
                raise PositionError(f"{where}: points must be an integer, got {points!r}")
            out.append((PLAY, player, _tile(e.get("tile"), where), end, points))
        elif kind == "draw":
            unknown = set(e) - {"type", "player", "tile"}
            tile = e.get("tile")
            out.append((DRAW, player, HIDDEN if tile is None else _tile(tile, where)))
        elif kind == "pass":
            unknown = set(e) - {"type", "player"}
            out.append((PASS, player))
        else:
            raise PositionError(f"{where}: type must be play, draw or pass, got {kind!r}")
        if unknown:
            raise PositionError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    return out


def view_from_history(rules: Rules, seat: int, hand, history, scores=None, hand_index: int = 0) -> PlayerView:
    """The ``PlayerView`` of ``seat`` holding ``hand`` (tiles) after ``history`` (record-form events).

    ``scores`` are the side scores when the hand began (zeros by default). The seat must be the
    one to act, with at least one legal placement. Raises ``PositionError``.
    """
    n = rules.num_players
    seat = _seat(seat, n, "seat")
    if not isinstance(hand, list):
        raise PositionError(f"hand must be a list of tiles, got {type(hand).__name__}")
    hand_mask = 0
    for t in (_tile(x, "hand") for x in hand):
        if hand_mask >> t & 1:
            raise PositionError(f"hand: tile {TILE_NAMES[t]} appears twice")
        hand_mask |= 1 << t
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
    events = parse_events(history, n)

    # The seat's own hand at the start of the hand: what it holds now, plus what it played, minus
    # what it drew (its own draws show their tiles).
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

    layout = Layout()
    counts = [rules.tiles_per_hand] * n
    missing = [0] * n
    drawable = rules.boneyard_size - rules.boneyard_reserve
    drawn = passes = 0
    starter = events[0][1] if events else seat  # nothing played yet: the seat leads
    to_act = starter
    turn_draws = 0  # draws of the player to act this turn (the layout has not changed since they began)
    last_draw = HIDDEN
    side_of = rules.side_of
    for i, e in enumerate(events):
        where = f"history event {i + 1}"
        kind, player = e[0], e[1]
        if player != to_act:
            raise PositionError(f"{where}: it is player {to_act}'s turn, not player {player}'s")
        if kind == PLAY:
            t, end = e[2], e[3]
            try:
                a = play_end(end, layout.num_tiles == 0)
            except ValueError as exc:
                raise PositionError(f"{where}: {exc}") from None
            if layout.played >> t & 1:
                raise PositionError(f"{where}: {TILE_NAMES[t]} is already on the table")
            if player == seat:
                if not own >> t & 1:
                    raise PositionError(f"{where}: player {seat} does not hold {TILE_NAMES[t]}")
            elif hand_mask >> t & 1 or own_played >> t & 1:
                raise PositionError(f"{where}: {TILE_NAMES[t]} is in player {seat}'s hand")
            elif turn_draws == 0 and TILE_PIP_MASK[t] & missing[player]:
                raise PositionError(f"{where}: player {player} plays {TILE_NAMES[t]} but was known not to hold its pips")
            if turn_draws and player == seat and t != last_draw:
                raise PositionError(f"{where}: player {seat} drew {TILE_NAMES[last_draw]} and must place it")
            if not layout.fits(t, a):
                raise PositionError(f"{where}: {TILE_NAMES[t]} does not match the {END_NAMES[a]} end")
            if turn_draws:
                missing[player] = missing_after_turn(missing[player], layout.open_pips_mask(), turn_draws > 1)
            points = layout.place(t, a)
            if e[4] is None:
                events[i] = (PLAY, player, t, end, points)
            elif e[4] != points:
                raise PositionError(f"{where}: wrong points: {e[4]} given, the placement scores {points}")
            if player == seat:
                own &= ~(1 << t)
            counts[player] -= 1
            scores[side_of[player]] += points
            if scores[side_of[player]] >= rules.target_score:
                raise PositionError(f"{where}: side {side_of[player]} reaches the target: the game is over")
            if counts[player] == 0:
                raise PositionError(f"{where}: player {player} went out: the hand is over")
            passes = turn_draws = 0
            to_act = (player + 1) % n
        elif kind == DRAW:
            if layout.num_tiles == 0:
                raise PositionError(f"{where}: nobody draws before the lead")
            if drawn >= drawable:
                raise PositionError(f"{where}: nothing is left to draw")
            if turn_draws == 0:
                if player == seat and own & layout.open_tiles:
                    raise PositionError(f"{where}: draw while able to play: player {seat} holds a tile that fits")
            elif player == seat and layout.open_tiles >> last_draw & 1:
                raise PositionError(f"{where}: player {seat} drew {TILE_NAMES[last_draw]}, which fits, and must place it")
            if player == seat:
                own |= 1 << e[2]
            last_draw = e[2]
            turn_draws += 1
            drawn += 1
            counts[player] += 1
        else:  # PASS
            if layout.num_tiles == 0:
                raise PositionError(f"{where}: nobody passes before the lead")
            if drawn < drawable:
                raise PositionError(f"{where}: pass while tiles can be drawn")
            if player == seat and own & layout.open_tiles:
                raise PositionError(f"{where}: pass while able to play: player {seat} holds a tile that fits")
            missing[player] = missing_after_turn(missing[player], layout.open_pips_mask(), turn_draws > 0)
            passes += 1
            turn_draws = 0
            if passes >= n:
                raise PositionError(f"{where}: every player passed: the hand is blocked and over")
            to_act = (player + 1) % n

    if to_act != seat:
        raise PositionError(f"it is player {to_act}'s turn, not player {seat}'s")
    forced = -1
    if turn_draws:
        if not layout.open_tiles >> last_draw & 1:
            raise PositionError(f"the history ends with player {seat} drawing {TILE_NAMES[last_draw]}, which does not fit: it must draw again or pass")
        forced = last_draw
        missing[seat] = missing_after_turn(missing[seat], layout.open_pips_mask(), turn_draws > 1)
    legal = layout.actions_for(1 << forced if forced >= 0 else own)
    if not legal:
        need = "pass" if drawn >= drawable else "draw"
        raise PositionError(f"player {seat} has no legal placement: it must {need} (send that event in the history)")
    return PlayerView.from_public(
        rules,
        seat,
        own,
        layout,
        events,  # the view shows other seats' draws without their tiles
        current_player=seat,
        legal_actions=legal,
        forced_tile=forced,
        scores=scores,
        tile_counts=counts,
        boneyard_size=rules.boneyard_size - drawn,
        drawable=drawable - drawn,
        missing_pips=missing,
        passes=passes,
        hand_index=hand_index,
        starter=starter,
    )
