"""A git revision's tree on disk, for benchmarks that measure it beside this checkout."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_revision(ref: str, target: Path) -> Path:
    """The tree of git revision ``ref`` in ``target``, with this checkout's compiled accelerators
    whose C source (the file and the header it shares) is the same there, importable by the names
    the package installs under: ``PYTHONPATH=target`` imports that revision's code, not this checkout's."""
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    # the editable install maps these names to this checkout's folders; a folder on the path comes first
    for name, folder in installed_as(target).items():
        if (target / folder).is_dir() and not (target / name).exists():
            (target / name).symlink_to(folder, target_is_directory=True)
    differ = False
    for name in ("_fastobs", "_fastlook"):
        sources = (f"{name}.c", "_fastargs.h")
        if all(_same(ROOT / "allfives_env" / s, target / "allfives_env" / s) for s in sources):
            for built in (ROOT / "allfives_env").glob(f"{name}*.so"):
                shutil.copy(built, target / "allfives_env")
        else:
            differ = True
    if differ and (target / "setup.py").exists():  # its own accelerators, not this checkout's
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=target, check=True,
                       capture_output=True)
    return target


def installed_as(tree: Path) -> dict:
    """``{installed name: folder}`` of the tree's setup.py (its ``RENAMED``), empty where it has none."""
    setup = tree / "setup.py"
    if setup.exists():
        for node in ast.walk(ast.parse(setup.read_text())):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "RENAMED" for t in node.targets):
                return ast.literal_eval(node.value)
    return {}


def _same(here: Path, there: Path) -> bool:
    return there.exists() and there.read_bytes() == here.read_bytes()
