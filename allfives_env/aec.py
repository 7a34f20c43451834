"""PettingZoo AEC environment for All Fives (``all_fives_v0``).

Agents are ``player_0 .. player_{n-1}`` (seats in turn order). The agent selected to act always has
a choice: forced draws and passes are carried out by the engine, and appear in the next
observation (tile counts, boneyard, known-missing pips) and in ``infos[agent]["events"]``.

Infos (docs/environment.md has the table): ``infos[agent]`` is ``{"events": int16 array
(MAX_EVENTS, 5), "num_events": int}`` for every agent from ``reset`` on, the same keys, types and
shapes at every step, so buffers can stack them. An agent's info is replaced when it is selected
to act (the events since the previous step: the play, then forced draws and passes, another
seat's drawn tile -1; see ``EventInfos``) and, for every agent, at the end of the game.
``info_events="list"`` gives the engine's event tuples as a list instead (its length varies).
The wrapped ``env()`` adds ``"illegal_move"`` (a string) to every agent's info after an illegal
action ends the game, and only then.

Spaces: action ``Discrete(112)`` with the engine's action ids (``4 * tile + end``); observation
``Dict(observation=Box(-1, 1, (size,), float32), action_mask=Box(0, 1, (112,), int8))``,
egocentric, documented in ``allfives_env.observation`` and docs/observation.md. The mask is all
zeros for agents not to move. ``obs_version=4`` (the default, ``OBS_VERSION``: version 1 followed by
the lookahead pieces, what each legal move leaves for the replies, the follow-up, what the seat can
score after the next seat's reply, and that follow-up net of the next seat's answer to it), ``3``
(without the last), ``2`` (without the follow-ups) or ``1`` (``OBS_SIZE`` values). Each is built
straight from the game (``observation.GameObserver``), in C where it was built.

Options: the rules as a ``Rules`` (``rules=``) or as rules options (``num_players=4``, ...), and
the episode options of ``allfives_env.episode.EpisodeSpec``:

- ``episode="game"`` (default): an episode is a whole game to the target. ``"hand"``: one hand of a
  fresh game; the episode ends when the hand ends (or a side reaches the target in it).
- ``reward="points"`` (default): after each step, every side's score change is zero-summed; both
  partners receive their side's reward. Over an episode of two sides an agent's rewards add up to
  its side's final score minus the other side's. ``"win"``: 0 until the end, then the zero-sum
  win values (+1 for the winner; a tie for highest after a ``"hand"`` episode, or a game stopped
  by ``max_hands``, gives 0 to all).
- ``max_hands`` (default 200, ``None`` for no limit): stop a game after that many hands, a
  truncation for every agent.

Illegal actions: ``raw_env`` raises the engine's ``IllegalMoveError`` (the state is unchanged);
``env()`` adds PettingZoo's standard wrappers, which end the game for everyone, give the offender
-1, and put the engine's explanation in ``infos[agent]["illegal_move"]``. An action is an int (a
Python int or a numpy integer); anything else for a live agent (a bool, a float, a string, ``None``)
is an error that changes nothing: a ``TypeError``, or from ``env()`` PettingZoo's
``AssertionError`` for what is not in the action space. Dead agents step with ``None``. Stepping
``raw_env`` once every agent is done raises ``GameOverError``; ``env()`` only warns, as PettingZoo's
wrappers do. Seeds follow gymnasium: ``None`` or a non-negative int (numpy integers too).
"""

from __future__ import annotations

import operator
import random
import struct

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from allfives_env import accelerator
from allfives_env.engine import Game, Rules
from allfives_env.engine.errors import GameOverError, IllegalMoveError
from allfives_env.engine.events import DRAW, PLAY, public_events
from allfives_env.engine.rewards import zero_sum
from allfives_env.engine.rules import rules_from
from allfives_env.engine.tiles import NUM_ACTIONS, NUM_TILES
from allfives_env.episode import DEFAULT_MAX_HANDS, EpisodeSpec
from allfives_env.inputs import as_action, as_seed
from allfives_env.observation import OBS_SIZES, OBS_VERSION, GameObserver
from allfives_env.render_modes import RENDER_MODES, render_as


