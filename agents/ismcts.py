"""``ismcts``: single-observer information-set Monte Carlo tree search (Cowling, Powley & Whitehouse, 2012).

Each iteration samples a "possible world" consistent with the seat's view (other hands and the
boneyard order, respecting tile counts and the pips each seat is known to lack; see
``agents.belief``), then walks one shared tree keyed by the moves played from the current position:
at every node it picks, among the moves legal in that world, an untried one if any, else the one
with the best UCB score, counting availability (how often a move was legal when its node was
visited) in the exploration term. Below the tree a rollout policy (``random`` or ``greedy``)
plays to the end of the hand. The value of a finished rollout, per side, is
``tanh(zero-summed score change since the root / 40)``, or +1 / -1 when the game was won or lost
in it; each node is credited with the value of the side that chose its move. The move played is
the most visited one at the root.

Options: ``iters`` (iterations per decision, default 200; reproducible for a seed), ``seconds``
(a time budget per decision instead, when > 0; not reproducible), ``rollout`` (``greedy`` or
``random``), ``c`` (exploration constant, default 0.7). A decision with one legal move is
played at once.
"""

from __future__ import annotations

import math
import time

from allfives_env.engine.layout import placements_points
from allfives_env.engine.rewards import win_rewards, zero_sum

from .base import Agent
from .belief import determinize
from .greedy import greedy_action
from .registry import AGENTS, check_options

#: the rollout policies: the ``rollout`` option's choices in ``agents.registry.AGENTS``
ROLLOUTS = AGENTS["ismcts"].options["rollout"].choices


class _Node:
    __slots__ = ("player", "visits", "total", "avail", "children")

    def __init__(self, player: int) -> None:
        self.player = player  # who chose the move leading here
        self.visits = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict[int, _Node] = {}


def _greedy_move(game, rng) -> int:
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    layout = game.layout
    return greedy_action(legal, placements_points(layout.pips, layout.values, layout.num_tiles == 0, legal))


def _random_move(game, rng) -> int:
    legal = game.legal_actions()
    return legal[rng.randrange(len(legal))]


def side_values(game, root_scores: list[int]) -> list[float]:
    """Per side, the value of a finished rollout (see the module docstring)."""
    if game.winner is not None:
        return win_rewards(game.scores, game.winner)
    return [math.tanh(x / 40.0) for x in zero_sum([a - b for a, b in zip(game.scores, root_scores)])]


class ISMCTSAgent(Agent):
    """Information-set MCTS over sampled hidden hands; see the module docstring."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, iters: int = 200, seconds: float = 0.0, rollout: str = "greedy", c: float = 0.7):
        super().__init__(seed)
        # the ranges are those of the registry (agents.registry.AGENTS); seconds=0 is the default: no time budget
        check_options("ismcts", dict(iters=iters, rollout=rollout, c=c, **({"seconds": seconds} if seconds != 0 else {})))
        self.iters = iters
        self.seconds = seconds
        self.rollout = rollout
        self.c = c
        self._policy = _greedy_move if rollout == "greedy" else _random_move

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        return self.choose(self.search(view), legal)

    @staticmethod
    def choose(root: "_Node", legal: list[int]) -> int:
        """The legal action the search visited most (ties: the lower id)."""
        return max(legal, key=lambda a: root.children[a].visits if a in root.children else -1)

    def search(self, view) -> _Node:
        """Run the search from ``view`` and return the root (children keyed by action)."""
        rng = self.rng
        side_of = view.rules.side_of
        root_scores = list(view.scores)
        root = _Node(-1)
        policy = self._policy
        c = self.c
        deadline = time.perf_counter() + self.seconds if self.seconds > 0 else None
        iteration = 0
        while (iteration < self.iters) if deadline is None else (time.perf_counter() < deadline or iteration == 0):
            iteration += 1
            game = determinize(view, rng)
            node = root
            path = []
            while not game.over:
                actions = game.legal_actions()
                player = game.current_player
                children = node.children
                untried = [a for a in actions if a not in children]
                if untried:
                    a = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
                    for b in actions:
                        if b in children:
                            children[b].avail += 1
                    child = children[a] = _Node(player)
                    child.avail = 1
                    path.append(child)
                    game.step(a)
                    break
                best = None
                best_score = -math.inf
                for a in actions:
                    child = children[a]
                    child.avail += 1
                    score = child.total / child.visits + c * math.sqrt(math.log(child.avail) / child.visits)
                    if score > best_score:
                        best, best_score = a, score
                node = children[best]
                path.append(node)
                game.step(best)
            while not game.over:
                game.step(policy(game, rng))
            values = side_values(game, root_scores)
            for node in path:
                node.visits += 1
                node.total += values[side_of[node.player]]
        return root
