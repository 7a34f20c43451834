"""``ismcts``: single-observer information-set Monte Carlo tree search (Cowling, Powley & Whitehouse, 2012).

Each iteration samples a "possible world" consistent with the seat's view (other hands and the
boneyard order, respecting tile counts and the pips each seat is known to lack; see
``allfives_agents.search.belief``), then walks one shared tree keyed by the moves played from the current position:
at every node it picks, among the moves legal in that world, an untried one if any, else the one
with the best UCB score, counting availability (how often a move was legal when its node was
visited) in the exploration term. Below the tree a rollout policy (``random``, ``greedy``, or
``expert`` from the view of the seat to play) plays to the end of the hand. The value of a finished rollout, per side, is
``tanh(zero-summed score change since the root / 40)``, or +1 / -1 when the game was won or lost
in it; each node is credited with the value of the side that chose its move. The move played is
the most visited one at the root.

Guided by a trained network (``policy=``): the policy's move probabilities at the root (a softmax
of its logits over the legal moves, at temperature ``temp``) become a PUCT prior (Silver et al.,
2017): the root's move is the one with the best ``Q + cpuct * P * sqrt(N) / (1 + n)``, unvisited moves
counting ``Q = 0``. The network reads only the seat's view, once per decision; below the root the
search is as above. With ``guide=tree`` every node the search reaches a second time gets a prior
too, from the view of the seat to move there in that iteration's world (kept for the node's life;
moves it did not see get ``1 / moves``), at the cost of one network call per such node.
``policy`` is a policy file (``.zip`` or ``.npz``: numpy; ``.onnx``: onnxruntime) or a shipped
model's name (``ismcts:policy=allfives_2p``).

With ``belief=policy`` the worlds are not uniform: a pool of ``worlds`` uniformly sampled worlds
(default: ``iters``) is weighted by how likely the network, at temperature ``btemp``, finds every
placement the other seats chose this hand in each of them (``allfives_agents.search.inference``), and each
iteration draws its world's hands from the pool by weight (its boneyard order afresh). That is one
batched network call per decision over all the pool's past choices. ``belief=expert`` weighs the
pool the same way with ``expert`` as the model of play (each choice is ``expert``'s move, or, with
chance ``beps``, any legal move) of the other sides' seats (a partner's choices carry no weight: it
is not ``expert``): an exact model of that one opponent, for measuring what inference is worth
against it, and no network needed. ``bpolicy`` names another network as the model of play for
``belief=policy`` (one trained to imitate the players faced, ``configs/play_model_2p.yaml``), the
prior staying ``policy``'s. ``bweights`` gives ``belief=expert`` other weights: a model of play
fitted to a player's records (``allfives_agents.search.play_fit``, ``allfives fit-play``). ``belief=expert`` leaves
a partner's choices out (it is not ``expert``) unless ``bpartner`` names a fitted model of its play
(one fitted to this search's own records, say): then they weigh the worlds too, each by the chance
the model gives the move chosen (``softmax(scale * score)``, the fit's conditional logit).

With ``opp=model`` the search believes its model of play twice: the other sides' seats play it in
the tree and in the rollouts (``expert``'s move with ``belief=expert``; with ``belief=policy`` a move
drawn from the network's softmax at ``btemp``, one network call per such move), so the tree
branches on its own side's moves only and the search plays the best reply to the modelled
opponent (opponent modelling: strongest when the model is the opponent, wrong when it is not).
With ``opp=all`` a partner plays the model too (``bpartner``'s best move, if given), so the tree
branches on the seat's own moves only.

The options, their defaults and ranges, and which others each needs are in their one home,
``allfives_agents.search.options.SearchOptions`` (docs/search.md's table is generated from it). A decision with one legal move is played at once.
"""

from __future__ import annotations

import bisect
import math
import time

import numpy as np

from allfives_env.engine.layout import placements_points
from allfives_env.engine.rewards import win_rewards, zero_sum

