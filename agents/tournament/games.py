"""One game of a tournament: the schedule of seatings and seeds, and playing a game of it.

``Schedule.plan(pairing, game)`` is everything that determines a game (its seed, who sits where,
each seat's agent seed); ``Runner.play`` plays it with agents built from ``AgentSpec`` values, the
same in this process, in a worker process and in a Ray task (``allfives_agents.tournament.on_ray``).
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass
from typing import Sequence

from allfives_env.engine import Game, Rules
from allfives_env.engine.seeding import derive_seed
from allfives_env.episode import DEFAULT_MAX_HANDS

from ..base import Agent
from ..factory import make_agent
from ..spec import AgentSpec
from .stats import GameResult


class TournamentError(ValueError):
    """A tournament that cannot run or an agent that failed during one; the message says which and why."""


def agent_labels(agents: Sequence) -> list[str]:
    """Unique display names: the spec (or ``agent.name``), with ``#2``, ``#3`` added to repeats."""
    labels: list[str] = []
    for agent in agents:
        base = agent.strip() if isinstance(agent, str) else str(agent) if isinstance(agent, AgentSpec) else str(getattr(agent, "name", type(agent).__name__))
        label, copy = base, 1
        while label in labels:
            copy += 1
            label = f"{base}#{copy}"
        labels.append(label)
    return labels


# ---------------------------------------------------------------------------------------------- schedule
@dataclass(frozen=True)
class GamePlan:
    """Everything that determines one game: its seed, who sits where, each seat's agent seed."""

    pairing: int
    game: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    agent_seeds: tuple[int, ...]


@dataclass(frozen=True)
class Schedule:
    """The round robin: a base seating (``lineup``) per pairing or group, rotated game by game.

    ``kind`` is ``pairs`` (2 players), ``teams`` (4-player partnerships: seats 0 and 2 against
    1 and 3) or ``groups`` (3-4 player cut-throat). Game ``g`` of a pairing uses rotation
    ``g % rotations`` of its lineup (seat ``s`` gets ``lineup[(s + r) % n]``). With ``duplicate``
    the ``rotations`` games of a block share one deal index, hence one seed; otherwise every
    game has its own deal index ``g``.
    """

    names: tuple[str, ...]
    rules: Rules
    kind: str
    lineups: tuple[tuple[int, ...], ...]
    rotations: int
    games_per_pairing: int
    seed: int
    duplicate: bool
    max_hands: int | None = DEFAULT_MAX_HANDS

    def plan(self, pairing: int, game: int) -> GamePlan:
        """Seed, seating and agent seeds of game ``game`` of pairing ``pairing``."""
        lineup = self.lineups[pairing]
        n = len(lineup)
        r = game % self.rotations
        deal = game // self.rotations if self.duplicate else game
        seating = tuple(lineup[(s + r) % n] for s in range(n))
        # the same deals for every pairing: comparisons across pairings share the luck of the deal
        seed = derive_seed(self.seed, "tournament", "deal", deal)
        agent_seeds = tuple(derive_seed(self.seed, "tournament", "deal", deal, "seat", s) for s in range(n))
        return GamePlan(pairing, game, deal, seed, seating, agent_seeds)


