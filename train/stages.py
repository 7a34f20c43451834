"""A recipe of several runs, each starting from the last one's network: a config's ``stages``.

A network made in steps (PPO, then a round of expert iteration, then more PPO with a decaying rate:
``configs/allfives_4p.yaml``) is one file::

    base: ppo_4p.yaml              # optional: a run's config, relative to this file
    stages:
      - name: ppo                  # the config as it is
      - name: expert_iteration     # then these keys changed (dotted, as on the command line)
        set: {imitate.teacher: strong, total_steps: 0}
      - name: polish
        set: {lr_decay: linear, total_steps: 1500000}

Any other top-level key is a config key, over ``base``'s. Stage N's config is the base with its
``set`` applied, then the command line's overrides (so ``total_steps=512`` shortens every stage),
and from the second stage on ``init_from`` is the ``final.zip`` of the stage it starts from: the
one before it, or the one its ``from`` names (so two stages may branch from one network). A stage
``{name: ensemble, fuse: [a, b, c]}`` fuses those stages' networks into one wider network that plays
as their ensemble (train/fuse.py) and evaluates it; a stage may start from it (its widths are then
the fused ones). Every stage's config is checked before the first begins; a later stage may not
change the game or the network (its warm start must fit them), nor set ``init_from``.

``allfives train --config FILE --run-dir RUN`` trains the stages in order, each a whole run in its own
folder ``RUN/N-NAME`` (checkpoints, evaluations, card), then puts the last stage's ``final.zip``,
``best.zip`` and ``config.yaml`` in ``RUN`` with a card of the whole recipe (its stages, their steps
and wall times, the command), so that ``python -m allfives_train.ship RUN`` ships it as it ships any
run. The recipe as resolved is saved first as ``RUN/recipe.yaml``: ``--resume`` reads it, skips the
stages that finished (their card is written last) and resumes the one that was stopped.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from .checkpoint import CheckpointError, atomic_write, resume_point
from .config import CONFIG_NAME, ConfigError, TrainConfig, _read_yaml, _set_path, config_from_data, cut, parse_override, shown
from .fuse import fuse_run, fused_net

#: the resolved recipe in the run's folder (what ``--resume`` continues)
RECIPE_NAME = "recipe.yaml"
#: what a later stage keeps of the first: its warm start must fit the network and the game
FIXED = ("game", "net")
#: what ``RUN`` gets of the last stage, beside the recipe's card
FILES = ("final.zip", "best.zip", CONFIG_NAME)


@dataclass(frozen=True)
class Stage:
    """One run of a recipe: its name, folder name and config (``init_from`` unset after the first:
    the trainer sets it to the model of the stage it starts from, ``source``, once that exists); a
    ``fuse`` stage has the indices of the stages it fuses as ``members`` instead."""

    index: int
    name: str
    config: TrainConfig
    source: int | None = None
    members: tuple[int, ...] = ()

    @property
    def folder(self) -> str:
        return f"{self.index + 1}-{self.name}"


def is_recipe(data: dict) -> bool:
    """Whether a config's mapping (``config.read_data``'s) is a recipe of stages."""
    return isinstance(data, dict) and "stages" in data


def read_recipe(path, overrides=()) -> dict:
    """The recipe of ``path`` resolved to one mapping: ``base``'s keys under the file's, the stages as
    given, the command line's ``overrides`` kept to apply to every stage. ``ConfigError`` naming the
    file for anything malformed."""
    path = Path(path)
    data = _read_yaml(path)
    if not is_recipe(data):
        raise ConfigError(f"{path} has no stages: it is one run's config")
    base_name = data.pop("base", None)
    base: dict = {}
    if base_name is not None:
        if not isinstance(base_name, str) or not base_name:
            raise ConfigError(f"{path}: base must be a config file's path, got {shown(base_name)}")
        base_path = path.parent / base_name
        base = _read_yaml(base_path)
        if is_recipe(base) or "base" in base:
            raise ConfigError(f"{path}: base {base_name} must be one run's config, not a recipe")
    stages = data.pop("stages")
    merged = _merge(base, data)
    for text in overrides:
        parse_override(text)  # a malformed one is refused before anything runs
    return {"config": merged, "stages": stages, "overrides": list(overrides), "source": str(path)}


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def stages_of(recipe: dict) -> list[Stage]:
    """Every stage's checked config (``ConfigError`` naming the stage and the key)."""
    stages = recipe["stages"]
    if not isinstance(stages, list) or not stages:
        raise ConfigError(f"stages: expected a list of at least one stage, got {shown(stages)}")
    out: list[Stage] = []
    for i, entry in enumerate(stages):
        where = f"stages[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a mapping with name and set, got {shown(entry)}")
        unknown = [k for k in entry if k not in ("name", "set", "from", "fuse")]
        if unknown:
            raise ConfigError(f"{where}: unknown key {shown(unknown[0])}; a stage has name and set, from or fuse")
        name = entry.get("name")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}", name):
            raise ConfigError(f"{where}: name must be a plain name (letters, digits, '_', '-'; it names the stage's folder), got {shown(name)}")
        if name in (s.name for s in out):
            raise ConfigError(f"{where}: another stage is named {name!r}")
        where = f"{where} ({name})"
        if "fuse" in entry:
            out.append(_fuse_stage(recipe, entry, i, name, where, out))
            continue
        source = _source(entry, i, where, out)
        changes = entry.get("set") or {}
        if not isinstance(changes, dict):
            raise ConfigError(f"{where}: set must map dotted keys to values, got {shown(changes)}")
        data = copy.deepcopy(recipe["config"])
        for key, value in changes.items():
            if i and str(key) == "init_from":
                raise ConfigError(f"{where}: sets init_from, which a stage after the first takes from the stage it starts from")
            _set_path(data, str(key), value)
        config = _config(recipe, data, i, where)
        if out:
            first = out[0].config  # a fuse stage needs stages before it: the first trains
            for section in FIXED:
                if getattr(first, section) != getattr(config, section):
                    raise ConfigError(f"{where}: changes {section} ({cut(str(_changed(getattr(first, section), getattr(config, section))))}): "
                                      f"a stage starts from another one's network, so the game and the network are the first stage's")
        if source is not None and out[source].members:  # from a fused network: its widths
            config = dataclasses.replace(config, net=fused_net(config.net, len(out[source].members)))
        out.append(Stage(i, name, config, source))
    return out