from ..base import Agent
from .belief import HiddenSampler, determinizer, world_game
from ..expert import ExpertAgent
from ..greedy import greedy_action
from .inference import PlayEvidence
from .options import OPTIONS, SearchOptions
from .play_fit import load_model, load_play_model
from ..nets.policy import NumpyPolicy
from ..models import option_file

#: the rollout policies: the ``rollout`` option's choices
ROLLOUTS = OPTIONS["rollout"].choices


class _Node:
    __slots__ = ("player", "visits", "total", "avail", "children", "prior")

    def __init__(self, player: int) -> None:
        self.player = player  # who chose the move leading here
        self.visits = 0
        self.total = 0.0
        self.avail = 0
        self.children: dict[int, _Node] = {}
        self.prior = None


def _greedy_move(game, rng) -> int:
    legal = game.legal_actions()
    if len(legal) == 1:
        return legal[0]
    layout = game.layout
    return greedy_action(legal, placements_points(layout.pips, layout.values, layout.num_tiles == 0, legal))


def _random_move(game, rng) -> int:
    legal = game.legal_actions()
    return legal[rng.randrange(len(legal))]


_EXPERT = ExpertAgent()


def _agent_mover(agent):
    """A rollout policy playing ``agent``'s move from the view of the seat to play (its belief is
    that seat's, not the world's)."""

    def move(game, rng) -> int:
        legal = game.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return agent.act(game.view(game.current_player))

    return move


_expert_move = _agent_mover(_EXPERT)


#: the rollout policy of each ``rollout`` option
_ROLLOUT_MOVES = {"greedy": _greedy_move, "random": _random_move, "expert": _expert_move}


#: the points of a hand's zero-summed score change that ``tanh`` scales a rollout's value by
VALUE_SCALE = 40.0


def side_values(game, root_scores: list[int]) -> list[float]:
    """Per side, the value of a finished rollout (see the module docstring)."""
    if game.winner is not None:
        return win_rewards(game.scores, game.winner)
    return [math.tanh(x / VALUE_SCALE) for x in zero_sum([a - b for a, b in zip(game.scores, root_scores)])]


class _EquityValues:
    """``value=equity``: a rollout's end is worth, per side, ``tanh(gain / scale)`` where ``gain`` is
    the side's match equity (``allfives_agents.search.equity``) after the hand less that at the root, and ``scale``
    half the equity that 40 points either way are worth at the root's scores: where the scores make
    points matter little (or much) it counts them so, and at 0-0 it is about ``value=points``."""

    def __init__(self, rules) -> None:
        from .equity import EquityError, match_equity

        try:
            self.table = match_equity(rules)
        except EquityError as exc:
            raise ValueError(f"agent 'ismcts': option value=equity: {exc}") from None
        self.rules = rules

    def at(self, root_scores: list[int]):
        equity = self.table.equity
        a, b = root_scores
        start = equity(a, b)
        scale = max((equity(a + 40, b) - equity(a, b + 40)) / 2, 1e-3)

        def values(game) -> list[float]:
            x, y = game.scores
            if game.winner is not None:
                e = 1.0 if game.winner == 0 else 0.0
            else:
                e = equity(x, y)
            v = math.tanh((e - start) / scale)
            return [v, -v]

        return values


