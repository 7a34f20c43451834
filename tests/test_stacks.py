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


@pytest.mark.slow
@pytest.mark.usefixtures("one_ray_at_a_time")  # it starts a local Ray: never beside another test's
def test_rllib_ppo_with_action_masking_through_the_one_adapter():
    pytest.importorskip("ray.rllib")
    script = ROOT / "docs" / "examples" / "rllib_ppo.py"
    out = subprocess.run([sys.executable, str(script), "--iterations", "2", "--batch", "400"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["iterations"] == 2 and report["env_steps"] >= 800
    assert report["legal_share"] == 1.0, "the masked module never prefers an illegal move"
    assert "Illegal move made" not in out.stdout + out.stderr, "no seat played an illegal move while sampling"


def test_the_rllib_adapter_renames_the_keys_and_nothing_else():
    import numpy as np

    import allfives_env

    plain, adapted = allfives_env.env(num_players=3), allfives_env.rllib_env(num_players=3)
    space = adapted.observation_space("player_0")
    assert set(space.spaces) == {"observations", "action_mask"} and space["action_mask"].dtype == np.int8
    plain.reset(seed=4)
    adapted.reset(seed=4)
    for _ in range(60):
        agent = plain.agent_selection
        assert adapted.agent_selection == agent
        a, b = plain.last(), adapted.last()
        np.testing.assert_array_equal(a[0]["observation"], b[0]["observations"])
        np.testing.assert_array_equal(a[0]["action_mask"], b[0]["action_mask"])
        assert space.contains(b[0]) and a[1:4] == b[1:4]
        if a[2] or a[3]:
            break
        action = int(np.flatnonzero(a[0]["action_mask"])[-1])
        plain.step(action)
        adapted.step(action)
