"""The shipped policies by name: ``model_path("allfives_2p", "onnx")``, ``load_card("allfives_4p")``.

The trained policies live in ``models/`` at the root of the repository (``NAME.zip``, ``NAME.onnx``
and the card ``NAME.json``). Where they are found:

1. a checkout (an editable install, or the source tree on ``sys.path``): ``models/`` next to the
   ``agents`` package, so a freshly shipped model is used without reinstalling;
2. an installed wheel: the copy the build puts inside the package, ``allfives_agents/model_files/``
   (``setup.py`` copies ``models/*.zip|onnx|json`` there), read with ``importlib.resources``.

The agent specs ``ppo:allfives_2p`` and ``onnx:allfives_2p`` use this (``allfives_agents.registry``); a spec
with a path (``ppo:models/allfives_2p.zip``) still means that file.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

#: file suffix of each kind of model file; ``ppo`` is the agent kind of the ``.zip``
KINDS = {"zip": ".zip", "ppo": ".zip", "onnx": ".onnx", "json": ".json", "card": ".json"}

#: the folder, inside the ``agents`` package of a wheel, that holds the shipped model files
PACKAGE_DIR = "model_files"
#: the folder of the shipped models of play (``allfives fit-play``), inside a models folder
PLAY_DIR = "play"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _checkout_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "models"


def _installed_dir():
    try:
        return resources.files(__package__).joinpath(PACKAGE_DIR)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - agents is always importable here
        return None


def model_dirs() -> list:
    """The folders searched, in order: the checkout's ``models/``, then the installed copy (those that exist)."""
    found = []
    checkout = _checkout_dir()
    if checkout.is_dir():
        found.append(checkout)
    installed = _installed_dir()
    if installed is not None and installed.is_dir():
        found.append(installed)
    return found


def available_models() -> list[str]:
    """The names of the shipped models (those with a card), sorted; the checkout's and the installed ones."""
    names = set()
    for folder in model_dirs():
        names.update(entry.name[: -len(".json")] for entry in folder.iterdir() if entry.name.endswith(".json"))
    return sorted(names)


def is_model_name(text: str) -> bool:
    """Whether ``text`` looks like a model name (``allfives_2p``) rather than a path: no folder, no suffix."""
    return bool(_NAME.fullmatch(text)) and not text.lower().endswith(tuple(set(KINDS.values()) | {".npz"}))


def model_path(name: str, kind: str = "onnx") -> Path:
    """The file of shipped model ``name``: ``kind`` is ``onnx``, ``zip`` (or ``ppo``) or ``json`` (or ``card``).

    The checkout's ``models/`` is looked in first, then the installed copy. ``FileNotFoundError``
    lists the models there are; ``ValueError`` for an unknown kind or a name that is a path.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown model file kind {kind!r}; one of {', '.join(KINDS)}")
    if not is_model_name(name):
        raise ValueError(f"{name!r} is not a model name (a name is like allfives_2p, without folder or suffix)")
    filename = name + KINDS[kind]
    for folder in model_dirs():
        candidate = folder.joinpath(filename)
        if candidate.is_file():
            return Path(str(candidate))  # a real file: wheels are installed unzipped
    known = ", ".join(available_models()) or "none"
    raise FileNotFoundError(f"no shipped model file {filename}; shipped models: {known}")


def load_card(name: str) -> dict:
    """The card (``NAME.json``) of shipped model ``name``, as a dict."""
    return json.loads(model_path(name, "json").read_text())


def policy_file(kind: str, path: str) -> str:
    """The file a path agent of ``kind`` (``ppo``, ``onnx``) opens for ``path``: ``path`` itself when it
    is a file or looks like a path, else the shipped model of that name (``model_path``)."""
    suffix = {"ppo": "zip", "onnx": "onnx"}.get(kind)
    if suffix is None or Path(path).exists() or not is_model_name(path):
        return path
    try:
        return str(model_path(path, suffix))
    except FileNotFoundError:
        return path  # the agent reports the missing file as before


def play_model_path(name: str) -> Path:
    """The file of shipped model of play ``name`` (``expert_2p``: ``models/play/expert_2p.json``, fitted
    by ``allfives fit-play``); ``FileNotFoundError`` if there is none."""
    if is_model_name(name):
        for folder in model_dirs():
            candidate = folder.joinpath(PLAY_DIR, name + ".json")
            if candidate.is_file():
                return Path(str(candidate))
    raise FileNotFoundError(f"no shipped model of play {name!r}")


def option_file(value: str) -> str:
    """The file a file option (``policy=``, ``bweights=``...) opens: an ``.onnx`` path, else a
    ``.zip``/``.npz``/``.json`` path, a shipped policy's zip (``policy_file``) or a shipped model of
    play's file (``play_model_path``: ``bweights=expert_2p``)."""
    found = policy_file("onnx" if value.lower().endswith(".onnx") else "ppo", value)
    if found == value and is_model_name(value) and not Path(value).exists():
        try:
            return str(play_model_path(value))
        except FileNotFoundError:
            pass
    return found
