"""Gymnasium single-agent All Fives for Stable-Baselines3: the learner plays one seat (or one side).

Every other seat is played inside the environment by opponents the caller hands in: agent objects
(``allfives_agents.make_agent("greedy")``, any object with ``act(view)`` and ``reset(seed)``) or functions
``f(view) -> action``; by default a uniformly random one (``allfives_env.opponents``). The
learner's trajectory holds only its own observations and rewards: the observation is always the
learner's (or, with ``control_partner=True``, the acting seat of the learner's side), and each
reward is the zero-summed change of the learner's side's score since its previous decision (for
the first decision: since the deal), so points scored by anyone while the others play are all
delivered, including on the final step. Over a two-sided episode the rewards add up to the
learner side's final score minus the other side's (times ``reward_scale``).

``action_masks()`` gives the legal actions, so MaskablePPO works under ``SubprocVecEnv`` without
``ActionMasker``; ``info["action_mask"]`` carries the same mask, so gymnasium's vector envs (either
autoreset mode) hand it over too. The info has the same keys, types and shapes at every step
(``seat`` int, ``scores`` int64 array of one score per side, ``hand`` int, ``winner`` int with -1
for none, ``action_mask`` int8 (112,), as the AEC env's); ``illegal_action="lose"`` adds ``illegal_move`` (a string)
to the info of the step that ends the episode that way, and only to it. The registered ids
(``allfives_env.registration``) default to ``illegal_action="lose"`` so that gymnasium's and
SB3's ``check_env`` pass; ``SingleAgentEnv(...)`` itself defaults to ``"raise"``. The episode options (``episode``, ``reward``, ``max_hands``) are those of
``allfives_env.episode.EpisodeSpec``; the rules come as a ``Rules`` (``rules=``) or as rules options.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from allfives_env.engine import Game, IllegalMoveError, Rules
from allfives_env.engine.rewards import zero_sum
from allfives_env.engine.rules import rules_from
from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.episode import DEFAULT_MAX_HANDS, EpisodeSpec
from allfives_env.inputs import as_action, as_seed
from allfives_env.observation import OBS_SIZES, OBS_VERSION, GameObserver, encoder
from allfives_env.opponents import RandomOpponent, as_opponents
from allfives_env.privileged import PRIVILEGED_SIZE, encode_privileged
from allfives_env.render_modes import RENDER_MODES, render_as


class SingleAgentEnv(gym.Env):
    """The learner against agents played inside the environment.

    Args:
        opponents: an agent, a function, or a list of them (default: one ``RandomOpponent``);
            for each episode every opponent seat gets one drawn from the list
            (``opponent_weights`` sets the odds).
        partner: who plays the learner's partner in a partnership game (default: drawn like the
            opponents). Ignored when ``control_partner`` is true.
        seat: the learner's seat, or ``None`` for a random seat each episode.
        control_partner: in a partnership game, the learner plays both seats of its side.
        reward_scale: multiplies every reward (points are large numbers; 0.01 suits PPO).
        illegal_action: ``"raise"`` (default): an illegal action raises the engine's
            ``IllegalMoveError`` and changes nothing; ``"lose"``: it ends the episode
            (terminated) with reward ``illegal_reward`` and the engine's message in
            ``info["illegal_move"]`` (for algorithms without action masking). Either way an
            action that is not an int (a Python int or a numpy integer; not a bool, a float or a
            string) is a ``TypeError``, and changes nothing.
        episode, reward, max_hands: the episode options (``allfives_env.episode.EpisodeSpec``).
        rules: a ``Rules``; or give the rules options themselves (``num_players=4``, ...).
        render_mode: as in ``raw_env``.
        obs_version: 4 (the default, ``OBS_VERSION``), 3, 2 or 1, as in ``raw_env``.
        privileged: append the tiles the learner cannot see (``allfives_env.privileged``) to every
            observation, for a critic that sees every hand in training; a policy that plays must
            read only the first ``OBS_SIZES[obs_version]`` values (docs/training.md).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 1, "obs_version": OBS_VERSION}

    def __init__(
        self,
        opponents: Any = None,
        partner: Any = None,
        seat: int | None = None,
        control_partner: bool = False,
        opponent_weights: Sequence[float] | None = None,
        episode: str = "game",
        reward: str = "points",
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        max_hands: int | None = DEFAULT_MAX_HANDS,
        render_mode: str | None = None,
        obs_version: int = OBS_VERSION,
        privileged: bool = False,
        rules: Rules | None = None,
        **rule_options,
    ) -> None:
        super().__init__()
        encoder(obs_version)  # refuses an unknown version by name
        self.view_size = OBS_SIZES[obs_version]
        self._privileged = privileged
        if obs_version != OBS_VERSION:
            self.metadata = dict(self.metadata, obs_version=obs_version)
        self.rules = rules_from(rules, rule_options)
        #: ``(game, seat) -> (observation, action mask)`` of the view's observation, for these rules and version
        self._observe = GameObserver(self.rules, obs_version)
        self._mask, self._mask_at, self._mask_move = None, None, None  # the mask observed with the last observation, of which game and move
        self.episode_spec = EpisodeSpec(episode, reward, max_hands)
        n = self.rules.num_players
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise ValueError(f"seat must be None or a seat 0..{n - 1}, got {seat!r}")
        if control_partner and not self.rules.partnerships:
            raise ValueError("control_partner needs a partnership game (num_players=4, partnerships=True)")
        if illegal_action not in ("raise", "lose"):
            raise ValueError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.reward_scale = float(reward_scale)
        self.fixed_seat = seat
        self.control_partner = control_partner
        self.render_mode = render_mode
        self.set_opponents(opponents, opponent_weights)
        self.partner_agents = None if partner is None else as_opponents(partner, "partner")
        self.observation_space = spaces.Box(-1.0, 1.0, (self.view_size + (PRIVILEGED_SIZE if privileged else 0),), np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game: Game | None = None
        self.seat = 0
        self._seat_agents: list = []
        self._mine: tuple[int, ...] = ()
        self._last_zs = 0.0
        self._lost_by_illegal = False

    def set_opponents(self, opponents, weights: Sequence[float] | None = None) -> None:
        """Replace the opponent list (takes effect at the next reset); usable through ``env_method``."""
        self.opponent_agents = as_opponents(RandomOpponent() if opponents is None else opponents, "opponents")
        if weights is not None:
            weights = [float(w) for w in weights]
            if len(weights) != len(self.opponent_agents) or any(w < 0 for w in weights) or not sum(weights) > 0:
                raise ValueError("opponent_weights must give one non-negative weight per opponent, not all zero")
            total = sum(weights)
            weights = [w / total for w in weights]
        self.opponent_weights = weights

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode. ``seed``: ``None`` or a non-negative int (numpy integers too), as gymnasium."""
        super().reset(seed=as_seed(seed))
        rng = self.np_random
        n = self.rules.num_players
        for _ in range(1000):
            self.seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
            if self.control_partner:
                self._mine = (self.seat, self.rules.partner_of(self.seat))
            else:
                self._mine = (self.seat,)
            self._seat_agents = [None] * n
            for s in range(n):
                if s in self._mine:
                    continue
                pool = self.opponent_agents
                weights = self.opponent_weights
                if self.partner_agents is not None and s == self.rules.partner_of(self.seat):
                    pool, weights = self.partner_agents, None
                agent = pool[int(rng.choice(len(pool), p=weights))]
                agent.reset(int(rng.integers(2**63 - 1)))
                self._seat_agents[s] = agent
            self.game = Game(self.rules, int(rng.integers(2**63 - 1)), max_hands=self.episode_spec.hands_limit)
            self._last_zs = 0.0
            self._lost_by_illegal = False
            self._play_others()
            if not self.game.over:
                break
        else:  # pragma: no cover - needs a target that the first moves reach every time
            raise RuntimeError("every deal ended before the learner's first move; raise target_score")
        return self._obs(), self._info()

    def step(self, action):
        lost = self._play(self._checked(action))
        if lost is not None:
            return lost
        self._play_others()
        return self._outcome()

    def _checked(self, action) -> int:
        """``action`` as an int if ``step`` may play it; else the error ``step`` raises, with nothing changed."""
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if self.game.over or self._lost_by_illegal:
            raise RuntimeError("the episode is over; call reset()")
        action = as_action(action)
        if self.illegal_action == "raise":
            self.game.check(action)
        return action

    def _play(self, action: int):
        """The learner's move, ``action`` as ``_checked`` returned it; the step's whole result when
        ``illegal_action="lose"`` ends the episode. ``allfives_env.vector`` checks every game's
        action, calls this, plays the others itself, then calls ``_outcome``."""
        if self.illegal_action == "lose":
            try:
                self.game.check(action)
            except IllegalMoveError as exc:  # the game is not over (checked above)
                self._lost_by_illegal = True
                info = self._info()
                info["illegal_move"] = str(exc)
                return self._obs(), self.illegal_reward, True, False, info
        self.game.step(action)
        return None

    def _outcome(self, obs=None):
        """The step's result once the others have played up to the learner's next decision
        (``obs``: an observation already encoded, for a vector of games that fills its own rows)."""
        game = self.game
        terminated = truncated = False
        reward = self._reward_since_last()
        if game.over:
            outcome = self.episode_spec.outcome(game)
            terminated, truncated = outcome.terminated, outcome.truncated
            if self.episode_spec.reward == "win":
                reward = outcome.win_rewards[self.rules.side_of[self.seat]] * self.reward_scale
        if self.render_mode == "human":
            self.render()
        return self._obs() if obs is None else obs, float(reward), terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learner's current decision, ``(112,)`` int8, 1 = legal (all 0 when
        there is none: before ``reset`` and once the episode is over; gymnasium's ``sample(mask=)``
        then gives 0, which an autoreset ignores); also ``info["action_mask"]``. int8 as in the AEC
        env: the dtype gymnasium's ``Discrete.sample(mask=...)`` takes."""
        if self.game is None or self.game.over or self._lost_by_illegal:
            return np.zeros(NUM_ACTIONS, dtype=np.int8)
        if self._mask_at is self.game and self._mask_move == self._move_of(self.game):
            return self._mask.copy()  # the observer's mask of this decision, made with its observation
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[self.game.legal_actions()] = 1
        return mask

    @staticmethod
    def _move_of(game) -> tuple[int, int]:
        """Where ``game`` stands: its hand and the events of that hand (every change adds one)."""
        return game.hand_index, len(game.events)

    def view(self):
        """The ``PlayerView`` that the current observation encodes: the learner's decision (with
        ``control_partner``, the seat of its side to act), or its seat once the episode is over.
        A teacher agent asked ``act(env.view())`` sees what the learner sees."""
        if self.game is None:
            raise RuntimeError("call reset() before view()")
        return self.game.view(self._viewer())

    def render(self):
        """``ansi``: the picture as text; ``human``: print it; ``rgb_array``: the picture as an
        ``(H, W, 3)`` uint8 frame (``allfives_env.picture``). Seen by the learner's seat."""
        if self.render_mode is None or self.game is None:
            return None
        out = render_as(self.game.view(self._viewer()), self.render_mode)
        if self.render_mode == "human":
            print(out)
            return None
        return out

    # ------------------------------------------------------------------ internals
    def _viewer(self) -> int:
        game = self.game
        return game.current_player if not game.over and game.current_player in self._mine else self.seat

    def _play_others(self) -> None:
        game = self.game
        mine = self._mine
        agents = self._seat_agents
        while not game.over and game.current_player not in mine:
            seat = game.current_player
            agent = agents[seat]
            act_game = getattr(agent, "act_game", None)
            game.step(agent.act(game.view(seat)) if act_game is None else act_game(game, seat))

    def _reward_since_last(self) -> float:
        if self.episode_spec.reward != "points":
            return 0.0
        zs = zero_sum(self.game.scores)[self.rules.side_of[self.seat]]
        reward = zs - self._last_zs
        self._last_zs = zs
        return reward * self.reward_scale

    def _obs(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of the learner's current decision (``_viewer``), copied into ``out`` when
        given (a vector of games fills its own rows); with ``privileged``, the tiles hidden from its
        seat follow the view's observation."""
        seat = self._viewer()
        obs, self._mask = self._observe(self.game, seat)
        self._mask_at, self._mask_move = self.game, self._move_of(self.game)
        if not self._privileged:
            if out is None:
                return obs
            out[...] = obs
            return out
        if out is None:
            out = np.empty(self.observation_space.shape, np.float32)
        out[: self.view_size] = obs
        encode_privileged(self.game, seat, out[self.view_size :])
        return out

    def _info(self) -> dict:
        """The info of every step, of the same keys, types and shapes (docs/environment.md)."""
        game = self.game
        winner = game.winner
        return {
            "seat": self.seat,
            "scores": np.array(game.scores, dtype=np.int64),
            "hand": game.hand_index,
            "winner": -1 if winner is None else winner,
            "action_mask": self.action_masks(),
        }
