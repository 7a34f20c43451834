"""The examples in the documentation run: python blocks of README.md and docs/*.md, `# run` blocks of docs/cli.md."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(), flags=re.S)


PYTHON = [(p, i, code) for p in DOCS for i, code in enumerate(blocks(p, "python")) if "# not run" not in code]


@pytest.mark.parametrize("path, index, code", PYTHON, ids=[f"{p.name}-{i}" for p, i, _ in PYTHON])
def test_python_examples_run(path, index, code, tmp_path):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, f"{path.name} python block {index + 1} failed:\n{result.stderr[-3000:]}"


@pytest.mark.slow
def test_cli_examples_run(tmp_path):
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    (tmp_path / "models").symlink_to(ROOT / "models")
    commands = []
    for block in blocks(ROOT / "docs" / "cli.md", "bash"):
        lines = block.strip().splitlines()
        if lines and lines[0].strip() == "# run":
            commands += [line for line in lines[1:] if line.startswith("allfives ")]
    assert len(commands) >= 8
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for command in commands:
        args = shlex.split(command)[1:]
        result = run_cli(*args, cwd=tmp_path, env=env, timeout=900)
        assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"
