"""The layers: library (engine, observation, environments) < agents < train < applications.

The contracts live in pyproject.toml (``[tool.importlinter]``); import-linter checks them over
grimp's import graph, which holds every import statement, also those inside functions.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("allfives_env", "agents", "train", "allfives")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def test_import_contracts_hold():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_lazy_upward_import_breaks_the_contracts(tmp_path):
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "allfives_env" / "episode.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _sneaky():\n    from agents import make_agent\n\n    return make_agent\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "allfives_env.episode -> agents" in result.stdout


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_the_graph_sees_imports_inside_functions(graph):
    # ``allfives.cli.tournament`` imports the tournament only inside ``run``: a lazy import that
    # the layer check must see, or an upward one could hide the same way
    assert "agents.tournament" in graph.find_modules_directly_imported_by("allfives.cli.tournament")


def test_nothing_imports_upward(graph):
    layer = {name: i for i, name in enumerate(PACKAGES)}
    upward = [
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if layer[imported.split(".")[0]] > layer[importer.split(".")[0]]
    ]
    assert upward == []


def test_environments_work_beside_a_users_own_agents_and_train_modules(tmp_path):
    # the library imports nothing above it, so a user's own ``agents.py`` or ``train.py`` in the
    # working folder cannot shadow anything it needs
    (tmp_path / "agents.py").write_text("raise ImportError('the user agents.py was imported')\n")
    (tmp_path / "train.py").write_text("raise ImportError('the user train.py was imported')\n")
    code = (
        "import gymnasium, allfives_env\n"
        "e = gymnasium.make('AllFives-v0'); o, i = e.reset(seed=1)\n"
        "e.step(int(e.unwrapped.action_masks().argmax()))\n"
        "p = allfives_env.env(num_players=4); p.reset(seed=1)\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH="")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
