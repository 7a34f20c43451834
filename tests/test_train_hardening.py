"""Training hardening: resume files that cannot run code, configs checked before any work, resume
keeps the run's saved config, atomic writes. Runs are fabricated (a fake model) where no training is
needed; the one real model is built without learning."""

from __future__ import annotations

import base64
import io
import json
import pickle
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from allfives.cli.main import main as cli_main
from allfives_train.checkpoint import CheckpointError, atomic_write, latest_checkpoint, load_state, save_checkpoint, set_rng_state
from allfives_train.config import ConfigError, load_config, to_yaml

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny_test.yaml"


class Evil:
    """Unpickling this creates ``path``: the test's witness that a pickle was loaded."""

    def __init__(self, path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


class FakeModel:
    """What ``save_checkpoint`` needs of a model: a step count and ``save(buffer)``."""

    def __init__(self, steps: int) -> None:
        self.num_timesteps = steps

    def save(self, buffer) -> None:
        buffer.write(b"not a model")


def fake_run(tmp_path, config=None, steps: int = 256) -> Path:
    """A run directory with a saved config, a pool snapshot and one checkpoint (fake model)."""
    run = tmp_path / "run"
    (run / "pool").mkdir(parents=True)
    (run / "config.yaml").write_text(to_yaml(config or load_config(TINY)), encoding="utf-8")
    snap = run / "pool" / f"snap_{steps:010d}.npz"
    snap.write_bytes(b"")
    extra = {"pool": {"snapshots": [str(snap)]}, "tracker": {"best": 0.5, "best_steps": steps, "evals": 1, "wall_seconds": 3.0}}
    save_checkpoint(run, FakeModel(steps), extra)
    return run


def latest(run: Path) -> dict:
    return json.loads((run / "checkpoints" / "latest.json").read_text())


def cli(capsys, *args) -> tuple[int, str]:
    """``allfives ARGS`` in this process: exit status and stderr (a traceback fails the test)."""
    code = cli_main([str(a) for a in args])
    return code, capsys.readouterr().err


# 1. resume files cannot run code -----------------------------------------------------------------


def test_checkpoint_state_is_json_and_npz_and_restores_the_random_generators(tmp_path):
    import torch

    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    run = fake_run(tmp_path)
    expected = (random.random(), np.random.random(), torch.rand(1).item())
    info = latest(run)
    assert info["state"].endswith(".state.json") and info["rng"].endswith(".rng.npz")
    assert not list(run.rglob("*.pkl")), "no pickles written"
    state_file = json.loads((run / "checkpoints" / info["state"]).read_text())
    assert state_file["pool"]["snapshots"] == ["pool/snap_0000000256.npz"], "snapshots saved relative to the run"
    with np.load(run / "checkpoints" / info["rng"], allow_pickle=False) as npz:
        assert npz["torch"].dtype == np.uint8

    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    state = load_state(latest_checkpoint(run), run)
    set_rng_state(state["rng"])
    assert (random.random(), np.random.random(), torch.rand(1).item()) == expected
    assert state["steps"] == 256 and state["tracker"]["best"] == 0.5
    assert state["pool"]["snapshots"] == [str(run / "pool" / "snap_0000000256.npz")]


def test_a_legacy_pickle_state_is_refused_without_unpickling_it(tmp_path, capsys):
    run = fake_run(tmp_path)
    marker = tmp_path / "pwned"
    directory = run / "checkpoints"
    (directory / "step_0000000256.state.pkl").write_bytes(pickle.dumps(Evil(marker)))
    (directory / "latest.json").write_text(json.dumps({"steps": 256, "model": "step_0000000256.zip", "state": "step_0000000256.state.pkl"}))
    with pytest.raises(CheckpointError, match=r"step_0000000256\.state\.pkl.*pickle"):
        load_state(latest_checkpoint(run), run)
    code, err = cli(capsys, "train", "--run-dir", run, "--resume", "--no-progress")
    assert code == 2 and "pickle" in err and "Traceback" not in err
    assert not marker.exists(), "the pickle was loaded"


@pytest.mark.parametrize("key", ["model", "state", "rng"])
@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_latest_json_pointing_outside_the_checkpoints_is_refused(tmp_path, key, where):
    run = fake_run(tmp_path)
    info = latest(run)
    outside = tmp_path / "other" / info[key]
    outside.parent.mkdir()
    outside.write_bytes((run / "checkpoints" / info[key]).read_bytes())
    info[key] = f"../../other/{info[key]}" if where == "relative" else str(outside)
    (run / "checkpoints" / "latest.json").write_text(json.dumps(info))
    with pytest.raises(CheckpointError, match=r"latest\.json.*outside"):
        latest_checkpoint(run)


@pytest.mark.parametrize("snapshot", ["../elsewhere/snap.npz", "/tmp/snap.npz", "pool/snap_0000000256.zip", 7])
def test_pool_snapshots_outside_the_run_or_not_npz_are_refused(tmp_path, snapshot):
    run = fake_run(tmp_path)
    if snapshot == "../elsewhere/snap.npz":
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / "snap.npz").write_bytes(b"")
    path = run / "checkpoints" / latest(run)["state"]
    state = json.loads(path.read_text())
    state["pool"]["snapshots"] = [snapshot]
    path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match=r"state\.json.*pool snapshot"):
        load_state(latest_checkpoint(run), run)