#: the columns of a row of ``infos[agent]["events"]``
EVENT_FIELDS = ("kind", "player", "tile", "end", "points")
#: the rows of ``infos[agent]["events"]``: the most events one step can add before the next
#: decision. A step is one play, then the forced turns of the seats after it: every draw takes a
#: boneyard tile (at most ``NUM_TILES - num_players * tiles_per_hand``) and at most
#: ``num_players`` passes in a row block the hand (a new hand starts with no events before its
#: first decision). So ``1 + NUM_TILES - n * k + n <= NUM_TILES + 1`` for every variant (``k >= 1``).
MAX_EVENTS = NUM_TILES + 1
INFO_EVENTS = ("array", "list")
EVENT_DTYPE = np.int16
_NO_EVENTS = np.full((MAX_EVENTS, len(EVENT_FIELDS)), -1, dtype=EVENT_DTYPE)
_NO_EVENTS.flags.writeable = False


# rows are written as bytes into a block filled with -1 (what a kind does not have stays -1)
_pack_play = struct.Struct(f"=5{_NO_EVENTS.dtype.char}").pack_into
_pack_draw = struct.Struct(f"=3{_NO_EVENTS.dtype.char}").pack_into
_pack_kind = struct.Struct(f"=2{_NO_EVENTS.dtype.char}").pack_into
_ROW_BYTES = len(EVENT_FIELDS) * _NO_EVENTS.itemsize
#: the same rows written by the C accelerator where it was built (``_fastobs.pack_events``), else ``None``
_pack_events = getattr(accelerator.load("_fastobs"), "pack_events", None)
_INFO_BYTES = MAX_EVENTS * _ROW_BYTES


class EventInfos:
    """Builds ``infos[agent]`` from ``(events, seat, start)``: ``{"events": (MAX_EVENTS, 5) int16,
    "num_events": int}`` for ``events[start:]`` as ``seat`` sees them.

    Row ``i < num_events`` is ``(kind, player, tile, end, points)``: kind 0 play, 1 draw, 2 pass;
    ``end`` 0..3 (west, east, north, south) or 4 for the lead; everything a kind does not have,
    another seat's drawn tile and the rows after ``num_events`` are -1. Each info gets its own
    array (never written again), cut from a preallocated block so that a step stays cheap; an
    info without events shares one read-only empty array.
    """

    BLOCK = 64

    def __init__(self) -> None:
        self._new_block()

    def _new_block(self) -> None:
        self._block = np.full((self.BLOCK, MAX_EVENTS, len(EVENT_FIELDS)), -1, dtype=EVENT_DTYPE)
        self._bytes = memoryview(self._block).cast("B")
        self._views = list(self._block)  # the arrays handed out, cut in one go
        self._next = 0

    def __getstate__(self) -> dict:
        return {"block": self.BLOCK}  # not empty: pickle skips __setstate__ for a falsy state

    def __setstate__(self, state: dict) -> None:
        self._new_block()

    def __call__(self, events: list[tuple], seat: int, start: int = 0) -> dict:
        k = len(events) - start
        if k <= 0:
            return {"events": _NO_EVENTS, "num_events": 0}
        if k > MAX_EVENTS:  # pragma: no cover - the rules bound it (see MAX_EVENTS)
            raise RuntimeError(f"{k} events in one step, more than MAX_EVENTS = {MAX_EVENTS}")
        i = self._next
        if i == self.BLOCK:
            self._new_block()
            i = 0
        self._next = i + 1
        out = self._bytes
        at = i * _INFO_BYTES
        if _pack_events is not None:
            _pack_events(out, at, events, start, seat, PLAY, DRAW)
            return {"events": self._views[i], "num_events": k}
        for j in range(start, start + k):
            e = events[j]
            kind = e[0]
            if kind == PLAY:
                _pack_play(out, at, *e)
            elif kind == DRAW and e[1] == seat:
                _pack_draw(out, at, *e)
            else:  # a pass, or another seat's draw: its tile stays hidden (-1)
                _pack_kind(out, at, kind, e[1])
            at += _ROW_BYTES
        return {"events": self._views[i], "num_events": k}


