"""The one home of the search's options: ``SearchOptions``, a typed dataclass.

Each field is one ``ismcts`` option: its type, default, range, help and the other options it takes
effect under (``allfives_agents.options.Option`` in the field's metadata). The registry's ``ismcts`` kind,
``allfives`` help, the error messages and the options table of docs/search.md
(``options_table()``, checked by tests/test_search_options.py) are all read from here.

A value that the setting given would ignore is refused, with the reason: ``worlds=50`` with
``belief=uniform`` (there is no pool of worlds to size), ``cpuct=10`` without ``policy`` (there is
no prior to weigh). Defaults are never refused: writing an option at its default changes nothing.

    SearchOptions(iters=300, policy="allfives_2p", belief="policy", worlds=100, select="bias", cpuct=10)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..options import Needs, Option
from .inference import DEFAULT_EPS

_BELIEFS = ("policy", "expert")


def _option(default, help: str, *, type_=None, needs: tuple[Needs, ...] = (), **rule):
    option = Option(type_ or type(default), help=help, needs=needs, **rule)
    return field(default=default, metadata={"option": option})


@dataclass(frozen=True)
class SearchOptions:
    """The options of ``ismcts`` (``allfives_agents.search.ismcts.ISMCTSAgent``); see the module docstring."""

    iters: int = _option(200, "iterations per decision (reproducible for a seed)", min=1)
    seconds: float = _option(
        0.0, "a time budget per decision instead of `iters` (not reproducible); 0: none", min=0, above=True
    )
    rollout: str = _option(
        "greedy",
        "the policy below the tree: `greedy`, `random` or `expert` (each seat plays `expert` from its own view "
        "in the sampled world: slower than `greedy`, and measured no stronger)",
        choices=("greedy", "random", "expert"),
    )
    c: float = _option(0.7, "the UCB exploration constant below the root (and at the root without a policy)", min=0)
    policy: str = _option(
        "",
        "a policy file (`.zip`, `.npz`: numpy; `.onnx`: onnxruntime) or a shipped model's name (`allfives_2p`, "
        "`allfives_3p`, `allfives_4p`); its move probabilities are the root's prior",
        file=True,
    )
    cpuct: float = _option(1.0, "the weight of the prior", min=0, needs=(Needs("policy"),))
    temp: float = _option(1.0, "the softmax temperature of the prior (higher: flatter)", min=0, above=True, needs=(Needs("policy"),))
    guide: str = _option(
        "root",
        "`tree`: also a prior at every node reached a second time, from the view of the seat to move there "
        "(one network call per such node)",
        choices=("root", "tree"),
        needs=(Needs("policy"),),
    )
    select: str = _option(
        "puct",
        "how the root uses the prior: `puct` (AlphaZero's `Q + cpuct * P * sqrt(N) / (1 + n)`) or `bias` "
        "(UCB with a progressive bias `cpuct * P / (1 + n)` that fades with a move's visits; use `cpuct=10`)",
        choices=("puct", "bias"),
        needs=(Needs("policy"),),
    )
    belief: str = _option(
        "uniform",
        "how worlds are sampled: `uniform` over what the public facts allow; `policy`: weighted by how likely "
        "the network finds the other seats' choices this hand (inference from play); `expert`: the same with "
        "`expert` (or `bweights`) as the model of play",
        choices=("uniform", "policy", "expert"),
        needs=(Needs("policy", when=("policy",)),),
    )
    worlds: int = _option(
        0, "the pool of uniformly sampled worlds the belief weighs per decision (none: as many as `iters`)", min=1,
        needs=(Needs("belief", _BELIEFS),),
    )
    bpolicy: str = _option(
        "", "another network as the model of the other seats' play (the prior staying `policy`'s)", file=True,
        needs=(Needs("belief", ("policy",)),),
    )
    bweights: str = _option(
        "", "a model of play fitted to a player's records (`allfives fit-play`) in place of `expert`'s weights; "
        "a file, or a shipped one's name (`expert_2p`, `expert_4p`: `models/play/`)",
        file=True, needs=(Needs("belief", ("expert",)),),
    )
    bpartner: str = _option(
        "",
        "partnerships: a fitted model of the partner's play; the partner's choices weigh the worlds too "
        "(`softmax(scale * score)`), and `opp=all` plays the partner by its best move",
        file=True, needs=(Needs("belief", ("expert",)),),
    )
    btemp: float = _option(
        0.5, "the softmax temperature of the network as a model of the other seats' play (lower: trusts it more)",
        min=0, above=True, needs=(Needs("belief", ("policy",)),),
    )
    beps: float = _option(
        DEFAULT_EPS, "the chance each choice keeps in every world whatever the model says (no world is ruled out)",
        min=0, above=True, below=1, needs=(Needs("belief", _BELIEFS),),
    )
    opp: str = _option(
        "search",
        "`model`: the other sides play the belief's model of play in the tree and the rollouts (the best reply "
        "to that model: strong against the player modelled, and only against it); `all`: a partner too",
        choices=("search", "model", "all"),
        needs=(Needs("belief", _BELIEFS),),
    )
    stop: str = _option(
        "early",
        "`early`: an `iters` search ends once its most visited move can no longer be overtaken (the same move, "
        "sooner); `full`: every iteration",
        choices=("early", "full"),
        needs=(Needs("seconds", (0.0,)),),
    )
    value: str = _option(
        "points",
        "what a rollout's end is worth: `points`, `tanh(score change / 40)`; `equity`, the change in the side's "
        "chance to win the game (two sides only)",
        choices=("points", "equity"),
    )

    def __post_init__(self) -> None:
        for name, option in OPTIONS.items():
            value = getattr(self, name)
            if value != DEFAULTS[name]:
                option.check(value, name, "ismcts")
        for name, option in OPTIONS.items():
            value = getattr(self, name)
            if value == DEFAULTS[name]:
                continue
            for need in option.needs:
                if need.when and value not in need.when:
                    continue
                other = getattr(self, need.option)
                met = other in need.values if need.values else other != DEFAULTS[need.option]
                if not met:
                    if OPTIONS[need.option].file:
                        needed, now = f"a network: {need.option}=PATH", f"no {need.option}"
                    else:
                        needed, now = need.describe(), f"{need.option}={_shown(other)}"
                    raise ValueError(
                        f"agent 'ismcts': option {name}={_shown(value)} needs {needed}; with {now} it would be ignored"
                    )

    @classmethod
    def from_spec_options(cls, options: dict) -> "SearchOptions":
        """From a spec's options (key -> value); ``ValueError`` naming an unknown key."""
        unknown = [k for k in options if k not in OPTIONS]
        if unknown:
            raise ValueError(f"agent 'ismcts' has no option {unknown[0]!r}; its options: {', '.join(OPTIONS)}")
        return cls(**options)

    def changed(self) -> dict:
        """The options set to other values than their defaults, in the fields' order."""
        return {name: getattr(self, name) for name in OPTIONS if getattr(self, name) != DEFAULTS[name]}

    @property
    def pool_size(self) -> int:
        """The worlds the belief weighs per decision (``worlds``, else ``iters``)."""
        return self.worlds or self.iters


#: each option's ``Option``, in the fields' order
OPTIONS: dict[str, Option] = {f.name: f.metadata["option"] for f in dataclasses.fields(SearchOptions)}


#: each option's default, in the fields' order
DEFAULTS: dict = {f.name: f.default for f in dataclasses.fields(SearchOptions)}


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def options_table() -> str:
    """The Markdown table of the options (docs/search.md holds it between its markers)."""
    rows = ["| option | values | default | takes effect with | meaning |", "|---|---|---|---|---|"]
    for name, option in OPTIONS.items():
        default = DEFAULTS[name]
        shown = "none" if default == "" or (name in ("seconds", "worlds") and not default) else _shown(default)
        needs = ", ".join(
            (f"`{n.describe()}`" + (f" (for `{name}={'|'.join(n.when)}`)" if n.when else "")) for n in option.needs
        )
        cells = [f"`{name}`", f"`{option.describe()}`", shown, needs or "-", option.help]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)
