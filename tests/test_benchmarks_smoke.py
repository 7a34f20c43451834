"""Tiny-budget runs of the benchmark scripts (their figures are recorded in the issue notes, not asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "script, keys",
    [
        ("engine_speed.py", {"allfives_moves_per_s", "openspiel_block_dominoes_moves_per_s", "ratio_median"}),
        ("env_speed.py", {"decisions_per_s", "ratio_connect_four", "ratio_team_dominoes"}),
    ],
)
def test_benchmark_runs_and_reports_json(script, keys):
    report = run_benchmark(script)
    assert keys <= set(report)


def run_benchmark(script, *flags):
    pytest.importorskip("pyspiel")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--seconds", "0.3", "--rounds", "1", "--json", *flags],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_env_speed_can_measure_the_pure_python_encoder():
    assert run_benchmark("env_speed.py", "--pure", "--raw")["accelerated"] is False