def _config(recipe: dict, data: dict, i: int, where: str) -> TrainConfig:
    """A stage's checked config: ``data`` with the command line's overrides, ``init_from`` unset after the first."""
    for text in recipe["overrides"]:
        _set_path(data, *parse_override(text))
    if i:
        data["init_from"] = ""
    try:
        return config_from_data(data, where)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _source(entry: dict, i: int, where: str, before: list[Stage]) -> int | None:
    """The index of the stage a training stage starts from: ``from``, or the one before it."""
    if "from" not in entry:
        return i - 1 if i else None
    if not i:
        raise ConfigError(f"{where}: the first stage starts from init_from or from nothing, not from another stage")
    return _named(entry["from"], before, where, "from")


def _named(name, before: list[Stage], where: str, key: str) -> int:
    for stage in before:
        if stage.name == name:
            return stage.index
    raise ConfigError(f"{where}: {key} {shown(name)} is not a stage before it ({', '.join(s.name for s in before) or 'none'})")


def _fuse_stage(recipe: dict, entry: dict, i: int, name: str, where: str, before: list[Stage]) -> Stage:
    """A stage that fuses earlier stages' networks into one (train/fuse.py), with the base config's evaluation."""
    names = entry["fuse"]
    if set(entry) - {"name", "fuse"}:
        raise ConfigError(f"{where}: a fuse stage has a name and the stages it fuses, nothing else")
    if not isinstance(names, list) or len(names) < 2 or len(set(map(str, names))) != len(names):
        raise ConfigError(f"{where}: fuse must list at least 2 different stages before it, got {shown(names)}")
    members = tuple(_named(n, before, where, "fuse") for n in names)
    if any(before[m].members or before[m].config.net != before[members[0]].config.net for m in members):
        raise ConfigError(f"{where}: fuse takes networks of the recipe's own layout, not a fused one")
    return Stage(i, name, _config(recipe, copy.deepcopy(recipe["config"]), i, where), members=members)


def _changed(first, this) -> list[str]:
    a, b = dataclasses.asdict(first), dataclasses.asdict(this)
    return [f"{k}: {shown(a[k])} -> {shown(b[k])}" for k in a if a[k] != b[k]]


def load_recipe(path, overrides=()) -> tuple[dict, list[Stage]]:
    """``read_recipe`` and ``stages_of``: the recipe and its checked stages."""
    recipe = read_recipe(path, overrides)
    return recipe, stages_of(recipe)


def saved_recipe(run_dir) -> dict:
    """The recipe a staged run was started with (``RUN/recipe.yaml``)."""
    path = Path(run_dir) / RECIPE_NAME
    data = _read_yaml(path)
    if not all(k in data for k in ("config", "stages", "overrides", "source")):
        raise ConfigError(f"{path} is not a saved recipe (it needs config, stages, overrides and source)")
    return data


def is_staged_run(run_dir) -> bool:
    return (Path(run_dir) / RECIPE_NAME).is_file()


