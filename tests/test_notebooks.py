"""Every notebook runs top to bottom (small budgets), from the notebooks/ folder as its working directory."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.get("execution_count") is None, "commit notebooks with outputs stripped"
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_there_are_three_notebooks():
    assert [p.name for p in NOTEBOOKS] == [
        "01_rules_and_environment.ipynb",
        "02_train_a_bot.ipynb",
        "03_benchmark_strategies.ipynb",
    ]