class ISMCTSAgent(Agent):
    """Information-set MCTS over sampled hidden hands; see the module docstring."""

    name = "ismcts"

    def __init__(self, seed: int | None = None, options: SearchOptions | None = None, **given):
        """``options``, or the options as keywords (``ISMCTSAgent(iters=300, policy="allfives_2p")``):
        ``SearchOptions`` checks them, and refuses a value the setting would ignore."""
        super().__init__(seed)
        if options is None:
            options = SearchOptions.from_spec_options(given)
        elif given:
            raise TypeError("ISMCTSAgent takes options or keywords, not both")
        #: the options of this search (``allfives_agents.search.options.SearchOptions``)
        self.options = options
        for name in OPTIONS:
            setattr(self, name, getattr(options, name))
        self.iterations = 0  # run by the last search
        self._policy = _ROLLOUT_MOVES[options.rollout]
        self._equity = None  # value=equity: the rules' match equity table, built at the first search
        self.policy = load_policy(options.policy) if options.policy else None
        #: the network ``belief=policy`` weighs worlds with
        self.play_model = load_policy(options.bpolicy) if options.bpolicy else self.policy
        #: the ``expert`` that ``belief=expert`` weighs worlds with (``bweights``: a fitted one, ``allfives_agents.search.play_fit``)
        self.play_agent = load_model(option_file(options.bweights)) if options.bweights else _EXPERT
        #: ``bpartner``: the fitted model of play (``allfives_agents.search.play_fit.PlayModel``) of a partner's choices, or ``None``
        self.partner_model = load_play_model(option_file(options.bpartner)) if options.bpartner else None
        if self.partner_model is not None:
            self.partner_model.check_chances()

    def networks(self) -> dict:
        """The networks this search reads, by option: the prior's and the belief's model of play."""
        out = {"policy": self.policy}
        if self.play_model is not self.policy:
            out["bpolicy"] = self.play_model
        return {k: v for k, v in out.items() if v is not None}

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        return self.choose(self.search(view, decide=self.stop == "early"), legal)

    @staticmethod
    def choose(root: "_Node", legal: list[int]) -> int:
        """The legal action the search visited most (ties: the lower id)."""
        return max(legal, key=lambda a: root.children[a].visits if a in root.children else -1)

    def prior(self, view) -> dict[int, float] | None:
        """The network's probability of each legal move of ``view`` (``None`` without a policy)."""
        if self.policy is None:
            return None
        legal = view.legal_actions
        p = _softmax_weights(self.policy, view, legal, self.temp)
        return dict(zip(legal, (p / p.sum()).tolist()))

    def search(self, view, decide: bool = False) -> _Node:
        """Run the search from ``view`` and return the root (children keyed by action).

        With ``decide`` an ``iters`` search stops as soon as its most visited move can no longer be
        overtaken in the iterations left: ``choose`` then gives the move the whole search would
        have, in fewer iterations (``stop=early``, the agent's default).
        """
        rng = self.rng
        prior = self.prior(view)
        cpuct = self.cpuct
        side_of = view.rules.side_of
        values_of = self._valuer(view)
        root = _Node(-1)
        policy = self._policy
        c = self.c
        deadline = time.perf_counter() + self.seconds if self.seconds > 0 else None
        sample = self._world_sampler(view)
        movers = self._movers(view)
        iteration = 0
        while (iteration < self.iters) if deadline is None else (time.perf_counter() < deadline or iteration == 0):
            iteration += 1
            game = sample()
            node = root
            path = []
            if prior is not None and self.select == "puct":  # every root move is legal in every world
                node = _puct_step(root, prior, prior.__getitem__, cpuct * math.sqrt(root.visits + 1), game, path)
            elif prior is not None:
                node = _bias_step(root, prior, cpuct, c, game, path)
            while node is not None and not game.over:
                player = game.current_player
                children = node.children
                if movers[player] is not None:
                    node = _follow(node, movers[player](game, rng), game, path)  # the model's move: no choice to expand
                    continue
                actions = game.legal_actions()
                if self.guide == "tree" and prior is not None and node.visits > 0 and len(actions) > 1:
                    if node.prior is None:
                        node.prior = self.prior(game.view(player))
                    known, default = node.prior, 1.0 / len(actions)
                    node = _puct_step(node, actions, lambda a: known.get(a, default), cpuct * math.sqrt(node.visits), game, path)
                    continue
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
            if self.opp == "search":
                while not game.over:
                    game.step(policy(game, rng))
            else:
                while not game.over:
                    game.step((movers[game.current_player] or policy)(game, rng))
            values = values_of(game)
            root.visits += 1
            for node in path:
                node.visits += 1
                node.total += values[side_of[node.player]]
            if decide and deadline is None and 2 * iteration > self.iters and _decided(root, self.iters - iteration):
                break
        self.iterations = iteration
        return root

    def _movers(self, view) -> list:
        """Per seat, the function playing its moves by the model of play (``opp=model``: the other
        sides' seats; ``opp=all``: every seat but this one), or ``None`` where the search chooses."""
        side_of, seat = view.rules.side_of, view.seat
        if self.opp == "search":
            return [None] * len(side_of)
        other = self._model_move()
        partner = _agent_mover(self.partner_model.agent) if self.partner_model is not None else other
        return [
            None if s == seat or (self.opp == "model" and side_of[s] == side_of[seat]) else partner if side_of[s] == side_of[seat] else other
            for s in range(len(side_of))
        ]

    def _model_move(self):
        """The move of a seat of the other sides by the model of play of the belief (``expert``'s,
        or a move drawn from the network's softmax at ``btemp``), from that seat's view in the world."""
        if self.belief == "expert":
            return _agent_mover(self.play_agent)
        network, temp = self.play_model, self.btemp

        def move(game, rng) -> int:
            legal = game.legal_actions()
            if len(legal) == 1:
                return legal[0]
            p = _softmax_weights(network, game.view(game.current_player), legal, temp)
            return legal[_draw(np.cumsum(p).tolist(), p.sum(), rng)]

        return move

    def _valuer(self, view):
        """The function giving a finished rollout's value per side (``value=points``: ``side_values``;
        ``value=equity``: ``equity_values``)."""
        root_scores = list(view.scores)
        if self.value == "points":
            return lambda game: side_values(game, root_scores)
        if self._equity is None or self._equity.rules != view.rules:
            self._equity = _EquityValues(view.rules)
        return self._equity.at(root_scores)

    def _weighed_seats(self, view) -> set[int]:
        """``belief=expert``: the seats whose choices weigh the worlds, the other sides' (and a
        partner's with ``bpartner``)."""
        side_of, seat = view.rules.side_of, view.seat
        partners = self.partner_model is not None
        return {s for s in range(len(side_of)) if side_of[s] != side_of[seat] or (partners and s != seat)}

    def _choice_chance(self, view):
        """``belief=expert``: the chance of a seat's choice, its model of play's: ``expert``'s (or
        ``bweights``') best move for the other sides, the ``bpartner`` model's chances for a partner."""
        side_of, my_side, act, partner = view.rules.side_of, view.rules.side_of[view.seat], self.play_agent.act, self.partner_model

        def chance(choice_view, action: int) -> float:
            if partner is not None and side_of[choice_view.seat] == my_side:
                return float(partner.chances(choice_view)[choice_view.legal_actions.index(action)])
            return float(act(choice_view) == action)

        return chance

    def belief_pool(self, view):
        """``belief=policy`` or ``expert``: the pool of worlds (``(hands, boneyard)`` pairs) the
        search draws from and their log weights (``allfives_agents.search.inference``); ``(None, None)`` where the
        worlds are uniform (``belief=uniform``, or no choice of another seat yet this hand)."""
        rng = self.rng
        evidence = PlayEvidence(view) if self.belief != "uniform" else None
        if evidence is None or not len(evidence):
            return None, None
        sample_world = HiddenSampler(view)  # the view's belief facts once, not once per world of the pool
        pool = [sample_world(rng) for _ in range(self.worlds or self.iters)]
        worlds = [hands for hands, _ in pool]
        if self.belief == "expert":
            logw = evidence.model_log_weights(worlds, self._choice_chance(view), rng, self.beps, self._weighed_seats(view))
        else:
            logw = evidence.log_weights(worlds, self.play_model, rng, self.btemp, self.beps)
        return pool, logw

    def _world_sampler(self, view):
        """A function returning a fresh possible world per call: uniform among those the public
        facts allow, or drawn from the weighted pool of ``belief_pool``."""
        rng = self.rng
        pool, logw = self.belief_pool(view)
        if pool is None:
            world = determinizer(view)
            return lambda: world(rng)
        cumulative = np.cumsum(np.exp(logw - logw.max())).tolist()
        total = cumulative[-1]

        def sample():
            hands, boneyard = pool[_draw(cumulative, total, rng)]
            boneyard = boneyard[:]
            rng.shuffle(boneyard)
            return world_game(view, hands, boneyard, rng)

        return sample


