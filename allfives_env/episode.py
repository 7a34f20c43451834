"""What an episode is and how it is scored: the one home of the episode options.

``EpisodeSpec(episode="game", reward="points", max_hands=200)`` is validated once, when it is
built, and then used by both environments, the trainer (``allfives_train.config``) and the tournament
(which plays whole games and uses only ``max_hands``):

- ``episode``: ``"game"`` (a whole game to the target) or ``"hand"`` (one hand of a fresh game;
  the episode ends when the hand ends, or when a side reaches the target in it).
- ``reward``: ``"points"`` (after each step every side's score change ``d`` is zero-summed: side
  ``i`` gets ``d_i - (sum of the other sides' d) / (sides - 1)``) or ``"win"`` (0 until the end,
  then the values of ``engine.rewards.win_rewards`` for the winner of :meth:`EpisodeSpec.outcome`).
- ``max_hands``: stop a game after that many hands (``None``: no limit). The rules never end a
  game in which no side reaches the target, and poor play can go on for ever.

:meth:`EpisodeSpec.outcome` is the end-of-episode result of a finished game: whether it ended by
the rules (terminated) or was cut short by ``max_hands`` (truncated), the winning side, and the
final ``win`` rewards per side.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple, Optional

from allfives_env.engine.limits import check_max_hands
from allfives_env.engine.rewards import hand_winner, win_rewards

EPISODES = ("game", "hand")
REWARDS = ("points", "win")
DEFAULT_MAX_HANDS = 200


class Outcome(NamedTuple):
    """How a finished game ends an episode."""

    #: ended by the rules (a side reached the target, or the hand of a ``hand`` episode ended)
    terminated: bool
    #: cut short by ``max_hands`` in a ``game`` episode
    truncated: bool
    #: the winning side, or ``None`` (a truncated game; a hand with a tie for the highest score)
    winner: Optional[int]
    #: per side: the ``win`` reward (zero-sum; all 0 without a winner)
    win_rewards: list


@dataclass(frozen=True)
class EpisodeSpec:
    """The episode options, validated (``ValueError`` naming the option) and immutable."""

    episode: str = "game"
    reward: str = "points"
    max_hands: Optional[int] = DEFAULT_MAX_HANDS

    def __post_init__(self) -> None:
        if self.episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}, got {self.episode!r}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {self.reward!r}")
        check_max_hands(self.max_hands)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The option names, as the environments, configs and flags spell them."""
        return tuple(f.name for f in fields(cls))

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.field_names()}

    @property
    def hands_limit(self) -> Optional[int]:
        """The ``max_hands`` a ``Game`` of this episode gets: 1 for a ``hand`` episode."""
        return 1 if self.episode == "hand" else self.max_hands

    def outcome(self, game) -> Outcome:
        """The result of the finished ``game`` (an ``engine.Game`` with ``over`` set)."""
        if self.episode == "hand":
            winner = hand_winner(game.scores)
            return Outcome(True, False, winner, win_rewards(game.scores, winner))
        terminated = game.winner is not None
        return Outcome(terminated, not terminated, game.winner, win_rewards(game.scores, game.winner))
