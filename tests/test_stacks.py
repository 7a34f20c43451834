"""Third-party RL stacks, used the way their own documentation shows (tiny budgets)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_tianshou_trains_a_masked_dqn_seat_on_the_pettingzoo_env():
    pytest.importorskip("tianshou")
    script = ROOT / "docs" / "examples" / "tianshou_dqn.py"
    out = subprocess.run([sys.executable, str(script), "--epochs", "1", "--epoch-steps", "300", "--test-episodes", "8"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["env_steps"] >= 300 and report["gradient_steps"] >= 1
    assert 0.0 <= report["win_rate_before"] <= 1.0 and 0.0 <= report["win_rate_after"] <= 1.0
    assert report["stored_transitions"] >= 300
    assert report["illegal_actions_stored"] == 0, "both seats only play legal moves (the masks reach Tianshou)"
