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


LINKED = [ROOT / "README.md", ROOT / "models" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lowercase, spaces to '-', other punctuation dropped."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")
        out.add(slug)
    return out


def test_relative_links_in_the_docs_point_at_files_and_headings_that_exist():
    dead = []
    for page in LINKED:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for match in LINK.finditer(text):
            target = match.group(1) or match.group(2)
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert dead == []


def test_the_link_checker_sees_a_dead_link(tmp_path):
    page = tmp_path / "a.md"
    page.write_text("# Title\n\n[ok](a.md#title) [gone](b.md) [bad anchor](a.md#nope)\n")
    text = page.read_text()
    targets = [m.group(1) for m in LINK.finditer(text)]
    assert targets == ["a.md#title", "b.md", "a.md#nope"]
    assert anchors(page) == {"title"}


def test_no_two_files_differ_only_in_case():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    seen = {}
    clashes = []
    for name in files:
        key = name.lower()
        if key in seen and seen[key] != name:
            clashes.append((seen[key], name))
        seen[key] = name
    assert clashes == []