def _npz_with_pickled_object(marker) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, torch=np.array([Evil(marker)], dtype=object))
    return buffer.getvalue()


@pytest.mark.parametrize(
    "which, damage",
    [
        ("state", b"{not json"),
        ("state", b"[1, 2]"),
        ("state", json.dumps({"steps": "many"}).encode()),
        ("state", json.dumps({"steps": 256, "pool": {"snapshots": []}, "tracker": {"best": "x"}}).encode()),
        ("rng", b"PK\x03\x04 truncated"),
        ("rng", "pickled object"),
        ("rng", "wrong arrays"),
    ],
)
def test_a_corrupt_state_or_rng_file_is_a_clear_error_naming_it(tmp_path, which, damage):
    run = fake_run(tmp_path)
    marker = tmp_path / "pwned"
    path = run / "checkpoints" / latest(run)[which]
    if damage == "pickled object":
        damage = _npz_with_pickled_object(marker)
    elif damage == "wrong arrays":
        buffer = io.BytesIO()
        np.savez(buffer, torch=np.zeros(3, dtype=np.uint8), numpy_keys=np.zeros(2))
        damage = buffer.getvalue()
    path.write_bytes(damage)
    with pytest.raises(CheckpointError, match=path.name.replace(".", r"\.")):
        load_state(latest_checkpoint(run), run)
    assert not marker.exists()


