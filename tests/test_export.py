"""ONNX export: parity with the torch policy, the onnx agent without torch, and clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from allfives_agents.nets.policy import NumpyPolicy, PolicyFileError
from allfives_env.observation import OBS_SIZE, OBS_SIZES, OBS_VERSION
from allfives_train.export import ExportError, export_onnx
from allfives_train.parity import check_parity, sample_observations, torch_logits

from helpers import run_cli


def make_model(kind: str, path: Path, metadata: dict | None = None) -> Path:
    """An untrained policy with large random weights (so argmax choices are decisive), saved like training does."""
    from sb3_contrib import MaskablePPO

    from allfives_train.network import AllFivesPolicy
    from allfives_env.single_agent import SingleAgentEnv
    from allfives_train.callbacks import save_model

    version = {"scorer_v2": 2, "scorer_v3": 3, "scorer_v4": 4}.get(kind, 1)
    policy = AllFivesPolicy if kind.startswith("scorer") else "MlpPolicy"
    model = MaskablePPO(policy, SingleAgentEnv(obs_version=version), policy_kwargs={"net_arch": {"pi": [32, 32], "vf": [16]}}, seed=0, device="cpu")
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    save_model(model, path, metadata or {"obs_version": version, "obs_size": OBS_SIZES[version], "rules": {"num_players": 2}})
    return path


@pytest.fixture(scope="module", params=["scorer", "mlp", "scorer_v2", "scorer_v3", "scorer_v4"])
def exported(request, tmp_path_factory):
    d = tmp_path_factory.mktemp(request.param)
    model = make_model(request.param, d / "model.zip")
    onnx_path = d / "model.onnx"
    info = export_onnx(model, onnx_path)
    return model, onnx_path, info


def test_onnx_matches_torch_on_ten_thousand_observations(exported):
    model, onnx_path, info = exported
    version = next((v for v in (4, 3, 2) if f"v{v}" in str(model)), 1)
    assert info["obs_version"] == str(version) and info["obs_size"] == str(OBS_SIZES[version])
    result = check_parity(model, onnx_path, count=10_000)
    assert result["observations"] == 10_000
    assert result["max_abs_diff"] < 1e-4
    assert result["same_action"] == 1.0 and result["all_legal"]


def test_numpy_policy_matches_torch(exported):
    from sb3_contrib import MaskablePPO

    model_path, _, _ = exported
    model = MaskablePPO.load(model_path, device="cpu")
    policy = NumpyPolicy.load(model_path)
    obs, _ = sample_observations(500, seed=3, obs_version=policy.obs_version)
    assert obs.shape == (500, OBS_SIZES[policy.obs_version])
    np.testing.assert_allclose(policy.logits(obs), torch_logits(model, obs), atol=1e-4)


def test_onnx_agent_needs_neither_torch_nor_sb3(exported):
    _, onnx_path, _ = exported
    code = f"""
import sys, random
from allfives_env.engine import Game
from allfives_agents import make_agent
agent = make_agent("onnx:{onnx_path}")
game = Game(seed=1, num_players=2, target_score=60)
while not game.over:
    seat = game.current_player
    view = game.view(seat)
    action = agent.act(view) if seat == 0 else view.legal_actions[0]
    assert action in view.legal_actions
    game.step(action)
heavy = [m for m in ("torch", "stable_baselines3", "sb3_contrib") if m in sys.modules]
print("heavy:", heavy)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "heavy: []" in out.stdout


def test_export_errors_name_the_problem(tmp_path):
    with pytest.raises(ExportError, match="model file not found"):
        export_onnx(tmp_path / "missing.zip", tmp_path / "x.onnx")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ExportError, match="not a readable"):
        export_onnx(broken, tmp_path / "x.onnx")
    old = make_model("mlp", tmp_path / "old.zip", {"obs_version": OBS_VERSION + 1, "obs_size": OBS_SIZE})
    with pytest.raises(ExportError, match=f"OBS_VERSION {OBS_VERSION + 1}"):
        export_onnx(old, tmp_path / "x.onnx")
    with pytest.raises(PolicyFileError, match="OBS_VERSION"):
        NumpyPolicy.load(old)


def test_onnx_file_for_another_layout_is_refused(exported, tmp_path):
    import onnx

    from allfives_agents.nets.onnx_agent import OnnxPolicy

    _, onnx_path, _ = exported
    graph = onnx.load(str(onnx_path))
    for prop in graph.metadata_props:
        if prop.key == "obs_version":
            prop.value = "0"
    other = tmp_path / "other.onnx"
    onnx.save(graph, str(other))
    with pytest.raises(PolicyFileError, match="OBS_VERSION 0"):
        OnnxPolicy(other)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01garbage")
    with pytest.raises(PolicyFileError, match="not a readable ONNX policy"):
        OnnxPolicy(junk)


def test_export_cli_and_onnx_in_a_tournament(exported, tmp_path):
    model, _, _ = exported
    out = tmp_path / "cli.onnx"
    result = run_cli("export", model, "--out", out, "--check", "300", "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["max_abs_diff"] < 1e-4 and report["same_action"] == 1.0
    match = run_cli("tournament", "--agents", f"onnx:{out},random", "--games", "4", "--seed", "2", "--target", "50", "--json",
                    timeout=300)
    assert match.returncode == 0, match.stderr
    missing = run_cli("export", tmp_path / "nope.zip")
    assert missing.returncode == 2 and "model file not found" in missing.stderr
