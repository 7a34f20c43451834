"""The shipped policies by name: ``model_path("allfives_2p", "onnx")``, ``load_card("allfives_4p")``.

The trained policies live in ``models/`` at the root of the repository (``NAME.zip``, ``NAME.onnx``
and the card ``NAME.json``). Where they are found:

1. a checkout (an editable install, or the source tree on ``sys.path``): ``models/`` next to the
   ``agents`` package, so a freshly shipped model is used without reinstalling;
2. an installed wheel: the copy the build puts inside the package, ``agents/model_files/``
   (``setup.py`` copies ``models/*.zip|onnx|json`` there), read with ``importlib.resources``.

The agent specs ``ppo:allfives_2p`` and ``onnx:allfives_2p`` use this (``agents.registry``); a spec
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

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _checkout_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "models"


def _installed_dir():
    try:
        return resources.files("agents").joinpath(PACKAGE_DIR)
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