def make_schedule(
    names: Sequence[str], rules: Rules, games: int, seed: int, duplicate: bool = True, max_hands: int | None = DEFAULT_MAX_HANDS
) -> Schedule:
    """The round robin for ``names`` under ``rules``; ``games`` per pairing or group, rounded up to whole blocks."""
    k, n = len(names), rules.num_players
    if n == 2:
        kind, rotations = "pairs", 2
        lineups = [pair for pair in itertools.combinations(range(k), 2)]
    elif rules.partnerships:
        kind, rotations = "teams", 2
        lineups = [(a, b, a, b) for a, b in itertools.combinations(range(k), 2)]
    else:
        kind, rotations = "groups", n
        if k >= n:
            lineups = list(itertools.combinations(range(k), n))
        else:
            lineups = [tuple(i % k for i in range(n))]
    per_pairing = -(-games // rotations) * rotations
    return Schedule(tuple(names), rules, kind, tuple(lineups), rotations, per_pairing, seed, duplicate, max_hands)


# ---------------------------------------------------------------------------------------------- playing
def play_game(
    rules: Rules, seed: int, agents: Sequence[Agent], agent_seeds: Sequence[int], max_hands: int | None = DEFAULT_MAX_HANDS
) -> Game:
    """Play one game with ``agents[seat]`` at each seat, each reset with its seat's seed first.

    An agent object that holds several seats is reset once (with its first seat's seed).
    Raises ``TournamentError`` naming the seat when an agent fails or makes an illegal move.
    """
    done = set()
    for agent, agent_seed in zip(agents, agent_seeds):
        if id(agent) not in done:
            done.add(id(agent))
            agent.reset(agent_seed)
    game = Game(rules, seed, max_hands=max_hands)
    moves = [_mover(agent, game) for agent in agents]
    step = game.step
    try:
        while not game.over:
            p = game.current_player
            step(moves[p](p))
    except Exception as exc:
        p = game.current_player
        raise TournamentError(
            f"agent {getattr(agents[p], 'name', agents[p])!r} at seat {p} failed in hand {game.hand_index + 1} "
            f"of the game with seed {seed}: {type(exc).__name__}: {exc}"
        ) from exc
    return game


def _mover(agent: Agent, game: Game):
    """``seat -> action`` of ``agent`` in ``game``: its ``act_game`` where it has one (the move it
    makes from the view, chosen without building it: ``allfives_env.opponents``), else its ``act``
    on the seat's view."""
    act_game = getattr(agent, "act_game", None)
    if act_game is not None:
        return functools.partial(act_game, game)
    act, view = agent.act, game.view
    return lambda seat: act(view(seat))


class Runner:
    """Plays the games of a schedule; builds each agent once per seat it holds at the same time."""

    def __init__(self, schedule: Schedule, agents: Sequence, keep_records: bool, sources: Sequence | None = None) -> None:
        self.schedule = schedule
        self.agents = list(agents)  # AgentSpec values (for the game) or Agent objects, by agent index
        self.sources = list(sources) if sources is not None else self.agents  # what to build for each spec
        self.keep_records = keep_records
        self.players = [str(a) if isinstance(a, AgentSpec) else str(getattr(a, "name", name)) for a, name in zip(agents, schedule.names)]
        self.built: dict[tuple[int, int], Agent] = {}

    def _agent(self, index: int, copy: int) -> Agent:
        source = self.sources[index]
        if not isinstance(source, AgentSpec):
            return source  # an Agent: run_tournament converted objects and functions
        agent = self.built.get((index, copy))
        if agent is None:
            try:
                agent = make_agent(source, rules=self.schedule.rules)
            except Exception as exc:
                raise TournamentError(f"cannot build agent {str(self.agents[index])!r}: {type(exc).__name__}: {exc}") from exc
            self.built[(index, copy)] = agent
        return agent

    def play(self, task: tuple[int, int]) -> tuple[GameResult, str | None]:
        """Play game ``task = (pairing, game)``; return its result and, if kept, its record as a JSON line."""
        plan = self.schedule.plan(*task)
        copies: dict[int, int] = {}
        seat_agents = []
        for x in plan.seating:
            copy = copies.get(x, 0)
            copies[x] = copy + 1
            seat_agents.append(self._agent(x, copy))
        try:
            game = play_game(self.schedule.rules, plan.seed, seat_agents, plan.agent_seeds, self.schedule.max_hands)
        except TournamentError as exc:
            lineup = " vs ".join(self.schedule.names[x] for x in plan.seating)
            raise TournamentError(f"{exc} (game {plan.game + 1} of {lineup})") from exc.__cause__
        result = GameResult(
            plan.pairing, plan.game, plan.seed, plan.seating, tuple(game.scores), game.winner, len(game.hand_logs)
        )
        line = None
        if self.keep_records:
            record = game.to_record([self.players[x] for x in plan.seating])
            line = json.dumps(record, separators=(",", ":"))
        return result, line


