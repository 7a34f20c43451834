"""Typed agent options: a type, the values it takes, its help, and the other options it needs.

An ``Option`` is the one description of one option of one agent kind. The registry
(``allfives_agents.registry``), the spec parser (``allfives_agents.spec``), the CLI's help and error messages and the
docs' option tables are all read from these objects; the search keeps its own in
``allfives_agents.search.options.SearchOptions`` (a dataclass whose fields carry them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Needs:
    """The setting an option needs: ``option`` set (not its default) or, with ``values``, one of them.

    ``when``: the values of the needing option that need it (default: any value but its default).
    """

    option: str
    values: tuple = ()
    when: tuple = ()

    def describe(self) -> str:
        """``policy``, ``belief=policy|expert``: what is needed, as a spec would write it."""
        return f"{self.option}={'|'.join(map(_text, self.values))}" if self.values else self.option


@dataclass(frozen=True)
class Option:
    """An agent option's type and the values it takes: numbers are finite, at least ``min`` (or,
    with ``above``, strictly more than it) and less than ``below``; ``choices`` lists the values of a
    string option; ``file`` marks a string naming a policy or model file (or a shipped model);
    ``needs`` the other options' settings it takes effect under."""

    type: type
    min: float | None = None
    above: bool = False
    choices: tuple = ()
    file: bool = False
    below: float | None = None
    help: str = ""
    needs: tuple[Needs, ...] = ()

    def describe(self) -> str:
        """``int>=1``, ``float>0``, ``greedy|random``, ``float``, ``FILE``: for ``available()`` and the docs."""
        if self.choices:
            return "|".join(map(str, self.choices))
        if self.file:
            return "FILE"
        if self.min is None:
            return self.type.__name__
        upper = "" if self.below is None else f"<{self.below:g}"
        return f"{self.type.__name__}{'>' if self.above else '>='}{self.min:g}{upper}"

    def check(self, value, key: str, agent: str):
        """``value`` if the option takes it, else ``ValueError`` naming the agent, the option and the rule."""
        if self.choices:
            if value not in self.choices:
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be one of {', '.join(map(str, self.choices))}")
            return value
        if self.type in (int, float):
            if isinstance(value, bool) or not isinstance(value, int if self.type is int else (int, float)):
                what = "an int" if self.type is int else "a number"
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be {what}")
            if not math.isfinite(value):
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be a finite number")
            if self.min is not None and (value <= self.min if self.above else value < self.min):
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be {'>' if self.above else '>='} {self.min:g}")
            if self.below is not None and value >= self.below:
                raise ValueError(f"agent {agent!r}: option {key}={value!r} must be < {self.below:g}")
        elif self.type is str and not isinstance(value, str):
            raise ValueError(f"agent {agent!r}: option {key}={value!r} must be a string")
        return value

    def convert(self, text: str, key: str, agent: str):
        """The value of ``text`` as written in a spec, checked; ``ValueError`` naming the option."""
        kind = self.type
        try:
            if kind is bool:
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError
            converted = kind(text)
        except ValueError:
            raise ValueError(f"agent {agent!r}: option {key}={text!r} is not a valid {kind.__name__}") from None
        if isinstance(converted, float) and not math.isfinite(converted):  # named as written in the spec
            raise ValueError(f"agent {agent!r}: option {key}={text!r} must be a finite number")
        return self.check(converted, key, agent)


def check_options(agent: str, options: dict, known: dict[str, Option]) -> dict:
    """``options`` if every key is one of ``known`` and every value is taken (``Option.check``);
    else ``ValueError`` naming the option (and listing ``known`` for an unknown key)."""
    for key, value in options.items():
        if key not in known:
            raise ValueError(f"agent {agent!r} has no option {key!r}; its options: {', '.join(known) or 'none'}")
        known[key].check(value, key, agent)
    return options


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