def _softmax_weights(network, view, legal: list[int], temp: float) -> np.ndarray:
    """The network's softmax over ``legal`` at ``temp``, not yet normalised (``exp`` of the logits less their top)."""
    logits = np.asarray(network.logits(network.encode(view)), np.float64)[legal] / temp
    return np.exp(logits - logits.max())


def _draw(cumulative: list[float], total: float, rng) -> int:
    """An index drawn with chances given by the running sums ``cumulative`` (of ``total`` in all)."""
    return min(bisect.bisect_right(cumulative, rng.random() * total), len(cumulative) - 1)


def _decided(root: _Node, left: int) -> bool:
    """Whether the most visited root move leads every other by more than ``left`` visits."""
    first = second = 0
    for child in root.children.values():
        v = child.visits
        if v > first:
            first, second = v, first
        elif v > second:
            second = v
    return first - second > left


def _puct_step(node: _Node, actions, prior, scale: float, game, path: list) -> _Node | None:
    """Play the action of ``actions`` with the best PUCT score (``prior(action)`` its probability)
    and add its child to ``path``: the child to walk on from, or ``None`` when it was just made."""
    return _descend(node, max(actions, key=lambda a: _puct(node.children.get(a), prior(a), scale)), game, path)


def _descend(node: _Node, action: int, game, path: list) -> _Node | None:
    """Play ``action`` from ``node`` and add its child (made if new) to ``path``: the child to walk
    on from, or ``None`` when it was just made."""
    fresh = action not in node.children
    child = _follow(node, action, game, path)
    return None if fresh else child