def _state(folder: Path) -> str:
    """``done`` (its card is written last), ``resume`` (a checkpoint or a warm start to go on from) or ``new``."""
    from .train import warm_start_stopped

    if (folder / "card.json").is_file():
        return "done"
    if folder.is_dir() and (warm_start_stopped(folder) or resume_point(folder) is not None):
        return "resume"
    return "new"


def train_stages(recipe: dict, stages: list[Stage], run_dir, resume: bool = False, progress_bar: bool = True, train=None) -> dict:
    """Train the stages in order in ``RUN/N-NAME``, then the last one's models and the recipe's card
    into ``RUN``; return that card. ``resume``: go on with a run started from this recipe."""
    from .train import train as train_run

    train = train or train_run
    run_dir = Path(run_dir)
    if resume:
        if not is_staged_run(run_dir):
            raise CheckpointError(f"nothing to resume: {run_dir} holds no {RECIPE_NAME} (a run of stages saves it first)")
    elif run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
        raise CheckpointError(f"run directory {run_dir} is not empty: pass --resume to continue it, or another --run-dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    if not resume:
        atomic_write(run_dir / RECIPE_NAME, yaml.safe_dump(recipe, sort_keys=False).encode())
    cards, started = [], time.time()
    for stage in stages:
        folder = run_dir / stage.folder
        state = _state(folder)
        if state == "done":
            print(f"stage {stage.folder}: finished before, kept")
        elif stage.members:
            print(f"stage {stage.folder}: fusing {', '.join(stages[m].name for m in stage.members)} in {folder}")
            if folder.is_dir():
                shutil.rmtree(folder)
            try:
                fuse_run([run_dir / stages[m].folder for m in stage.members], stage.config, folder)
            except ValueError as exc:
                raise CheckpointError(f"stage {stage.folder}: {exc}") from None
        else:
            config = stage.config
            if stage.source is not None:
                config = _with_init(config, run_dir / stages[stage.source].folder / "final.zip")
            print(f"stage {stage.folder}: {'resuming' if state == 'resume' else 'training'} in {folder}")
            if state == "new" and folder.is_dir():
                shutil.rmtree(folder)  # stopped before its first checkpoint: nothing to lose
            train(config, folder, state == "resume", progress_bar)
        cards.append(_read_card(folder))
    for name in FILES:
        atomic_write(run_dir / name, (run_dir / stages[-1].folder / name).read_bytes())
    card = recipe_card(recipe, stages, cards)
    atomic_write(run_dir / "card.json", (json.dumps(card, indent=1) + "\n").encode())
    print(f"stages done in {time.time() - started:.0f} s this time; the recipe's card: {run_dir / 'card.json'}")
    return card


def _with_init(config: TrainConfig, model: Path) -> TrainConfig:
    if not model.is_file():
        raise CheckpointError(f"{model} is missing: the stage before did not finish")
    return dataclasses.replace(config, init_from=str(model))


def _read_card(folder: Path) -> dict:
    path = folder / "card.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path} cannot be read ({exc}): train that stage again by deleting its folder and passing --resume") from None


def stage_seconds(card: dict) -> float:
    """A stage's wall time: its PPO (the card's ``wall_seconds``) and its warm start's rounds."""
    return round(card["wall_seconds"] + sum(r.get("seconds", 0.0) for r in card.get("imitation") or []), 1)


def command(recipe: dict) -> str:
    """The command that trains the recipe (its source file and overrides)."""
    return " ".join(["allfives train --config", recipe["source"], "--run-dir RUN", *recipe["overrides"]])


def recipe_card(recipe: dict, stages: list[Stage], cards: list[dict]) -> dict:
    """The last stage's card, with the steps and wall time of every stage summed and each stage's own
    figures under ``stages``."""
    last = cards[-1]
    rows = []
    for stage, card in zip(stages, cards):
        expert = [r for r in card["final_evaluation"] if r["opponent"] == stage.config.eval.best_against]
        rows.append({
            "name": stage.name,
            "folder": stage.folder,
            "from": stages[stage.source].name if stage.source is not None else None,
            "fused": [stages[m].name for m in stage.members] or None,
            "steps": card["steps"],
            "wall_seconds": stage_seconds(card),
            "imitation": card.get("imitation"),
            "final_evaluation": card["final_evaluation"],
            "win_rate": expert[0]["a_win_rate"] if expert else None,
        })
    return {
        **last,
        "model": "final.zip",
        "steps": sum(card["steps"] for card in cards),
        "wall_seconds": round(sum(row["wall_seconds"] for row in rows), 1),
        "stages": rows,
        "recipe": command(recipe),
    }
