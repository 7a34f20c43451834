"""Agent specs: the text at the edges (command line, HTTP, records' labels), parsed once into ``AgentSpec``.

The grammar, in one place:

    SPEC  := BOT | KIND | KIND ":" OPTS | PATH_KIND ":" PATH | FILE
    OPTS  := KEY "=" VALUE ("," KEY "=" VALUE)*

``BOT`` is a named bot (``fast``, ``strong``: ``allfives_agents.bots``), resolved for a game's players;
``KIND`` a kind of the registry (``greedy``, ``ismcts:iters=300``); ``PATH_KIND`` a kind that takes
a file (``ppo``, ``onnx``), everything after its colon being the path (``,`` and ``:`` included) or
a shipped model's name (``onnx:allfives_2p``); ``FILE`` a policy file (``.onnx`` -> ``onnx:FILE``,
``.zip``/``.npz`` -> ``ppo:FILE``). An option value cannot hold a ``,`` (``policy=a,b.zip``): such
a spec is refused with a message that says so; build an ``AgentSpec`` in Python to pass any path.

Unknown kinds, unknown keys, a key given twice and bad values raise ``ValueError`` naming them;
the kinds' options and their ranges are the registry's (``allfives_agents.registry.AGENTS``). The CLI, the
tournament, Ray workers, the server and the web page pass ``AgentSpec`` values, never re-parse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Iterable

from .bots import BOTS, bot_spec
from .models import option_file, policy_file
from .options import check_options
from .registry import AGENTS, available


@dataclass(frozen=True)
class AgentSpec:
    """One agent's kind and options, checked.

    ``kind`` is a registry kind (``AGENTS``) or ``bot`` (a named bot, ``name`` its name, unresolved
    until the game is known: ``for_game``); ``options`` the options given, in order (typed); ``path``
    a path kind's file; ``label`` the text it was written as (the tournament's and records' name).
    """

    kind: str
    options: tuple[tuple[str, object], ...] = ()
    path: str = ""
    label: str = ""
    name: str = ""
    #: the named bot this spec is the setting of (``for_game``), else ``""``
    bot: str = ""

    @classmethod
    def parse(cls, text: "str | AgentSpec") -> "AgentSpec":
        """The spec of ``text`` (an ``AgentSpec`` is returned as is)."""
        if isinstance(text, AgentSpec):
            return text
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"an agent spec must be a non-empty string, got {text!r}; available: {_choices()}")
        text = text.strip()
        if text in BOTS:
            return cls("bot", name=text, label=text)
        text = _from_file(text)
        kind, colon, rest = text.partition(":")
        if kind not in AGENTS:
            raise ValueError(f"unknown agent {kind!r}; available: {_choices()}")
        agent_type = AGENTS[kind]
        if agent_type.takes_path:
            if not rest:
                raise ValueError(f"agent {kind!r} needs a file: {kind}:PATH")
            return cls(kind, path=policy_file(kind, rest), label=text)
        options: dict[str, object] = {}
        for item in filter(None, rest.split(",")):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq:
                if options and any(agent_type.options[k].file for k in options):
                    raise ValueError(
                        f"agent {kind!r}: {item!r} is not key=value; a file path with ',' cannot be written in a spec "
                        f"({text!r}): rename the file, or pass an AgentSpec"
                    )
                raise ValueError(f"agent {kind!r}: option {item!r} must be key=value")
            if key not in agent_type.options:
                raise ValueError(f"agent {kind!r} has no option {key!r}; its options: {', '.join(agent_type.options) or 'none'}")
            if key in options:
                raise ValueError(f"agent {kind!r}: option {key!r} is given twice in {text!r}")
            options[key] = agent_type.options[key].convert(value.strip(), key, kind)
        return cls(kind, tuple(options.items()), label=text)

    @classmethod
    def of(cls, kind: str, label: str = "", **options) -> "AgentSpec":
        """A spec built in Python (any path, ``,`` included): ``AgentSpec.of("ismcts", iters=300, policy=PATH)``."""
        if kind not in AGENTS or AGENTS[kind].takes_path:
            raise ValueError(f"AgentSpec.of builds an option kind ({', '.join(k for k, t in AGENTS.items() if not t.takes_path)}), got {kind!r}")
        check_options(kind, options, AGENTS[kind].options)
        spec = cls(kind, tuple(options.items()))
        return replace(spec, label=label or spec.text())

    @property
    def is_bot(self) -> bool:
        return self.kind == "bot"

    def text(self) -> str:
        """The canonical spec text (``kind:key=value,...``, ``kind:PATH``, or the bot's name)."""
        if self.is_bot:
            return self.name
        if self.path:
            return f"{self.kind}:{self.path}"
        if not self.options:
            return self.kind
        return f"{self.kind}:" + ",".join(f"{k}={_text(v)}" for k, v in self.options)

    def __str__(self) -> str:
        return self.label or self.text()

    def for_game(self, num_players: int, partnerships: bool = False) -> "AgentSpec":
        """This spec for a game: a named bot becomes its setting there (keeping its name as the
        label); ``ValueError`` where it has none. Other specs are returned as they are."""
        if not self.is_bot:
            return self
        return replace(AgentSpec.parse(bot_spec(self.name, num_players, partnerships)), label=self.label, bot=self.name)

    def files(self) -> dict[str, str]:
        """The files this agent opens, by the option naming each (a path kind's file as ``policy``)."""
        if self.is_bot:
            return {}
        if self.path:
            return {"policy": self.path}
        known = AGENTS[self.kind].options
        return {k: option_file(v) for k, v in self.options if known[k].file and v}

    def missing_files(self) -> list[str]:
        """``"agent 'X': policy file not found: PATH"`` for each file this agent opens that is not there."""
        return [f"agent {str(self)!r}: {option} file not found: {path}" for option, path in self.files().items() if not os.path.exists(path)]

    def with_absolute_files(self) -> "AgentSpec":
        """This spec with every file it opens as an absolute path (for workers in other folders)."""
        if self.path:
            return replace(self, path=os.path.abspath(self.path))
        files = self.files()
        if not files:
            return self
        return replace(self, options=tuple((k, os.path.abspath(files[k]) if k in files else v) for k, v in self.options))

    def option_dict(self) -> dict:
        return dict(self.options)


def parse_specs(values: "str | Iterable[str | AgentSpec]") -> list[AgentSpec]:
    """Specs from ``--agents`` values, each comma- or space-separated (``split_specs``), parsed."""
    if isinstance(values, (str, AgentSpec)):
        values = [values]
    out = []
    for value in values:
        out.extend([value] if isinstance(value, AgentSpec) else [AgentSpec.parse(s) for s in split_specs(value)])
    return out


def split_specs(values: "str | Iterable[str]") -> list[str]:
    """Spec texts from ``--agents`` values: comma-separated, a spec's options kept together.

    ``"random,ismcts:iters=200,rollout=greedy"`` gives ``["random", "ismcts:iters=200,rollout=greedy"]``:
    a piece ``key=value`` whose key is not an agent (a kind, a bot, a file) continues the spec before it.
    """
    if isinstance(values, str):
        values = [values]
    specs: list[str] = []
    for value in values:
        for piece in value.split(","):
            piece = piece.strip()
            if not piece:
                continue
            key = piece.partition("=")[0]
            starts_agent = piece.partition(":")[0] in AGENTS or piece in BOTS or ("=" not in piece)
            if specs and "=" in piece and ":" not in key and not starts_agent:
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    return specs


def resolve_spec(text: str) -> str:
    """A spec text from a spec or a policy file: ``.onnx`` -> ``onnx:PATH``, ``.zip``/``.npz`` ->
    ``ppo:PATH``; anything else as it is. An existing file of another kind is a ``ValueError``."""
    return _from_file(text.strip())


def _from_file(text: str) -> str:
    if text.partition(":")[0] in AGENTS or text in BOTS:
        return text
    lower = text.lower()
    if lower.endswith(".onnx"):
        return f"onnx:{text}"
    if lower.endswith((".zip", ".npz")):
        return f"ppo:{text}"
    if os.path.isfile(text):
        raise ValueError(f"policy file {text}: unknown kind; expected .onnx, .zip or .npz, or an agent spec")
    return text


def _choices() -> str:
    return f"{available()}; the named bots: {', '.join(BOTS)}"


def _text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