#: attributes read at every decision (by ``last``, ``agent_iter`` and the wrappers themselves)
_HOT = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos", "_cumulative_rewards")


class _BeforeReset:
    """The class attribute behind an episode attribute (``agents``, ``infos``, ...) until ``reset`` sets
    it on the instance: reading it before then raises ``AttributeError("NAME cannot be accessed before
    reset")``. A non-data descriptor, so the instance's value, once set, is read like any attribute
    (a ``__getattr__`` would slow every attribute read of the env instead)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        raise AttributeError(f"{self.name} cannot be accessed before reset")


class raw_env(AECEnv):
    """All Fives as a PettingZoo AEC environment (no wrappers; illegal actions raise)."""

    metadata = {
        "name": "all_fives_v0",
        "is_parallelizable": False,
        "render_modes": RENDER_MODES,
        "render_fps": 1,
        "obs_version": OBS_VERSION,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        episode: str = "game",
        reward: str = "points",
        max_hands: int | None = DEFAULT_MAX_HANDS,
        info_events: str = "array",
        obs_version: int = OBS_VERSION,
        rules: Rules | None = None,
        **rule_options,
    ) -> None:
        super().__init__()
        if obs_version != OBS_VERSION:
            self.metadata = dict(self.metadata, obs_version=obs_version)
        if info_events not in INFO_EVENTS:
            raise ValueError(f"info_events must be one of {', '.join(INFO_EVENTS)}, got {info_events!r}")
        #: builds ``infos[agent]`` from ``(events, seat, start)``
        self._events_info = EventInfos() if info_events == "array" else _events_list
        self.info_events = info_events
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.episode_spec = EpisodeSpec(episode, reward, max_hands)
        self.rules = rules_from(rules, rule_options)
        #: ``(game, seat) -> (observation, action mask)`` for this env's rules and version
        self._observe = GameObserver(self.rules, obs_version)
        self.render_mode = render_mode
        self._points = reward == "points"
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(-1.0, 1.0, (OBS_SIZES[obs_version],), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self._seeder: random.Random | None = None
        self.game: Game | None = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``seed`` (``None`` or an int >= 0) fixes it (and the games of later seedless resets)."""
        seed = as_seed(seed)
        if seed is not None:
            self._seeder = random.Random(seed)
        elif self._seeder is None:
            self._seeder = random.Random(random.SystemRandom().randrange(2**63))
        self.game = Game(self.rules, self._seeder.getrandbits(63), max_hands=self.episode_spec.hands_limit)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        events_info, events = self._events_info, self.game.events
        self.infos = {a: events_info(events, self._seat[a]) for a in self.agents}  # a dict each
        self._skip_agent_selection = None
        self._rewards_dirty = False
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent):
        if self.game is None:
            raise RuntimeError("call reset() before observe(): there is no game yet")
        obs, mask = self._observe(self.game, self._seat[agent])
        return {"observation": obs, "action_mask": mask}

    def step(self, action) -> None:
        agent = self.agent_selection
        try:
            dead = self.terminations[agent] or self.truncations[agent]
        except KeyError:  # every agent has stepped out after the end
            raise GameOverError("the game is over and every agent is done; call reset() to deal a new one") from None
        if dead:
            self._was_dead_step(action)
            return
        if type(action) is not int:
            action = as_action(action)
        game = self.game
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        scores = game.scores  # the engine updates this list in place
        before = scores[:]
        events = game.events  # a new hand starts a new list
        n_events = len(events)
        game.step(action)
        self._cumulative_rewards[agent] = 0.0
        if scores != before and self._points:
            self._give(zero_sum([a - b for a, b in zip(scores, before)]))
        start = n_events if game.events is events else 0
        events = game.events
        if game.over:
            outcome = self.episode_spec.outcome(game)
            if not self._points:
                self._give(outcome.win_rewards)
            dead = self.truncations if outcome.truncated else self.terminations
            for a in self.agents:
                dead[a] = True
                self.infos[a] = self._events_info(events, self._seat[a], start)
            self._accumulate_rewards()
            self._deads_step_first()
        else:
            seat = game.current_player
            nxt = self.possible_agents[seat]
            self.infos[nxt] = self._events_info(events, seat, start)
            self.agent_selection = nxt
            if self._rewards_dirty:
                self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _give(self, per_side: list[float]) -> None:
        side_of = self.rules.side_of
        rewards = self.rewards
        for a, seat in self._seat.items():
            rewards[a] = per_side[side_of[seat]]
        self._rewards_dirty = True

    # ------------------------------------------------------------------ extras
    def render(self):
        """``ansi``: the picture as a string; ``human``: print it; ``rgb_array``: the picture as an
        ``(H, W, 3)`` uint8 frame (``allfives_env.picture``). Seen by the agent to act."""
        if self.render_mode is None:
            return None
        if self.game is None:
            if self.render_mode == "rgb_array":
                return None
            out = "All Fives: call reset() first"
        else:
            out = render_as(self.game.view(self._seat.get(self.agent_selection, 0)), self.render_mode)
        if self.render_mode == "human":
            print(out)
            return None
        return out

    def close(self) -> None:
        pass

    def state(self) -> np.ndarray:
        """The acting seat's observation vector (a global state is not part of this environment)."""
        return self.observe(self.agent_selection)["observation"]

    def describe_illegal(self, action) -> str:
        """Why ``action`` is illegal for the agent to act (the engine's message), or '' if it is legal."""
        try:
            self.game.check(action)
        except (IllegalMoveError, GameOverError) as exc:
            return str(exc)
        return ""


