"""A git revision's tree on disk, for benchmarks that measure it beside this checkout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export_revision(ref: str, target: Path) -> Path:
    """The tree of git revision ``ref`` in ``target``, with this checkout's compiled accelerators
    whose C source is the same there."""
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    for name in ("_fastobs", "_fastlook"):
        source, there = ROOT / "allfives_env" / f"{name}.c", target / "allfives_env" / f"{name}.c"
        if there.exists() and there.read_bytes() == source.read_bytes():
            for built in (ROOT / "allfives_env").glob(f"{name}*.so"):
                shutil.copy(built, target / "allfives_env")
    return target
