"""A game of All Fives: deals, turns, forced draws and passes, scoring, hand ends, the target.

``Game`` is the one place where the rules of docs/specification.md are carried out. Everything random comes
from the seed: hand ``k`` uses ``random.Random(derive_seed(seed, "hand", k))`` for one shuffle of
the 28 tiles, then (first hand, or after a blocked hand) one ``randrange(num_players)`` for the
starting seat. The same rules and seed give the same game, move for move, given the same moves,
and hand ``k`` is dealt the same whatever happened in earlier hands.

A player is asked to choose (``current_player``, ``legal_actions``) only when they have at least
one legal placement; draws that cannot be avoided and passes are carried out by the engine and
recorded as events. When a hand ends and no side has reached the target, the next hand is dealt
at once, so ``current_player`` always names the seat to act until the game is over.
"""

from __future__ import annotations

import operator
import random
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from .errors import GameOverError, IllegalMoveError
from .events import DRAW, LEAD, PASS, PLAY, event_to_dict, tile_json
from .layout import Layout
from .limits import check_max_hands, check_seed
from .rules import Rules, rules_from
from .seeding import derive_seed
from .tiles import NUM_ACTIONS, NUM_TILES, mask_pips, mask_tiles, round_to_five, tiles_mask
from .turn import is_blocked, missing_after_turn, next_seat, passes_after, turn_action
from .view import PlayerView

RECORD_FORMAT = "allfives-record/1"


class Deal(NamedTuple):
    """An explicit deal: tile indices per seat, the boneyard in draw order, and the starting seat.

    ``starter=None`` lets the rules decide (the player who went out in the previous hand, else a
    random seat drawn from the game's seed).
    """

    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    starter: int | None = None


@dataclass
class HandLog:
    """Everything about one hand that a record needs."""

    starter: int
    deal: list[list[int]]
    boneyard: list[int]
    scores_before: list[int]
    events: list[tuple] = field(default_factory=list)
    result: dict | None = None

    def to_dict(self) -> dict:
        """The hand in record form."""
        return {
            "starter": self.starter,
            "deal": [[tile_json(t) for t in hand] for hand in self.deal],
            "boneyard": [tile_json(t) for t in self.boneyard],
            "events": [event_to_dict(e) for e in self.events],
            "result": self.result,
        }


def check_deal(rules: Rules, deal: Deal) -> None:
    """Raise ``ValueError`` naming the problem if ``deal`` is not a valid deal under ``rules``."""
    n = rules.num_players
    if len(deal.hands) != n:
        raise ValueError(f"deal has {len(deal.hands)} hands for {n} players")
    seen: dict[int, str] = {}
    for where, tiles in [(f"hand of seat {s}", h) for s, h in enumerate(deal.hands)] + [("boneyard", deal.boneyard)]:
        for t in tiles:
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < NUM_TILES:
                raise ValueError(f"{where} holds {t!r}, which is not a tile index 0..27")
            if t in seen:
                raise ValueError(f"tile {t} is dealt twice ({seen[t]} and {where})")
            seen[t] = where
    if len(seen) != NUM_TILES:
        raise ValueError(f"deal holds {len(seen)} tiles, not all {NUM_TILES}")
    for s, h in enumerate(deal.hands):
        if len(h) != rules.tiles_per_hand:
            raise ValueError(f"seat {s} is dealt {len(h)} tiles; the rules deal {rules.tiles_per_hand}")
    if deal.starter is not None and (
        isinstance(deal.starter, bool) or not isinstance(deal.starter, int) or not 0 <= deal.starter < n
    ):
        raise ValueError(f"starter must be a seat 0..{n - 1}, got {deal.starter!r}")


