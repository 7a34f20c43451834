"""Inference from play: how likely each sampled world makes what the other seats chose to play.

``allfives_agents.search.belief`` samples the hidden hands uniformly among those the public facts allow (tile counts,
known-missing pips). But players' choices say more: a seat that laid a tile scoring nothing while
holding, in some world, a tile that scored 15 is unlikely to be in that world. ``PlayEvidence``
weights a world by the probability, under a model of play (a trained policy), of every placement the
other seats chose this hand (policy-based inference; Rebstock et al., 2019, for Skat):

    w(world) = prod over past choices d of ((1 - eps) * pi(a_d | hand_d) + eps / moves_d)

where ``hand_d`` is the seat's hand in that world when it chose (what it holds now, plus what it has
played since, less what it drew since) and ``pi`` is the policy's softmax over the moves ``hand_d``
allows, at temperature ``temp``. ``eps`` keeps a world the model finds unlikely from being ruled out:
the model is not the player. Forced moves (one legal move, or the tile just drawn) carry no weight.
A deterministic model of play (an agent such as ``expert``: ``agent_log_weights``) has ``pi`` 1 for
its move and 0 for the others; a fitted model of play (``allfives_agents.search.play_fit``) gives each move its
chance (``model_log_weights``).

The identity of a tile another seat drew and kept is hidden (the last tile of a draw is placed at
once, and public); in each world every kept draw is given, at random, a tile that the seat holds
there now or chose to place after that draw, so the rebuilt hands have the sizes they had. Only the
seat's view, the world's hands and the seed are used.
"""

from __future__ import annotations

import math
import random

import numpy as np

from allfives_env.engine.events import DRAW, PLAY, play_end
from allfives_env.engine.position import placement_views
from allfives_env.engine.tiles import action_id, mask_tiles
from allfives_env.engine.view import PlayerView

#: the chance a world keeps for each choice whatever the model says (see the module docstring)
DEFAULT_EPS = 0.02


class _ChoiceView(PlayerView):
    """A seat's view before one of its choices, given a hand from each sampled world in turn: the
    layout is the same in every world, so what each move leaves and scores is worked out once."""

    __slots__ = ("_after", "_points")

    def __init__(self, view: PlayerView) -> None:
        for name in PlayerView.__slots__:
            setattr(self, name, getattr(view, name))
        self._after: dict[int, tuple] = {}
        self._points: dict[int, int] = {}

    def ends_after_moves(self) -> list[tuple[list[int], list[int]]]:
        after = self._after
        for a in self.legal_actions:
            if a not in after:
                after[a] = self.ends_after(a)
        return [after[a] for a in self.legal_actions]

    def move_points(self) -> list[int]:
        points = self._points
        for a in self.legal_actions:
            if a not in points:
                points[a] = self.points_of(a)
        return [points[a] for a in self.legal_actions]


class _Choice:
    __slots__ = ("seat", "action", "view", "from_here", "forced_later", "kept_before")

    def __init__(self, seat, action, view, from_here, forced_later, kept_before):
        self.seat = seat
        self.action = action
        self.view = view  # the seat's view before the choice, its hand to be filled in
        self.from_here = from_here  # tiles the seat placed from this choice on
        self.forced_later = forced_later  # of those, tiles it placed right after drawing them
        self.kept_before = kept_before  # kept draws of the seat before this choice


