"""``allfives_train.ship`` refuses a run it cannot ship with a clear error, and leaves the shipped files as they were."""

import json
import subprocess
import sys

import pytest

from allfives_train.export import ExportError
from allfives_train.ship import ShipError, ship


def shipped_files(models):
    return {p.name: p.read_bytes() for p in models.iterdir()}


@pytest.fixture
def models(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for suffix in ("zip", "onnx", "json"):
        (models / f"tiny.{suffix}").write_bytes(f"the shipped {suffix}".encode())
    return models


def finished_run(tmp_path, model_bytes: bytes):
    run = tmp_path / "run"
    run.mkdir()
    (run / "card.json").write_text(json.dumps({"rules": {"num_players": 2}, "obs_version": 2, "steps": 1, "wall_seconds": 1.0}))
    (run / "config.yaml").write_text("name: tiny\n")
    (run / "final.zip").write_bytes(model_bytes)
    return run


def test_a_corrupt_model_is_refused_and_the_shipped_files_stay(tmp_path, models):
    before = shipped_files(models)
    run = finished_run(tmp_path, b"PK\x03\x04 not really a zip")
    with pytest.raises(ExportError, match=r"not a readable policy file: .*run/final.zip"):
        ship(run, "tiny", out_dir=models, games=2)
    assert shipped_files(models) == before  # nothing replaced, no staging folder left


@pytest.mark.parametrize("missing", ["card.json", "config.yaml", "final.zip"])
def test_an_unfinished_run_is_refused_by_name(tmp_path, models, missing):
    before = shipped_files(models)
    run = finished_run(tmp_path, b"")
    (run / missing).unlink()
    with pytest.raises(ShipError, match=f"is not a finished run: it has no {missing}"):
        ship(run, "tiny", out_dir=models, games=2)
    assert shipped_files(models) == before


def test_the_command_line_prints_the_error_without_a_traceback(tmp_path, models):
    run = finished_run(tmp_path, b"")
    (run / "card.json").write_text("{not json")
    out = subprocess.run([sys.executable, "-m", "allfives_train.ship", str(run), "--name", "tiny", "--out-dir", str(models)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert "unreadable card.json or config.yaml" in out.stderr and "Traceback" not in out.stderr