def _tiny_model(tmp_path):
    """A real MaskablePPO of the tiny config (one dummy environment, no learning) and its env."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from allfives_train.envs import make_env_fn
    from allfives_train.train import new_model

    cfg = load_config(TINY, ["n_envs=1", "vec_env=dummy"])
    env = VecMonitor(DummyVecEnv([make_env_fn(cfg, 0, ["random"], [1.0])]))
    return cfg, env, new_model(cfg, env, tmp_path / "tb")


def _rewrite_data(path: Path, change) -> None:
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["data"])
    change(data)
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for name, payload in members.items():
            zf.writestr(name, payload)


def test_pickled_objects_in_a_model_checkpoint_are_never_unpickled(tmp_path):
    from allfives_train.checkpoint import load_model
    from allfives_train.train import policy_spec

    cfg, env, model = _tiny_model(tmp_path)
    path = tmp_path / "model.zip"
    model.save(path)
    marker = tmp_path / "pwned"
    evil = {":serialized:": base64.b64encode(pickle.dumps(Evil(marker))).decode()}
    policy_class, policy_kwargs = policy_spec(cfg)

    # a pickled member the trainer knows is replaced by the trainer's own object, never read
    _rewrite_data(path, lambda data: data.update(policy_class=evil, lr_schedule=evil, ep_info_buffer=evil))
    loaded = load_model(path, env, "cpu", policy_class, policy_kwargs, cfg.ppo)
    assert type(loaded.policy) is policy_class and not marker.exists()
    for key, value in model.policy.state_dict().items():
        assert (loaded.policy.state_dict()[key] == value).all(), key

    # one it does not know is refused
    _rewrite_data(path, lambda data: data.update(surprise=evil))
    with pytest.raises(CheckpointError, match=r"model\.zip.*surprise"):
        load_model(path, env, "cpu", policy_class, policy_kwargs, cfg.ppo)
    assert not marker.exists()
    env.close()


# 4. atomic writes ----------------------------------------------------------------------------------


def test_an_interrupted_atomic_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from allfives_train import checkpoint

    target = tmp_path / "latest.json"
    target.write_text("old")

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint.os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["latest.json"]


def test_checkpoints_keep_the_newest_three_and_clear_leftover_temporaries(tmp_path):
    run = fake_run(tmp_path)
    directory = run / "checkpoints"
    (directory / "step_0000000300.zip.tmp").write_bytes(b"half a model from a killed run")
    for steps in (512, 768, 1024, 1280):
        save_checkpoint(run, FakeModel(steps), {"pool": {"snapshots": []}, "tracker": {}})
    names = sorted(p.name for p in directory.iterdir())
    stems = [f"step_{s:010d}" for s in (768, 1024, 1280)]
    assert names == ["latest.json"] + sorted(f"{s}{suffix}" for s in stems for suffix in (".rng.npz", ".state.json", ".zip"))
    assert latest(run)["steps"] == 1280


# 2. configs checked before any work ------------------------------------------------------------------


def write(tmp_path, text, name="c.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return path


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["ppo.learning_rate=-0.001"], "ppo.learning_rate: must be a finite number > 0, got -0.001"),
        (["ppo.learning_rate=.nan"], "ppo.learning_rate: must be a finite number > 0, got nan"),
        (["ppo.learning_rate=fast"], "ppo.learning_rate: must be a finite number > 0, got 'fast'"),
        (["ppo.learning_rate=0"], "ppo.learning_rate: must be a finite number > 0, got 0"),
        (["ppo.n_steps=1.5"], "ppo.n_steps: must be an integer >= 1, got 1.5"),
        (["ppo.n_steps=0"], "ppo.n_steps: must be an integer >= 1, got 0"),
        (["ppo.n_steps=true"], "ppo.n_steps: must be an integer >= 1, got True"),
        (["ppo.batch_size=-64"], "ppo.batch_size: must be an integer >= 1, got -64"),
        (["ppo.batch_size=1"], "ppo.batch_size: must be at least 2 when ppo.normalize_advantage is true"),
        (["ppo.n_epochs=0"], "ppo.n_epochs: must be an integer >= 1, got 0"),
        (["ppo.ent_coef=.nan"], "ppo.ent_coef: must be a finite number >= 0, got nan"),
        (["ppo.vf_coef=-1"], "ppo.vf_coef: must be a finite number >= 0, got -1"),
        (["ppo.gamma=1.5"], "ppo.gamma: must be in (0, 1], got 1.5"),
        (["ppo.gamma=0"], "ppo.gamma: must be in (0, 1], got 0"),
        (["ppo.gae_lambda=-0.5"], "ppo.gae_lambda: must be in (0, 1], got -0.5"),
        (["ppo.clip_range=-0.2"], "ppo.clip_range: must be a finite number > 0, got -0.2"),
        (["ppo.clip_range_vf=0"], "ppo.clip_range_vf: must be a finite number > 0 or null, got 0"),
        (["ppo.max_grad_norm=0"], "ppo.max_grad_norm: must be a finite number > 0, got 0"),
        (["ppo.max_grad_norm=.inf"], "ppo.max_grad_norm: must be a finite number > 0, got inf"),
        (["ppo.target_kl=-1"], "ppo.target_kl: must be a finite number > 0 or null, got -1"),
        (["ppo.stats_window_size=0"], "ppo.stats_window_size: must be an integer >= 1, got 0"),
        (["ppo.normalize_advantage=maybe"], "ppo.normalize_advantage: must be true or false, got 'maybe'"),
        (["ppo.rollout_buffer_class=Evil"], "ppo.rollout_buffer_class cannot be set from a config"),
        (["n_envs=1", "ppo.n_steps=1"], "ppo.n_steps * n_envs must be at least 2"),
        (["seed=-1"], "seed: must be an integer in [0, 2**32), got -1"),
        (["seed=4294967296"], "seed: must be an integer in [0, 2**32), got 4294967296"),
        (["device=tpu"], "device: must be cpu, cuda, cuda:N, mps or auto, got 'tpu'"),
        (["game.reward_scale=.inf"], "game.reward_scale must be a finite number > 0"),
        (["pool.self_play=.inf"], "pool.self_play must be a finite number >= 0"),
        (["eval.opponents=[random, 'ismcts:iters=-5']", "eval.best_against=random"], "eval.opponents: agent 'ismcts:iters=-5': "),
        (["eval.opponents=[random, 'ppo:no/such/file.npz']", "eval.best_against=random"], "eval.opponents: agent 'ppo:no/such/file.npz': file not found"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_key(overrides, message):
    with pytest.raises(ConfigError) as info:
        load_config(TINY, overrides)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_good_ppo_values_are_kept_with_their_types():
    config = load_config(TINY, ["ppo.learning_rate=3e-4", "ppo.n_steps=256.0", "ppo.gamma=1", "ppo.target_kl=null", "ppo.clip_range_vf=0.3"])
    assert config.ppo["learning_rate"] == 3e-4 and config.ppo["n_steps"] == 256 and type(config.ppo["n_steps"]) is int
    assert config.ppo["gamma"] == 1.0 and config.ppo["target_kl"] is None and config.ppo["clip_range_vf"] == 0.3
    assert load_config(TINY, ["device=cuda:1"]).device == "cuda:1"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_an_empty_config_file_is_an_error(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=f"config {path} is empty"):
        load_config(path)


def test_a_directory_or_a_binary_file_as_config_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match=f"config {tmp_path} is a directory"):
        load_config(tmp_path)
    binary = write(tmp_path, bytes(range(256)) * 4, "model.zip")
    with pytest.raises(ConfigError, match=f"config {binary} is not a text file"):
        load_config(binary)


@pytest.mark.parametrize(
    "args, message",
    [
        (["ppo.learning_rate=-1"], "ppo.learning_rate"),
        (["device=tpu"], "device"),
        (["--seed", "-1"], "seed"),
        (["eval.opponents=[random, 'ismcts:iters=-5']", "eval.best_against=random"], "ismcts"),
        (["--config-is", "directory"], "is a directory"),
        (["--config-is", "binary"], "is not a text file"),
    ],
)
def test_the_cli_refuses_a_bad_config_before_the_run_directory_exists(tmp_path, capsys, args, message):
    config = TINY
    if args[0] == "--config-is":
        config = tmp_path if args[1] == "directory" else write(tmp_path, b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x00", "c.png")
        args = []
    run = tmp_path / "run"
    code, err = cli(capsys, "train", "--config", config, "--run-dir", run, "--no-progress", "n_envs=1", "vec_env=dummy", *args)
    assert code == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not run.exists(), "the run directory was created"


# 3. a resumed run keeps its saved config ---------------------------------------------------------------


def test_resume_refuses_a_config_for_another_game(tmp_path, capsys):
    run = fake_run(tmp_path)
    saved = (run / "config.yaml").read_text()
    four = write(tmp_path, TINY.read_text().replace("num_players: 2", "num_players: 4"), "four.yaml")
    code, err = cli(capsys, "train", "--run-dir", run, "--resume", "--config", four, "--no-progress")
    assert code == 2 and "game.num_players" in err and "Traceback" not in err
    assert (run / "config.yaml").read_text() == saved


@pytest.mark.parametrize(
    "args, key",
    [
        (["game.num_players=4"], "game.num_players"),
        (["game.target_score=100"], "game.target_score"),
        (["net.pi=[64]"], "net.pi"),
        (["ppo.learning_rate=1e-4"], "ppo.learning_rate"),
        (["--seed", "5"], "seed"),
    ],
)
def test_resume_refuses_overrides_of_the_game_network_ppo_or_seed(tmp_path, capsys, args, key):
    run = fake_run(tmp_path)
    saved = (run / "config.yaml").read_text()
    code, err = cli(capsys, "train", "--run-dir", run, "--resume", "--no-progress", *args)
    assert code == 2 and key in err and "cannot change on resume" in err and "Traceback" not in err
    assert (run / "config.yaml").read_text() == saved


def test_resume_without_the_saved_config_is_an_error(tmp_path, capsys):
    run = fake_run(tmp_path)
    (run / "config.yaml").unlink()
    code, err = cli(capsys, "train", "--run-dir", run, "--resume", "--no-progress")
    assert code == 2 and "config.yaml" in err and "missing" in err
    assert not (run / "config.yaml").exists()


def test_resume_takes_the_saved_config_with_plain_overrides(tmp_path):
    from allfives_train.train import resume_config

    run = fake_run(tmp_path, load_config(TINY, ["seed=7"]))
    config = resume_config(run, None, ["total_steps=1024", "eval.games=6", "checkpoint_every=128", "pool.self_play=0.3", "n_envs=1", "device=cpu"])
    assert (config.seed, config.total_steps, config.eval.games, config.checkpoint_every, config.pool.self_play, config.n_envs) == (7, 1024, 6, 128, 0.3, 1)
    assert resume_config(run, TINY, ["seed=7"]).seed == 7, "the same config file is accepted"


def test_train_refuses_a_resume_with_another_config_before_writing(tmp_path):
    from allfives_train.train import train

    run = fake_run(tmp_path)
    saved = (run / "config.yaml").read_text()
    with pytest.raises(ConfigError, match="game.num_players"):
        train(load_config(TINY, ["game.num_players=4"]), run, resume=True, progress_bar=False)
    assert (run / "config.yaml").read_text() == saved


@pytest.mark.slow
def test_sigterm_stops_training_as_ctrl_c_does_with_a_checkpoint_to_resume_from(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from helpers import run_cli

    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "allfives.cli.main", "train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress",
               "total_steps=10000000", "vec_env=dummy", "checkpoint_every=100000000", "eval.every=100000000"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (run_dir / "tb").exists() and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended early"
            time.sleep(0.05)
        time.sleep(3)  # into PPO, past any checkpoint the run writes by itself
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "checkpoint saved; continue with --resume" in out
    steps = latest_checkpoint(run_dir).steps
    assert steps > 0
    resumed = run_cli("train", "--run-dir", run_dir, "--resume", "total_steps=" + str(steps + 256), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {run_dir} from step {steps}" in resumed.stdout