def _follow(node: _Node, action: int, game, path: list) -> _Node:
    """Play ``action`` from ``node`` and add its child (made if new) to ``path``: the child."""
    child = node.children.get(action)
    if child is None:
        child = node.children[action] = _Node(game.current_player)
    path.append(child)
    game.step(action)
    return child


def _bias_step(root: _Node, prior: dict[int, float], weight: float, c: float, game, path: list) -> _Node | None:
    """``select=bias`` at the root: every move once (the likeliest first), then the best
    ``Q + c * sqrt(ln N / n) + weight * P / (1 + n)``: UCB with a progressive bias (Chaslot et al.,
    2008) whose pull fades as a move's visits grow, so a large budget ends as plain UCB's would."""
    children = root.children
    untried = [a for a in prior if a not in children]
    if untried:
        best = max(untried, key=prior.__getitem__)
    else:
        log_n = math.log(root.visits)
        best = max(
            prior,
            key=lambda a: children[a].total / children[a].visits
            + c * math.sqrt(log_n / children[a].visits)
            + weight * prior[a] / (1 + children[a].visits),
        )
    return _descend(root, best, game, path)


def _puct(child: _Node | None, p: float, scale: float) -> float:
    if child is None:
        return p * scale
    return child.total / child.visits + p * scale / (1 + child.visits)


def load_policy(text: str):
    """The network behind ``policy=``: an ONNX file (onnxruntime), else a ``.zip``/``.npz`` or a
    shipped model's name (numpy); ``PolicyFileError`` names a missing or unreadable file."""
    if text.lower().endswith(".onnx"):
        from ..nets.onnx_agent import OnnxPolicy

        return OnnxPolicy(option_file(text))
    return NumpyPolicy.load(option_file(text))