for _name in _HOT:
    setattr(raw_env, _name, _BeforeReset(_name))


def _events_list(events: list[tuple], seat: int, start: int = 0) -> dict:
    """``info_events="list"``: ``{"events": [engine event tuples]}``, another seat's drawn tile -1."""
    return {"events": public_events(events, seat, start)}


class IllegalMoveInfo(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` that also says why, in ``infos[agent]["illegal_move"]``."""

    def step(self, action) -> None:
        agent = self.agent_selection
        message = ""
        live = not (self.terminations.get(agent) or self.truncations.get(agent))
        if live and self.agents:
            action = as_action(action)  # a bool or a float must not index the mask
        if self._prev_obs is None and live:
            self.observe(agent)
        prev = self._prev_obs
        if prev is not None and action is not None and live and not prev["action_mask"][action]:
            message = self.env.unwrapped.describe_illegal(action)
        super().step(action)
        if message and self._terminated:
            for a in self.infos:
                self.infos[a]["illegal_move"] = f"{agent}: {message}"


class _FastAttributes:
    """Mixin for PettingZoo wrappers: read the hot attributes straight from the raw env.

    PettingZoo's wrappers forward attributes through ``__getattr__``, which runs only after a failed
    lookup, at every layer; at ~20 reads per decision that is a large part of a step's cost. Here
    each is a C-level ``attrgetter`` on the raw env. Reading one before ``reset`` still raises
    ``AttributeError("... cannot be accessed before reset")`` (from ``raw_env.__getattr__``).
    """

    def __init__(self, env, *args, **kwargs):
        super().__init__(env, *args, **kwargs)
        self._raw = env.unwrapped


def _forward(name: str) -> property:
    def put(self, value):
        setattr(self._raw, name, value)

    return property(operator.attrgetter(f"_raw.{name}"), put)


for _name in _HOT:
    setattr(_FastAttributes, _name, _forward(_name))

# The three wrappers below are PettingZoo's standard ones, stacked by ``env()`` as
# ``_Order(_Bounds(_Illegal(raw_env)))``. The common case of a decision (after reset, a live agent,
# a legal in-range int action) takes a quick path that does exactly what the standard code does in
# that case, in fewer calls: ``_Bounds`` passes such an action and every ``observe`` through
# unchanged, so ``_Order`` hands them straight to ``_Illegal``. Anything else takes the standard code
# (tests/test_aec_env.py compares the two). The quick paths read the wrappers' own fields
# (``_prev_obs``, ``_has_reset``, ``_has_updated``, ``_terminated``), so they are used only with the
# PettingZoo releases they were checked against (``QUICK_PATHS_CHECKED``, the range pyproject.toml
# pins); with any other, ``env()`` stacks the plain standard wrappers.

#: PettingZoo releases (``major.minor``) whose wrappers the quick paths were checked against
QUICK_PATHS_CHECKED = ((1, 27),)


def quick_paths_supported(version: str | None = None) -> bool:
    """Whether the installed (or the given) PettingZoo version is one the quick paths were checked against."""
    import pettingzoo

    parts = (version or pettingzoo.__version__).split(".")
    try:
        return (int(parts[0]), int(parts[1])) in QUICK_PATHS_CHECKED
    except (IndexError, ValueError):
        return False


class _Illegal(_FastAttributes, IllegalMoveInfo):
    def observe(self, agent):
        raw = self._raw
        obs = self.env.observe(agent)
        if agent == raw.agent_selection:
            self._prev_obs = obs
            infos = raw.infos
            self._prev_info = infos[agent] if agent in infos else {}
        return obs

    def step(self, action) -> None:
        raw = self._raw
        agent = raw.agent_selection
        prev = self._prev_obs
        if (
            prev is not None
            and type(action) is int
            and 0 <= action < NUM_ACTIONS
            and not raw.terminations[agent]
            and not raw.truncations[agent]
            and prev["action_mask"][action]
        ):
            self._prev_obs = None
            self._prev_info = None
            self.env.step(action)
        else:
            super().step(action)


class _Bounds(_FastAttributes, wrappers.AssertOutOfBoundsWrapper):
    pass


class _Order(_FastAttributes, wrappers.OrderEnforcingWrapper):
    def __init__(self, env) -> None:
        super().__init__(env)
        below = env.env if isinstance(env, _Bounds) else None
        #: where the quick paths go: the ``_Illegal`` layer under ``_Bounds``, else the next layer
        self._quick = below if isinstance(below, _Illegal) else env

    def observe(self, agent):
        if self._has_reset:
            return self._quick.observe(agent)
        return super().observe(agent)

    def step(self, action) -> None:
        if self._has_reset and self._raw.agents:
            self._has_updated = True
            if type(action) is int and 0 <= action < NUM_ACTIONS:
                self._quick.step(action)
            else:
                self.env.step(action)
        else:
            super().step(action)

    def last(self, observe: bool = True):
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        if not observe:
            observation = None
        elif self._has_reset:  # self.observe(agent), one call fewer
            observation = self._quick.observe(agent)
        else:
            observation = super().observe(agent)
        return observation, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], raw.infos[agent]

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderIterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)


class _OrderIterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _OrderIterator(self.env, self.max_iter)


class _OrderIterator(AECOrderEnforcingIterator):
    def __next__(self):
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection


def env(**kwargs):
    """The environment with PettingZoo's standard wrappers (illegal moves end the game, -1 to the offender)."""
    e = raw_env(**kwargs)
    if not quick_paths_supported():
        return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(IllegalMoveInfo(e, illegal_reward=-1)))
    e = _Illegal(e, illegal_reward=-1)
    e = _Bounds(e)
    e = _Order(e)
    return e
