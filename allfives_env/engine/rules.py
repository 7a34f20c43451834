"""The game options of docs/specification.md, validated once, as an immutable value.

``Rules.make(**options)`` fills in the defaults that depend on the number of players and raises a
``ValueError`` naming the option and the allowed values for anything invalid.

The option fields of ``Rules`` are the one home of the options: each carries an ``Option`` (what a
user may give, its default, the allowed values, a one-line help) in its field metadata, and
``OPTIONS`` lists them in record order. The training config's ``game`` section, the command
line's rules flags and the bot server's JSON schema are all derived from ``OPTIONS``, with the
same names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional, Union

from .tiles import NUM_TILES

HAND_SIZE_NAMES = ("standard", "five", "seven_five")
HAND_END_OPTIONS = ("subtract", "winner_takes")

MAX_TARGET = 100_000
_STANDARD = {2: 9, 3: 7, 4: 5}
_SEVEN_FIVE = {2: 7, 3: 5, 4: 5}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Option:
    """How a user gives one rules option (a config key, a flag, a JSON property)."""

    name: str
    #: the type a user may give: ``int``, ``bool``, ``str`` or ``Union[int, str]``
    given: object
    #: the default when the option is left out; ``None``: resolved by ``Rules.make`` from the players
    default: object
    help: str
    #: the allowed names (for strings)
    choices: tuple = ()
    #: smallest and largest allowed number (``None``: no fixed bound)
    minimum: Optional[int] = None
    maximum: Optional[int] = None

    @property
    def resolved_later(self) -> bool:
        """Whether the default depends on other options (then ``None`` stands for it)."""
        return self.default is None


def _option(given, default, help: str, **bounds) -> dict:
    return {"option": (given, default, help, bounds)}


@dataclass(frozen=True)
class Rules:
    """One variant of All Fives. Build it with :meth:`Rules.make`, which validates everything.

    ``hand_size`` keeps the name it was given (``"standard"``, ``"five"``, ``"seven_five"`` or a
    number); ``tiles_per_hand`` is the resolved count.
    """

    num_players: int = field(default=2, metadata=_option(int, 2, "number of players, 2-4", minimum=2, maximum=4))
    partnerships: bool = field(
        default=False, metadata=_option(bool, None, "4-player partnership game (default: on with 4 players)")
    )
    hand_size: int | str = field(
        default="standard",
        metadata=_option(Union[int, str], "standard", "tiles dealt to each player: standard, five, seven_five or a number",
                         choices=HAND_SIZE_NAMES, minimum=1),
    )
    boneyard_reserve: int = field(
        default=0, metadata=_option(int, 0, "boneyard tiles that can never be drawn", minimum=0)
    )
    hand_end: str = field(
        default="subtract", metadata=_option(str, "subtract", "end-of-hand scoring", choices=HAND_END_OPTIONS)
    )
    target_score: int = field(
        default=250,
        metadata=_option(int, None, "score that wins (default 250 with 2 players, 200 with 3-4)", minimum=1, maximum=MAX_TARGET),
    )
    tiles_per_hand: int = field(default=9, compare=False)
    num_sides: int = field(default=2, compare=False)
    side_of: tuple[int, ...] = field(default=(0, 1), compare=False)

    @classmethod
    def make(
        cls,
        num_players: int = 2,
        partnerships: bool | None = None,
        hand_size: int | str = "standard",
        boneyard_reserve: int = 0,
        hand_end: str = "subtract",
        target_score: int | None = None,
    ) -> "Rules":
        """Validate the options and resolve their defaults (see docs/specification.md)."""
        if not _is_int(num_players) or not 2 <= num_players <= 4:
            raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
        if partnerships is None:
            partnerships = num_players == 4
        if not isinstance(partnerships, bool):
            raise ValueError(f"partnerships must be true or false, got {partnerships!r}")
        if partnerships and num_players != 4:
            raise ValueError(f"partnerships need num_players=4, got num_players={num_players}")
        if hand_size == "standard":
            tiles = _STANDARD[num_players]
        elif hand_size == "five":
            tiles = 5
        elif hand_size == "seven_five":
            tiles = _SEVEN_FIVE[num_players]
        elif _is_int(hand_size):
            tiles = hand_size
            if tiles < 1 or num_players * tiles > NUM_TILES:
                raise ValueError(
                    f"hand_size {tiles} does not fit: {num_players} players x {tiles} tiles must be "
                    f"between 1 and {NUM_TILES} tiles (at most {NUM_TILES // num_players} each)"
                )
        else:
            raise ValueError(
                f"hand_size must be one of {', '.join(HAND_SIZE_NAMES)} or a number of tiles, got {hand_size!r}"
            )
        boneyard = NUM_TILES - num_players * tiles
        if not _is_int(boneyard_reserve) or not 0 <= boneyard_reserve <= boneyard:
            raise ValueError(
                f"boneyard_reserve must be an integer from 0 to the boneyard size ({boneyard}), "
                f"got {boneyard_reserve!r}"
            )
        if hand_end not in HAND_END_OPTIONS:
            raise ValueError(f"hand_end must be one of {', '.join(HAND_END_OPTIONS)}, got {hand_end!r}")
        if target_score is None:
            target_score = 250 if num_players == 2 else 200
        if not _is_int(target_score) or not 0 < target_score <= MAX_TARGET:
            raise ValueError(f"target_score must be a positive integer up to {MAX_TARGET}, got {target_score!r}")
        side_of = tuple(seat % 2 for seat in range(4)) if partnerships else tuple(range(num_players))
        return cls(
            num_players=num_players,
            partnerships=partnerships,
            hand_size=hand_size,
            boneyard_reserve=boneyard_reserve,
            hand_end=hand_end,
            target_score=target_score,
            tiles_per_hand=tiles,
            num_sides=2 if partnerships else num_players,
            side_of=side_of,
        )

    @classmethod
    def from_dict(cls, options: dict) -> "Rules":
        """Rules from a mapping of option names (as in records and configs); unknown names are an error."""
        if not isinstance(options, dict):
            raise ValueError(f"rules must be a mapping of option names, got {type(options).__name__}")
        unknown = sorted(set(options) - set(OPTION_NAMES), key=str)
        if unknown:
            raise ValueError(f"unknown rules option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTION_NAMES)}")
        return cls.make(**options)

    def to_dict(self) -> dict:
        """The options as a plain dict, in the order records use."""
        return {name: getattr(self, name) for name in OPTION_NAMES}

    @property
    def boneyard_size(self) -> int:
        """Tiles left in the boneyard right after the deal (the reserve included)."""
        return NUM_TILES - self.num_players * self.tiles_per_hand

    def seats_of_side(self, side: int) -> tuple[int, ...]:
        """The seats that play for ``side``."""
        return tuple(s for s in range(self.num_players) if self.side_of[s] == side)

    def partner_of(self, seat: int) -> int | None:
        """The partner's seat in a partnership game, else ``None``."""
        return (seat + 2) % 4 if self.partnerships else None


#: the rules options, in record order (the option fields of ``Rules``)
OPTIONS: tuple[Option, ...] = tuple(
    Option(f.name, *f.metadata["option"][:3], **f.metadata["option"][3]) for f in fields(Rules) if "option" in f.metadata
)
OPTION_NAMES: tuple[str, ...] = tuple(o.name for o in OPTIONS)


def rules_from(rules: Rules | None, options: dict) -> Rules:
    """The ``Rules`` a game or environment plays: ``rules`` as given, or made from ``options`` (not both)."""
    if rules is None:
        return Rules.make(**options)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a Rules (or pass the rules options instead), got {type(rules).__name__}")
    if options:
        raise TypeError(f"pass either a Rules or rules options, not both (got {', '.join(sorted(options))})")
    return rules
