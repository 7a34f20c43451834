"""Re-execute the notebooks and store them with their outputs, normalised for small, stable diffs.

    python notebooks/refresh.py                   # every notebook in notebooks/, rewritten in place
    python notebooks/refresh.py 02_train_a_bot.ipynb
    python notebooks/refresh.py --check           # execute and compare with the stored outputs, write nothing

Each notebook runs in a fresh kernel with the notebooks/ folder as its working directory (the notebooks
read ``../configs`` and ``../models``), ``PYTHONHASHSEED=0`` and matplotlib's inline backend. A notebook
that raises is not written. What ``normalize`` does to the executed notebook before it is stored:

* drops the volatile metadata: the timing of each cell (``metadata.execution``) and the kernel's
  ``language_info`` beyond its name (the Python version);
* gives a cell without an ``id`` a stable one (derived from the notebook's name and the cell's place);
* replaces the two per-run tokens of the text outputs by fixed ones: temporary folders
  (``/tmp/tmpab12cd34`` -> ``/tmp/tmpXXXXXXXX``) and object addresses (``<... at 0x7f..>`` -> ``0x...``);
* re-encodes every PNG output as a palette PNG (128 colours, no metadata chunks): a plot a few times
  smaller than matplotlib's RGBA file, and free of the matplotlib version.

``compare`` is the freshness rule of tests/test_notebooks.py (its docstring says what is compared).
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import io
import os
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))

#: the name ``tempfile.mkdtemp`` gives a folder (``tmp`` and 8 characters), with the folders above it
TMPDIR = re.compile(r"(?:[\w.~-]*/)*tmp[a-z0-9_]{8}(?![a-z0-9_])")
TMPDIR_STORED = "/tmp/tmpXXXXXXXX"
#: an object's default repr, ``<module.Class object at 0x7f3a...>``
ADDRESS = re.compile(r"(?<= at )0x[0-9a-fA-F]+(?=>)")
ADDRESS_STORED = "0x..."
#: a number as the outputs print them: 12, -6.2, +11.8, 1e-05 (a leading minus or plus belongs to it)
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
#: the text outputs ``compare`` reads line by line; the other MIME types are compared by kind only
TEXT_MIME = "text/plain"
PNG_COLOURS = 128


def execute(notebook: nbformat.NotebookNode, cwd: Path, timeout: int = 300) -> nbformat.NotebookNode:
    """Run every cell of a copy of ``notebook`` in a fresh kernel started in ``cwd``; return the copy.
    Raises ``nbclient.exceptions.CellExecutionError`` when a cell raises, ``CellTimeoutError`` when a
    cell runs past ``timeout`` seconds."""
    from nbclient import NotebookClient

    notebook = copy.deepcopy(notebook)
    env = dict(os.environ, PYTHONHASHSEED="0", MPLBACKEND="module://matplotlib_inline.backend_inline")
    client = NotebookClient(
        notebook,
        timeout=timeout,
        startup_timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        record_timing=False,
        # a cell's prints arrive in as many messages as the kernel flushed: one stream output per name
        coalesce_streams=True,
    )
    client.execute(env=env)
    return notebook


def normalize(notebook: nbformat.NotebookNode, name: str = "") -> nbformat.NotebookNode:
    """The notebook as it is stored (a copy; the module's docstring lists the changes). Idempotent."""
    notebook = copy.deepcopy(notebook)
    language = notebook.metadata.get("language_info", {}).get("name", "python")
    notebook.metadata["language_info"] = {"name": language}
    for index, cell in enumerate(notebook.cells):
        if not cell.get("id"):
            cell["id"] = hashlib.sha1(f"{name}:{index}".encode()).hexdigest()[:8]
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            if output.output_type == "stream":
                output["text"] = _stable_text(output["text"])
            elif "data" in output:
                if TEXT_MIME in output.data:
                    output.data[TEXT_MIME] = _stable_text(output.data[TEXT_MIME])
                if "image/png" in output.data:
                    output.data["image/png"] = _small_png(output.data["image/png"])
    return notebook


def _stable_text(text: str) -> str:
    return ADDRESS.sub(ADDRESS_STORED, TMPDIR.sub(TMPDIR_STORED, text))


def _small_png(b64: str) -> str:
    """The PNG as a palette PNG without text chunks; a palette PNG is returned as it is."""
    from PIL import Image

    raw = base64.b64decode(b64)
    image = Image.open(io.BytesIO(raw))
    if image.mode == "P":
        return b64
    small = image.convert("RGB").quantize(PNG_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    small.save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii") + "\n"


def kinds(cell: nbformat.NotebookNode) -> list[tuple]:
    """A code cell's outputs as their kinds: ``("stream", "stdout")``, ``("display_data", ("image/png",
    "text/plain"))``, ``("execute_result", ("text/plain",))``, ``("error", ename)``."""
    out = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            out.append(("stream", output.name))
        elif output.output_type == "error":
            out.append(("error", output.get("ename", "")))
        else:
            out.append((output.output_type, tuple(sorted(output.get("data", {})))))
    return out


def skeleton(text: str) -> list[str]:
    """The lines of a text output with what may change between runs taken out: temporary folders,
    object addresses and every number become placeholders, runs of spaces one space (tables realign
    when a number gets wider). Sorted: rows that trade places (a ranking) are the same shape."""
    text = NUMBER.sub("#", ADDRESS.sub(ADDRESS_STORED, TMPDIR.sub(TMPDIR_STORED, text)))
    return sorted(" ".join(line.split()) for line in text.splitlines())


def _text(output: nbformat.NotebookNode) -> str | None:
    if output.output_type == "stream":
        return output.text
    text = output.get("data", {}).get(TEXT_MIME)
    return text if isinstance(text, str) or text is None else "".join(text)


def compare(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """What differs between a stored notebook and a fresh execution of it, as readable lines (none: fresh).

    Compared, code cell by code cell (the two notebooks must have the same cells):

    * an ``error`` output, stored or fresh, is always a difference: notebooks are stored working;
    * the outputs' kinds, in order: as many outputs, the same ``output_type`` for each, the same stream
      name (stdout/stderr) for a stream, the same set of MIME types for a display_data or
      execute_result (``image/png`` stored means ``image/png`` produced);
    * the text of streams and of ``text/plain``, by shape: the same lines once every number, temporary
      folder and object address is a placeholder and spaces are collapsed, in any order. Words, column
      headers, agent and option names and the number of lines must match; values (timings, games/s,
      win rates, ratings, trained results) may differ, and rows may be reordered (a ranking);
    * images, SVG and other MIME types by kind only (their bytes follow the numbers above).
    """
    problems = []
    if len(stored.cells) != len(fresh.cells):
        return [f"{len(stored.cells)} cells stored, {len(fresh.cells)} executed"]
    for index, (old, new) in enumerate(zip(stored.cells, fresh.cells)):
        where = f"cell {index}"
        if old.cell_type != new.cell_type:
            problems.append(f"{where}: a {old.cell_type} cell stored, a {new.cell_type} cell executed")
            continue
        if old.cell_type != "code":
            continue
        for label, cell in (("stored", old), ("executed", new)):
            for output in cell.outputs:
                if output.output_type == "error":
                    error = f"{output.get('ename')}: {output.get('evalue')}"
                    problems.append(f"{where}: {label} output is an error: {error}")
        old_kinds, new_kinds = kinds(old), kinds(new)
        if old_kinds != new_kinds:
            problems.append(f"{where}: outputs stored {old_kinds}, executed {new_kinds}")
            continue
        for number, (a, b) in enumerate(zip(old.outputs, new.outputs)):
            text_a, text_b = _text(a), _text(b)
            if text_a is None or text_b is None:
                continue
            lines_a, lines_b = skeleton(text_a), skeleton(text_b)
            if lines_a != lines_b:
                gone = [line for line in lines_a if line not in lines_b][:3]
                new_lines = [line for line in lines_b if line not in lines_a][:3]
                problems.append(
                    f"{where}, output {number}: {len(lines_a)} lines stored, {len(lines_b)} executed; "
                    f"stored only {gone}, executed only {new_lines} (numbers shown as #)"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to refresh (default: all of notebooks/)")
    parser.add_argument("--check", action="store_true", help="execute, compare with the stored outputs, write nothing")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell may run (default 300)")
    args = parser.parse_args(argv)
    paths = [p if p.exists() else HERE / p for p in args.notebooks] or NOTEBOOKS
    stale = 0
    for path in paths:
        path = path.resolve()
        stored = nbformat.read(path, as_version=4)
        fresh = normalize(execute(stored, path.parent, args.timeout), path.name)
        if args.check:
            problems = compare(stored, fresh)
            stale += bool(problems)
            print(f"{path.name}: " + ("stale\n  " + "\n  ".join(problems) if problems else "fresh"))
            continue
        nbformat.validate(fresh)
        nbformat.write(fresh, path)
        images = [len(base64.b64decode(o.data["image/png"])) for c in fresh.cells if c.cell_type == "code"
                  for o in c.outputs if "image/png" in o.get("data", {})]
        print(f"{path.name}: written, {path.stat().st_size // 1024} KB" + (f", PNG bytes {images}" if images else ""))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
