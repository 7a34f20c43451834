"""The notebooks are stored with their outputs (tables, plots), and those outputs are fresh.

The slow test re-executes each notebook (a copy in memory, a fresh kernel, notebooks/ as its working
directory, 300 s a cell) and compares it with the stored one, code cell by code cell, with
``notebooks/refresh.py``'s ``compare``. The rule:

* an ``error`` output, stored or executed, fails; so does a cell that raises while executing;
* the same number of outputs, each of the same kind: the same ``output_type``, the same stream name
  (stdout/stderr), the same MIME types (``image/png`` stored means ``image/png`` produced);
* text (streams and ``text/plain``) by shape only: the same lines once numbers, temporary folders and
  object addresses are placeholders and spaces collapsed, in any order. So the words, headers, names
  and the number of lines must match, while timings, games/s, ratings, win rates and the trained bot's
  results may change and ranked rows may trade places. Images and SVG are compared by kind only.

``python notebooks/refresh.py`` re-executes and restores them (``--check`` runs this comparison).
"""

import base64
import importlib.util
import io
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IDS = [p.name for p in NOTEBOOKS]
MAX_PNG_BYTES = 40_000

_spec = importlib.util.spec_from_file_location("notebooks_refresh", ROOT / "notebooks" / "refresh.py")
refresh = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refresh)


def test_there_are_three_notebooks():
    assert [p.name for p in NOTEBOOKS] == [
        "01_rules_and_environment.ipynb",
        "02_train_a_bot.ipynb",
        "03_benchmark_strategies.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebooks_are_stored_executed_and_normalized(path):
    """Stored with outputs, in order, without errors, small, and as refresh.py writes them."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "run top to bottom once: notebooks/refresh.py"
    assert all(c.outputs for c in code), "every code cell shows its result: notebooks/refresh.py"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    pngs = [base64.b64decode(o.data["image/png"]) for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert all(len(png) <= MAX_PNG_BYTES for png in pngs), [len(png) for png in pngs]
    assert refresh.normalize(notebook, path.name) == notebook, "not normalized (timings, ids, PNGs): refresh.py"


def test_the_notebooks_show_their_plots():
    def mimes(name):
        notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        return {m for c in notebook.cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})}

    assert "image/svg+xml" in mimes("01_rules_and_environment.ipynb")  # the picture of a position
    assert "image/png" in mimes("02_train_a_bot.ipynb")  # the learning curve
    assert "image/png" in mimes("03_benchmark_strategies.ipynb")  # the heatmap of win rates


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_outputs_are_fresh(path):
    stored = nbformat.read(path, as_version=4)
    fresh = refresh.execute(stored, path.parent, timeout=300)  # raises CellExecutionError if a cell raises
    problems = refresh.compare(stored, fresh)
    assert not problems, "stale outputs; refresh with python notebooks/refresh.py:\n" + "\n".join(problems)


# the comparer itself: what it lets through and what it catches


def _png() -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def _notebook(*outputs_per_cell):
    cells = [new_markdown_cell("# a notebook")]
    for count, outputs in enumerate(outputs_per_cell, start=1):
        cells.append(new_code_cell("...", execution_count=count, outputs=list(outputs)))
    return new_notebook(cells=cells)


def _stdout(text):
    return new_output("stream", name="stdout", text=text)


def _plot(text="<Figure size 800x280 with 2 Axes>"):
    return new_output("display_data", data={"image/png": _png(), "text/plain": text})


def _picture(address="0x7f3a", output_type="execute_result"):
    return new_output(output_type, data={"text/plain": f"<Picture at {address}>"})


TABLE = (
    "final evaluation of /tmp/tmpab12cd_9/run/final.zip (4 games each)\n"
    "opponent   games  wins  win rate\n"
    "random         4     2     0.500\n"
    "greedy         4     0     0.000\n"
    "played in 4.72 s: 25.4 games/s\n"
)
STORED = _notebook([_stdout(TABLE)], [_plot()], [_picture()])


def test_the_comparer_lets_numbers_paths_addresses_and_row_order_change():
    table = (
        "final evaluation of /var/folders/x1/T/tmpzz99yy00/run/final.zip (4 games each)\n"
        "opponent   games  wins  win rate\n"
        "greedy         4     1     0.250\n"
        "random         4     4     1.000\n"
        "played in 12.03 s: 3.3 games/s\n"
    )
    fresh = _notebook([_stdout(table)], [_plot("<Figure size 640x240 with 2 Axes>")], [_picture("0x55d0c1")])
    assert refresh.compare(STORED, fresh) == []
    assert refresh.compare(STORED, STORED) == []


@pytest.mark.parametrize(
    "fresh, complaint",
    [
        # an output missing, one extra
        (_notebook([_stdout(TABLE)], [], [_picture()]), "cell 2: outputs"),
        (_notebook([_stdout(TABLE), _stdout(TABLE)], [_plot()], [_picture()]), "cell 1: outputs"),
        # another kind: stderr for stdout, a display for a result, a plot without its PNG
        (_notebook([new_output("stream", name="stderr", text=TABLE)], [_plot()], [_picture()]), "cell 1: outputs"),
        (_notebook([_stdout(TABLE)], [_plot()], [_picture(output_type="display_data")]), "cell 3: outputs"),
        (_notebook([_stdout(TABLE)], [new_output("display_data", data={"text/plain": "<Figure>"})], [_picture()]),
         "cell 2: outputs"),
        # an error
        (_notebook([_stdout(TABLE)], [_plot()], [new_output("error", ename="ValueError", evalue="boom", traceback=[])]),
         "executed output is an error: ValueError: boom"),
        # the text changed shape: a line more, a word changed
        (_notebook([_stdout(TABLE + "one more line\n")], [_plot()], [_picture()]),
         "cell 1, output 0: 5 lines stored, 6 executed"),
        (_notebook([_stdout(TABLE.replace("greedy", "expert"))], [_plot()], [_picture()]), "cell 1, output 0"),
        # a cell fewer
        (_notebook([_stdout(TABLE)], [_plot()]), "4 cells stored, 3 executed"),
    ],
    ids=["missing", "extra", "stream-name", "result-vs-display", "mime", "error", "more-lines", "changed-word",
         "cells"],
)
def test_the_comparer_catches_what_is_not_fresh(fresh, complaint):
    problems = refresh.compare(STORED, fresh)
    assert problems and any(complaint in p for p in problems), problems


def test_the_comparer_refuses_a_stored_error():
    stored = _notebook([new_output("error", ename="KeyError", evalue="'x'", traceback=[])])
    assert any("stored output is an error" in p for p in refresh.compare(stored, stored))


def test_normalize_keeps_what_it_stores():
    executed = _notebook([_stdout("run in /tmp/tmpab12cd34/x\n"), _plot()])
    executed.cells[1].metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    executed.metadata["language_info"] = {"name": "python", "version": "3.11.9"}
    for cell in executed.cells:
        del cell["id"]
    stored = refresh.normalize(executed, "x.ipynb")
    assert refresh.normalize(stored, "x.ipynb") == stored
    assert "execution" not in stored.cells[1].metadata and stored.metadata["language_info"] == {"name": "python"}
    assert [c.id for c in stored.cells] == [c.id for c in refresh.normalize(executed, "x.ipynb").cells]
    assert stored.cells[1].outputs[0].text == "run in /tmp/tmpXXXXXXXX/x\n"
    assert refresh.compare(stored, executed) == []