class Game:
    """A whole game of All Fives under one ``Rules``.

    ``Game(seed=7, num_players=4)`` builds the rules from options; ``Game(rules, seed)`` takes a
    ``Rules``. ``deals`` (an iterable of ``Deal``) replaces the random deals, hand after hand
    (when it runs out, hands are dealt from the seed again); ``scores`` starts from given side scores; ``max_hands`` stops the game (incomplete, no
    winner) after that many hands.
    """

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        *,
        deals: Iterable[Deal] | None = None,
        scores: list[int] | None = None,
        max_hands: int | None = None,
        **options,
    ) -> None:
        rules = rules_from(rules, options)
        if seed is None:
            seed = random.SystemRandom().randrange(2**63)
        check_seed(seed)
        check_max_hands(max_hands)
        if scores is None:
            scores = [0] * rules.num_sides
        elif len(scores) != rules.num_sides or not all(isinstance(x, int) for x in scores):
            raise ValueError(f"scores must be {rules.num_sides} integers (one per side), got {scores!r}")
        self._setup(rules, seed, scores, max_hands, deals)
        self._start_hand(None)

    def _setup(self, rules: Rules, seed: int, scores: list[int], max_hands: int | None, deals) -> None:
        """The state that lasts the whole game (both constructors)."""
        self.rules = rules
        self.seed = seed
        self.num_players = rules.num_players
        self.max_hands = max_hands
        self._deals = iter(deals) if deals is not None else None
        self._side_of = rules.side_of
        #: ``_following[s]``: the seat after ``s`` (``turn.next_seat`` as a table, for the hot loop)
        self._following = tuple(next_seat(s, rules.num_players) for s in range(rules.num_players))
        self._target = rules.target_score
        self.scores = list(scores)
        self.initial_scores = list(scores)
        self.hand_logs: list[HandLog] = []
        self.over = False
        #: winning side, or None while playing (or when stopped by ``max_hands``)
        self.winner: int | None = None

    @classmethod
    def resume(
        cls,
        rules: Rules,
        *,
        hands: list[int],
        boneyard: list[int],
        drawable: int,
        layout: Layout,
        scores: list[int],
        current_player: int,
        forced: int = -1,
        passes: int = 0,
        missing: list[int] | None = None,
        seed: int = 0,
        max_hands: int | None = 1,
    ) -> "Game":
        """A game continuing from a position mid-hand (for search over sampled hidden hands).

        ``hands`` are tile masks per seat, ``boneyard`` the undrawn tiles in draw order of which the
        first ``drawable`` can be drawn, ``layout`` is used as is (pass a copy). The position is
        trusted, not checked: it must be one the rules can reach. With the default
        ``max_hands=1`` the game stops when this hand ends; later hands are dealt from ``seed``.
        """
        game = cls.__new__(cls)
        game._setup(rules, seed, scores, max_hands, None)
        game._begin_hand(list(hands), [mask_tiles(h) for h in hands], list(boneyard), drawable, current_player, layout)
        game.passes = passes
        if missing is not None:
            game.missing = list(missing)
        game.forced = forced
        return game

    # ------------------------------------------------------------------ hands
    def _start_hand(self, went_out: int | None) -> None:
        rules = self.rules
        n = self.num_players
        # each hand draws from its own generator, so hand k's deal does not depend on how earlier
        # hands went (duplicate tournaments replay the same deals with the seats swapped)
        rng = random.Random(derive_seed(self.seed, "hand", len(self.hand_logs)))
        deal = next(self._deals, None) if self._deals is not None else None
        if deal is not None:
            deal = Deal(tuple(tuple(h) for h in deal.hands), tuple(deal.boneyard), deal.starter)
            check_deal(rules, deal)
            starter = deal.starter
            if starter is None:
                starter = went_out if went_out is not None else rng.randrange(n)
            elif went_out is not None and starter != went_out:
                raise ValueError(f"the starter must be seat {went_out}, who went out in the previous hand, not seat {starter}")
            hands = [list(h) for h in deal.hands]
            boneyard = list(deal.boneyard)
        else:
            tiles = list(range(NUM_TILES))
            rng.shuffle(tiles)
            k = rules.tiles_per_hand
            hands = [tiles[i * k : (i + 1) * k] for i in range(n)]
            boneyard = tiles[n * k :]
            starter = went_out if went_out is not None else rng.randrange(n)
        self._begin_hand([tiles_mask(h) for h in hands], hands, boneyard, len(boneyard) - rules.boneyard_reserve, starter, Layout())

    def _begin_hand(self, hands: list[int], dealt: list[list[int]], boneyard: list[int], draw_limit: int, starter: int, layout: Layout) -> None:
        """Open play of a hand: ``hands`` as tile masks (``dealt``: the same as tile lists, for the
        log), ``boneyard`` in draw order, ``starter`` to act on ``layout``."""
        self.hands = hands
        self.boneyard = boneyard
        self.draw_pos = 0
        self.draw_limit = draw_limit
        self.layout = layout
        self.passes = 0
        #: per seat, 7-bit mask of pips that seat is known not to hold (from its draws and passes),
        #: apart from a drawn tile it must place now
        self.missing = [0] * self.num_players
        self.forced = -1
        self.current_player = starter
        self.starter = starter
        self.events: list[tuple] = []
        self.hand_logs.append(HandLog(starter, dealt, boneyard[:], list(self.scores), self.events))

    @property
    def hand_index(self) -> int:
        """Number of the hand being played (0 for the first)."""
        return len(self.hand_logs) - 1

    # ------------------------------------------------------------------ queries
    def legal_actions(self) -> list[int]:
        """Action ids the player to act may choose, ascending (empty once the game is over)."""
        if self.over:
            return []
        if self.forced >= 0:
            return self.layout.actions_for(1 << self.forced)
        return self.layout.actions_for(self.hands[self.current_player])

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal for the player to act."""
        try:
            self.check(action)
        except (IllegalMoveError, GameOverError):
            return False
        return True

    def check(self, action) -> int:
        """``action`` as an int if it is legal now; else ``IllegalMoveError`` (or ``GameOverError``). Changes nothing."""
        if self.over:
            raise GameOverError("the game is over; no more moves")
        try:
            a = operator.index(action)
        except TypeError:
            raise IllegalMoveError(action, self.current_player, self.legal_actions(), "not an integer action id") from None
        if not 0 <= a < NUM_ACTIONS:
            raise IllegalMoveError(a, self.current_player, self.legal_actions(), "not an action id 0..111")
        t = a >> 2
        if not self.hands[self.current_player] >> t & 1:
            reason = "the tile is not in the player's hand"
        elif self.forced >= 0 and t != self.forced:
            reason = "the player drew a playable tile and must place it"
        elif not self.layout.fits(t, a & 3):
            reason = "the lead must use west" if self.layout.num_tiles == 0 else "the tile does not match that end"
        else:
            return a
        raise IllegalMoveError(a, self.current_player, self.legal_actions(), reason)

    def side_of(self, seat: int) -> int:
        """The side (scoring unit) a seat plays for."""
        return self._side_of[seat]

    def view(self, seat: int):
        """What ``seat`` can see now, as a ``PlayerView`` snapshot."""
        return PlayerView(self, seat)

    def hand_pips(self, seat: int) -> int:
        """Pips left in a seat's hand."""
        return mask_pips(self.hands[seat])

    # ------------------------------------------------------------------ moves
    def step(self, action: int) -> int:
        """Play ``action`` for the player to act; return the points it scored.

        Raises ``IllegalMoveError`` (state unchanged) for a move the rules do not allow and
        ``GameOverError`` after the game ended.
        """
        a = self.check(action)
        p = self.current_player
        t = a >> 2
        self.hands[p] ^= 1 << t
        layout = self.layout
        points = layout.place(t, a & 3)
        self.events.append((PLAY, p, t, LEAD if layout.num_tiles == 1 else a & 3, points))
        self.forced = -1
        self.passes = 0  # turn.passes_after(PLAY, ...), written out: this runs on every move
        if points:
            side = self._side_of[p]
            self.scores[side] += points
            if self.scores[side] >= self._target:
                self._stop_hand({"outcome": "target", "went_out": None})
                self._finish(side)
                return points
        if not self.hands[p]:
            self._end_hand(p)
        else:
            self._advance(p)
        return points

    def _advance(self, p: int) -> None:
        """Move the turn on from seat ``p``, carrying out forced draws and passes."""
        following = self._following
        hands = self.hands
        open_tiles = self.layout.open_tiles
        while True:
            p = following[p]
            # turn_action(...) == PLAY written out: this test runs after every move
            if hands[p] & open_tiles:
                self.current_player = p
                return
            if self._draw_or_pass(p):
                return

    def _draw_or_pass(self, p: int) -> bool:
        """Seat ``p``, holding nothing that fits, draws until a tile fits (its forced tile) or passes.

        Return whether the turn stops here: ``p`` must place the forced tile, or the hand is blocked.
        """
        layout = self.layout
        open_tiles = layout.open_tiles
        open_pips = layout.open_pips_mask()
        hand = self.hands[p]
        drew_unplayable = False
        action = turn_action(hand, open_tiles, self.draw_pos < self.draw_limit)
        while action == DRAW:
            t = self.boneyard[self.draw_pos]
            self.draw_pos += 1
            hand |= 1 << t
            self.events.append((DRAW, p, t))
            action = turn_action(hand, open_tiles, self.draw_pos < self.draw_limit)
            if action == PLAY:
                break
            drew_unplayable = True
        self.hands[p] = hand
        self.missing[p] = missing_after_turn(self.missing[p], open_pips, drew_unplayable)
        if action == PLAY:
            self.forced = t
            self.current_player = p
            return True
        self.events.append((PASS, p))
        self.passes = passes_after(PASS, self.passes)
        if is_blocked(self.passes, self.num_players):
            self._end_hand(None)
            return True
        return False

    def _end_hand(self, went_out: int | None) -> None:
        """Score the end of a hand (docs/specification.md "End of a hand") and deal the next one."""
        rules = self.rules
        n = self.num_players
        side_of = self._side_of
        pips = [mask_pips(h) for h in self.hands]
        penalties = [0] * n
        bonus = [0] * rules.num_sides
        if rules.hand_end == "subtract":
            for s in range(n):
                penalties[s] = round_to_five(pips[s])
                self.scores[side_of[s]] -= penalties[s]
        elif went_out is not None:
            mine = side_of[went_out]
            bonus[mine] = round_to_five(sum(pips[s] for s in range(n) if side_of[s] != mine))
        else:
            side_pips = [0] * rules.num_sides
            for s in range(n):
                side_pips[side_of[s]] += pips[s]
            fewest = min(side_pips)
            if side_pips.count(fewest) == 1:
                best = side_pips.index(fewest)
                bonus[best] = round_to_five(sum(side_pips) - fewest) - round_to_five(fewest)
        for side, b in enumerate(bonus):
            self.scores[side] += b
        self._stop_hand(
            {
                "outcome": "blocked" if went_out is None else "domino",
                "went_out": went_out,
                "pips": pips,
                "penalties": penalties,
                "bonus": bonus,
            }
        )
        reached = [side for side, b in enumerate(bonus) if b > 0 and self.scores[side] >= self._target]
        if reached:
            self._finish(reached[0])
        elif self.max_hands is not None and len(self.hand_logs) >= self.max_hands:
            self.over = True
            self.current_player = -1
        else:
            self._start_hand(went_out)

    def _stop_hand(self, result: dict) -> None:
        if "pips" not in result:  # a hand stopped at the target: nothing was scored at its end
            result["pips"] = [mask_pips(h) for h in self.hands]
            result["penalties"] = [0] * self.num_players
            result["bonus"] = [0] * self.rules.num_sides
        result["scores_after"] = list(self.scores)
        self.hand_logs[-1].result = result

    def _finish(self, side: int) -> None:
        self.over = True
        self.winner = side
        self.current_player = -1

    # ------------------------------------------------------------------ records
    @property
    def complete(self) -> bool:
        """Whether the game was played to the target."""
        return self.winner is not None

    def to_record(self, players: list[str] | None = None) -> dict:
        """The game as an ``allfives-record/1`` object (see docs/records.md)."""
        n = self.num_players
        if players is None:
            players = ["unknown"] * n
        if len(players) != n:
            raise ValueError(f"players names {len(players)} agents for {n} seats")
        record = {
            "format": RECORD_FORMAT,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "players": list(players),
        }
        if any(self.initial_scores):
            record["initial_scores"] = list(self.initial_scores)
        record["hands"] = [log.to_dict() for log in self.hand_logs]
        record["final_scores"] = list(self.scores)
        record["winner"] = self.winner
        record["complete"] = self.complete
        return record

    def __repr__(self) -> str:
        return (
            f"Game(seed={self.seed}, players={self.num_players}, hand={self.hand_index}, "
            f"scores={self.scores}, to_act={self.current_player}, over={self.over})"
        )
