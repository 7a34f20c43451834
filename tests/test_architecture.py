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
PACKAGES = ("allfives_env", "allfives_agents", "allfives_train", "allfives")
#: the repository's folder of each package (setup.py's package_dir)
FOLDERS = {"allfives_env": "allfives_env", "allfives_agents": "agents", "allfives_train": "train", "allfives": "allfives"}


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
        shutil.copytree(ROOT / FOLDERS[name], tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "allfives_env" / "episode.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _sneaky():\n    from allfives_agents import make_agent\n\n    return make_agent\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "allfives_env.episode -> allfives_agents" in result.stdout


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_the_graph_sees_imports_inside_functions(graph):
    # ``allfives.cli.tournament`` imports the tournament only inside ``run``: a lazy import that
    # the layer check must see, or an upward one could hide the same way
    assert "allfives_agents.tournament" in graph.find_modules_directly_imported_by("allfives.cli.tournament")


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
    # every installed name starts with allfives, so a user's own ``agents.py`` or ``train.py`` in the
    # working folder shadows nothing the library, the agents or the trainer need
    (tmp_path / "agents.py").write_text("raise ImportError('the user agents.py was imported')\n")
    (tmp_path / "train.py").write_text("raise ImportError('the user train.py was imported')\n")
    code = (
        "import gymnasium, allfives_env\n"
        "e = gymnasium.make('AllFives-v0'); o, i = e.reset(seed=1)\n"
        "e.step(int(e.unwrapped.action_masks().argmax()))\n"
        "p = allfives_env.env(num_players=4); p.reset(seed=1)\n"
        "from allfives_agents import make_agent; from allfives_train.config import load_config\n"
        "make_agent('greedy').reset(seed=1)\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH="")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def import_cycles(graph, modules) -> list[list[str]]:
    """The strongly connected groups of two or more ``modules`` in ``graph`` (Tarjan): each an import circle."""
    modules = set(modules)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(start):
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & modules)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child) & modules))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        group.append(top)
                        if top == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circles_anywhere_in_the_package_tree(graph):
    assert import_cycles(graph, graph.modules) == []


def test_the_cycle_finder_finds_a_circle():
    sketch = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        sketch.add_import(importer=a, imported=b)
    assert import_cycles(sketch, sketch.modules) == [["p.a", "p.b", "p.c"]]


def test_the_engine_contract_covers_modules_it_does_not_name(tmp_path):
    # the contract forbids allfives_env.* by wildcard: a module added to the library tomorrow is covered
    for name in PACKAGES:
        shutil.copytree(ROOT / FOLDERS[name], tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "allfives_env" / "brand_new.py").write_text('"""A module no contract names."""\n')
    with open(tmp_path / "allfives_env" / "engine" / "seeding.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _sneaky():\n    from allfives_env import brand_new\n\n    return brand_new\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "allfives_env.engine.seeding -> allfives_env.brand_new" in result.stdout