class PlayEvidence:
    """The other seats' choices in ``view``'s hand, to weight sampled worlds by (see the module docstring)."""

    def __init__(self, view) -> None:
        events = view.history
        snapshots = dict(placement_views(view))
        self.seat = view.seat
        n = view.rules.num_players
        kept_at: list[list[int]] = [[] for _ in range(n)]  # per seat: event indices of its kept draws
        choices: list[tuple[int, int, int, int]] = []  # (event index, seat, action, kept draws before)
        forced_at: set[int] = set()  # event indices of placements right after drawing
        turn_draws: list[list[int]] = [[] for _ in range(n)]  # the seat's draws this turn
        for i, e in enumerate(events):
            kind, seat = e[0], e[1]
            if seat == view.seat:
                continue
            if kind == DRAW:
                turn_draws[seat].append(i)
                continue
            if kind == PLAY:
                if turn_draws[seat]:
                    kept_at[seat] += turn_draws[seat][:-1]  # the last tile drawn is the one placed
                    forced_at.add(i)
                elif i in snapshots:
                    end = play_end(e[3], snapshots[i].lead < 0)
                    choices.append((i, seat, action_id(e[2], end), len(kept_at[seat])))
            else:  # a pass keeps every tile drawn that turn
                kept_at[seat] += turn_draws[seat]
            turn_draws[seat] = []

        def placed_from(seat: int, start: int, voluntary: bool) -> int:
            mask = 0
            for j in range(start, len(events)):
                e = events[j]
                if e[0] == PLAY and e[1] == seat and not (voluntary and j in forced_at):
                    mask |= 1 << e[2]
            return mask

        #: per seat: for each tile it drew and kept this hand, the tiles it chose to place after that draw
        self.kept = [[placed_from(seat, i, True) for i in kept_at[seat]] for seat in range(n)]
        self.choices: list[_Choice] = []
        for i, seat, action, kept_before in choices:
            from_here = placed_from(seat, i, False)
            view_then = _ChoiceView(snapshots[i])
            self.choices.append(_Choice(seat, action, view_then, from_here, from_here & ~placed_from(seat, i, True), kept_before))

    def __len__(self) -> int:
        return len(self.choices)

    def hands_at(self, hands: list[int], rng: random.Random) -> list[int]:
        """In the world with ``hands`` (tile masks by seat), each choice's seat's hand when it chose,
        in the order of ``choices``; ``rng`` picks the tiles that the seats' kept draws were."""
        kept_tiles = {}
        for seat, kept in enumerate(self.kept):
            if kept and seat != self.seat:
                # the tile kept at each draw is one the seat holds now or chose to place after it;
                # the latest draws (fewest candidates) are given theirs first
                tiles, taken = [0] * len(kept), 0
                for j in range(len(kept) - 1, -1, -1):
                    pool = mask_tiles((hands[seat] | kept[j]) & ~taken)
                    if pool:
                        t = pool[rng.randrange(len(pool))]
                        tiles[j] = 1 << t
                        taken |= 1 << t
                kept_tiles[seat] = tiles
        out = []
        for c in self.choices:
            hand = (hands[c.seat] | c.from_here) & ~c.forced_later
            for bit in kept_tiles.get(c.seat, ())[c.kept_before :]:
                hand &= ~bit
            out.append(hand)
        return out

    def choice_hands(self, worlds: list[list[int]], rng: random.Random, seats=None):
        """``(world index, choice index, choice, hand then)`` for every choice in every world (with
        ``seats``, the choices of those seats only)."""
        choices = self.choices
        for w, hands in enumerate(worlds):
            for i, hand in enumerate(self.hands_at(hands, rng)):
                c = choices[i]
                if seats is None or c.seat in seats:
                    yield w, i, c, hand

    def _with_hand(self, c: _Choice, hand: int) -> bool:
        """Give choice ``c``'s view ``hand`` and the moves it allows; whether there were two or more."""
        legal = c.view._layout.actions_for(hand)
        c.view.hand = hand
        c.view.legal_actions = legal
        return len(legal) >= 2

    def choice_views(self, worlds: list[list[int]], rng: random.Random, seats=None):
        """``(world index, choice)`` for every choice that had two or more moves in that world, its
        ``view`` holding the world's hand and legal moves then (until the next item is made); with
        ``seats``, the choices of those seats only."""
        for w, _, c, hand in self.choice_hands(worlds, rng, seats):
            if self._with_hand(c, hand):
                yield w, c

    def log_weights(self, worlds: list[list[int]], policy, rng: random.Random, temp: float = 1.0, eps: float = DEFAULT_EPS) -> np.ndarray:
        """Per world (its hands, tile masks by seat), the log of its weight: a sum over the choices."""
        out = np.zeros(len(worlds))
        obs = np.empty((len(worlds) * len(self.choices), policy.obs_size), np.float32)  # room for every pair
        legal_of, chosen, world_of = [], [], []
        for w, c in self.choice_views(worlds, rng):
            policy.encode(c.view, obs[len(legal_of)])
            legal_of.append(c.view.legal_actions)
            chosen.append(c.view.legal_actions.index(c.action))
            world_of.append(w)
        if not legal_of:
            return out
        sizes = np.array([len(legal) for legal in legal_of])
        row_of_pair = np.repeat(np.arange(len(legal_of)), sizes)
        z = _pair_logits(policy, obs[: len(legal_of)], row_of_pair, np.concatenate(legal_of)) / temp
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        z -= np.maximum.reduceat(z, starts)[row_of_pair]
        e = np.exp(z)
        p = e[starts + np.array(chosen)] / np.add.reduceat(e, starts)
        np.add.at(out, np.array(world_of), np.log((1 - eps) * p + eps / sizes))
        return out

    def agent_log_weights(self, worlds: list[list[int]], agent, rng: random.Random, eps: float = DEFAULT_EPS, seats=None) -> np.ndarray:
        """``log_weights`` with a deterministic model of play (an ``Agent``, such as ``expert``):
        ``pi`` is 1 for the move ``agent`` makes from the choice's view in that world, 0 for the others.
        With ``seats``, only those seats' choices are weighed (the agent models them, not the others)."""
        return self.model_log_weights(worlds, lambda view, action: float(agent.act(view) == action), rng, eps, seats)

    def model_log_weights(self, worlds: list[list[int]], chance, rng: random.Random, eps: float = DEFAULT_EPS, seats=None) -> np.ndarray:
        """``log_weights`` with ``pi = chance(view, action)``, a model of play that sees nothing but
        the view (it is asked once per choice and hand then); with ``seats``, only those seats' choices."""
        out = np.zeros(len(worlds))
        terms: dict[tuple[int, int], float] = {}  # (choice, hand then): the model sees nothing else that differs between worlds
        for w, i, c, hand in self.choice_hands(worlds, rng, seats):
            term = terms.get((i, hand))
            if term is None:
                term = 0.0  # a forced move says nothing
                if self._with_hand(c, hand):
                    term = math.log((1 - eps) * chance(c.view, c.action) + eps / len(c.view.legal_actions))
                terms[i, hand] = term
            out[w] += term
        return out


def _pair_logits(policy, obs: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The logits of the (row, action) pairs: only those with a numpy policy, all 112 with another."""
    if hasattr(policy, "pair_logits"):
        return np.asarray(policy.pair_logits(obs, rows, actions), np.float64)
    return np.asarray(policy.logits(obs), np.float64)[rows, actions]
