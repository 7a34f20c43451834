"""Fused networks (train/fuse.py): one wider network that computes each member exactly and plays
the mean of their logits and values, exports to ONNX with parity, and refuses members that differ."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from allfives_train.config import load_config, to_yaml
from test_train import TINY


def member(tmp_path, name: str, seed: int, **net):
    """A run folder holding an untrained policy of the tiny config with large random weights."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from allfives_train.callbacks import save_model
    from allfives_train.envs import make_env_fn
    from allfives_train.train import new_model

    cfg = load_config(TINY, [f"net.{k}={v}" for k, v in net.items()])
    env = DummyVecEnv([make_env_fn(cfg, 0, ["random"], [1.0])])
    model = new_model(cfg, env, tmp_path / "tb")
    env.close()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    folder = tmp_path / name
    folder.mkdir()
    meta = {"obs_version": cfg.net.obs_version, "obs_size": 0, "rules": cfg.game.rules().to_dict(), "steps": 100 * seed, "wall_seconds": 1.0}
    save_model(model, folder / "final.zip", meta)
    (folder / "config.yaml").write_text(to_yaml(cfg))
    (folder / "card.json").write_text(json.dumps({"steps": 100 * seed, "wall_seconds": 1.0}))
    return folder, cfg, model


def test_the_fused_network_is_its_members_mean_and_exports_with_parity(tmp_path):
    from allfives_agents.nets.policy import NumpyPolicy
    from allfives_train.export import export_onnx
    from allfives_train.fuse import fuse_run
    from allfives_train.parity import check_parity

    runs = [member(tmp_path, f"m{i}", i + 1) for i in range(3)]
    card = fuse_run([r[0] for r in runs], runs[0][1], tmp_path / "fused", evaluate=False)
    assert card["config"]["net"]["pi"] == [3 * w for w in runs[0][1].net.pi] and [m["steps"] for m in card["fused_from"]] == [100, 200, 300]
    fused = NumpyPolicy.load(tmp_path / "fused" / "final.zip")
    members = [NumpyPolicy.load(r[0] / "final.zip") for r in runs]
    obs = (np.random.default_rng(0).random((64, fused.obs_size)) < 0.25).astype(np.float32)
    np.testing.assert_allclose(fused.logits(obs), np.mean([m.logits(obs) for m in members], 0), atol=1e-4)

    from sb3_contrib import MaskablePPO

    wide = MaskablePPO.load(tmp_path / "fused" / "final.zip", device="cpu")
    with torch.no_grad():
        values = [m[2].policy.predict_values(torch.as_tensor(obs)).numpy() for m in runs]
        np.testing.assert_allclose(wide.policy.predict_values(torch.as_tensor(obs)).numpy(), np.mean(values, 0), atol=1e-4)

    export_onnx(tmp_path / "fused" / "final.zip", tmp_path / "fused.onnx")
    parity = check_parity(tmp_path / "fused" / "final.zip", tmp_path / "fused.onnx", count=500)
    assert parity["same_action"] == 1.0 and parity["max_abs_diff"] < 1e-3


def test_networks_of_other_layouts_or_too_few_are_refused(tmp_path):
    from allfives_train.fuse import fuse_run, fuse_states

    a, cfg, _ = member(tmp_path, "a", 1)
    b, _, _ = member(tmp_path, "b", 2, scorer_width=32)
    with pytest.raises(ValueError, match="network 2 has another layout than the first"):
        fuse_run([a, b], cfg, tmp_path / "out", evaluate=False)
    with pytest.raises(ValueError, match="at least 2 networks"):
        fuse_states([{}])
    (tmp_path / "c").mkdir()
    with pytest.raises(ValueError, match="is not a finished run"):
        fuse_run([a, tmp_path / "c"], cfg, tmp_path / "out2", evaluate=False)


def test_the_fuse_command_writes_a_run_and_names_a_bad_member(tmp_path):
    a, _, _ = member(tmp_path, "a", 1)
    b, _, _ = member(tmp_path, "b", 2)
    def fuse(*args):
        return subprocess.run([sys.executable, "-m", "allfives_train.fuse", *map(str, args)], capture_output=True, text=True, timeout=300)

    done = fuse(a, b, "--out", tmp_path / "ab")
    assert done.returncode == 0, done.stderr
    assert "fused 2 networks" in done.stdout and {"final.zip", "best.zip", "config.yaml", "card.json", "eval.txt"} <= {p.name for p in (tmp_path / "ab").iterdir()}
    bad = fuse(a, tmp_path / "missing", "--out", tmp_path / "x", "--no-eval")
    assert bad.returncode == 2 and "is not a finished run" in bad.stderr and "Traceback" not in bad.stderr
    again = fuse(a, b, "--out", tmp_path / "ab")
    assert again.returncode == 2 and "is not empty" in again.stderr
