"""The warm start of train/imitate.py: its data, determinism, learning, and a run that uses it."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from allfives_env.observation import OBS_SIZES
from allfives_train.config import load_config
from allfives_train.imitate import Batch, fit, gather, play_games

from helpers import run_cli
from test_train import TINY


def tiny_config(**overrides):
    items = [f"{k}={v}" for k, v in overrides.items()]
    return load_config(TINY, ["net.obs_version=2", "imitate.teacher=expert", *items])


def test_positions_are_the_learners_labelled_by_the_teacher_with_its_returns():
    cfg = tiny_config(**{"ppo.gamma": 1.0, "imitate.explore": 0.0, "game.reward_scale": 1.0})
    data = play_games(cfg, "expert", None, games=6, seed=3)
    assert data.obs.shape == (len(data), OBS_SIZES[2]) and data.mask.shape == (len(data), 112)
    assert data.mask[np.arange(len(data)), data.action].all(), "every label is a legal move"
    again = play_games(cfg, "expert", None, games=6, seed=3)
    for k in ("obs", "mask", "action", "ret"):
        np.testing.assert_array_equal(getattr(data, k), getattr(again, k))
    # gamma 1, reward_scale 1: a return is the zero-summed score change (two sides: mine minus the
    # other's) from that decision to the end of the game, a sum of 5-point changes
    assert all(float(r) % 5 == 0 for r in data.ret) and np.abs(data.ret).max() >= 60


def test_gather_is_the_same_for_any_number_of_workers():
    cfg = tiny_config()
    one = gather(cfg, None, games=60, seed=1, workers=1)
    two = gather(cfg, None, games=60, seed=1, workers=2)
    assert len(one) > 100
    for k in ("obs", "mask", "action", "ret"):
        np.testing.assert_array_equal(getattr(one, k), getattr(two, k))


def test_behaviour_cloning_learns_the_teachers_moves():
    from sb3_contrib import MaskablePPO

    from allfives_env.single_agent import SingleAgentEnv
    from allfives_train.train import policy_spec

    cfg = tiny_config(**{"imitate.epochs": 6, "imitate.learning_rate": 3e-3, "imitate.batch_size": 128})
    policy_class, kwargs = policy_spec(cfg)
    torch.manual_seed(0)
    model = MaskablePPO(policy_class, SingleAgentEnv(obs_version=2), policy_kwargs=kwargs, seed=0, device="cpu")
    data = gather(cfg, None, games=120, seed=2, workers=1)
    untrained = fit_report(model, data, cfg, epochs=0)
    trained = fit(model, data, cfg, log=lambda *_: None)
    assert trained["positions"] == len(data)
    assert trained["agreement"] > untrained + 0.15 and trained["agreement"] > 0.7, (untrained, trained)


def fit_report(model, data: Batch, cfg, epochs: int) -> float:
    cfg.imitate.epochs, saved = epochs, cfg.imitate.epochs
    try:
        return fit(model, data, cfg, log=lambda *_: None)["agreement"] if epochs else _agreement(model, data, cfg)
    finally:
        cfg.imitate.epochs = saved


def _agreement(model, data, cfg) -> float:
    order = np.random.default_rng(cfg.seed).permutation(len(data))
    held = torch.as_tensor(order[: max(1, len(data) // 20)])
    obs, mask, action = (torch.as_tensor(getattr(data, k))[held] for k in ("obs", "mask", "action"))
    with torch.no_grad():
        choice = model.policy.get_distribution(obs, mask).mode()
    several = mask.sum(-1) > 1
    return float((choice == action)[several].float().mean())


@pytest.mark.slow
def test_a_run_with_a_warm_start_checkpoints_it_and_resumes(tmp_path):
    run_dir = tmp_path / "run"
    args = ["net.obs_version=2", "imitate.teacher=expert", "imitate.games=12", "imitate.rounds=2", "imitate.epochs=1"]
    result = run_cli("train", "--config", TINY, "--run-dir", run_dir, "--no-progress", *args)
    assert result.returncode == 0, result.stderr
    assert "imitation round 2/2" in result.stdout and "played by the student" in result.stdout
    reports = json.loads((run_dir / "imitation.json").read_text())
    assert [r["round"] for r in reports] == [1, 2] and reports[1]["positions"] > reports[0]["positions"]
    card = json.loads((run_dir / "card.json").read_text())
    assert card["imitation"] == reports and card["obs_version"] == 2
    assert (run_dir / "checkpoints" / "step_0000000000.zip").exists(), "the warm-started model is checkpointed before PPO"
    resumed = run_cli("train", "--run-dir", run_dir, "--resume", "total_steps=1024", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "imitation round" not in resumed.stdout, "a resume does not imitate again"
    changed = run_cli("train", "--run-dir", run_dir, "--resume", "imitate.games=99")
    assert changed.returncode == 2 and "imitate.games" in changed.stderr


def test_a_damaged_imitation_report_costs_the_card_nothing_but_itself(tmp_path, capsys):
    from allfives_train.train import IMITATION_NAME, imitation_reports

    assert imitation_reports(tmp_path) is None
    (tmp_path / IMITATION_NAME).write_text('[{"round": 1, "agreement": 0.9')
    assert imitation_reports(tmp_path) is None
    assert f"{tmp_path / IMITATION_NAME} is not readable JSON" in capsys.readouterr().out
    (tmp_path / IMITATION_NAME).write_text('[{"round": 1, "agreement": 0.9}]')
    assert imitation_reports(tmp_path) == [{"round": 1, "agreement": 0.9}]


def test_a_student_round_pickles_to_the_worker_processes():
    """DAgger rounds send the student (a numpy policy, ReLU here) to the workers: same positions as in one process."""
    from allfives_agents.nets.policy import NumpyPolicy

    rng = np.random.default_rng(0)
    size = OBS_SIZES[2]
    params = {"w0": rng.normal(size=(8, size)), "b0": np.zeros(8), "w1": rng.normal(size=(112, 8)), "b1": np.zeros(112)}
    student = NumpyPolicy("mlp", params, "ReLU", {"obs_version": 2})
    cfg = tiny_config()
    one = gather(cfg, student, games=8, seed=5, workers=1)
    two = gather(cfg, student, games=8, seed=5, workers=2)
    assert len(one) > 20
    np.testing.assert_array_equal(one.obs, two.obs)
    np.testing.assert_array_equal(one.action, two.action)


# ------------------------------------------------------------------------------------------ stopped and resumed
def _model(cfg):
    from sb3_contrib import MaskablePPO

    from allfives_env.single_agent import SingleAgentEnv
    from allfives_train.train import policy_spec

    policy_class, kwargs = policy_spec(cfg)
    torch.manual_seed(0)
    return MaskablePPO(policy_class, SingleAgentEnv(obs_version=2), policy_kwargs=kwargs, seed=0, device="cpu")


def _metadata():
    return {"obs_version": 2, "obs_size": OBS_SIZES[2]}


def test_a_warm_start_stopped_midway_goes_on_from_its_cache_to_the_same_model(tmp_path, monkeypatch):
    import allfives_train.imitate as imitate

    cfg = tiny_config(**{"imitate.games": 120, "imitate.rounds": 2, "imitate.epochs": 1})
    quiet = lambda *_: None  # noqa: E731
    whole = _model(cfg)
    whole_reports = imitate.warm_start(whole, cfg, _metadata(), log=quiet)

    played = []
    real_play = imitate.play_games

    def stopping_play(*args):
        if len(played) == 4:  # round 1's three chunks, then one of round 2's
            raise KeyboardInterrupt
        played.append(args[-1])
        return real_play(*args)

    monkeypatch.setattr(imitate, "play_games", stopping_play)
    cache = imitate.open_cache(tmp_path / "imitation", cfg)
    with pytest.raises(KeyboardInterrupt):
        imitate.warm_start(_model(cfg), cfg, _metadata(), log=quiet, cache=cache)
    assert sorted(p.name for p in cache.glob("round*")) == [
        "round1-chunk0000.npz", "round1-chunk0001.npz", "round1-chunk0002.npz", "round1-policy.pt", "round1-report.json",
        "round2-chunk0000.npz",
    ]

    played.clear()
    monkeypatch.setattr(imitate, "play_games", lambda *args: played.append(args[-1]) or real_play(*args))
    fits = []
    real_fit = imitate.fit
    monkeypatch.setattr(imitate, "fit", lambda *args: fits.append(1) or real_fit(*args))
    resumed = _model(cfg)
    reports = imitate.warm_start(resumed, cfg, _metadata(), log=quiet, cache=imitate.open_cache(tmp_path / "imitation", cfg))
    assert len(played) == 2 and len(fits) == 1, "only round 2's last two chunks are played, only round 2 is fitted"
    for a, b in zip(whole.policy.state_dict().values(), resumed.policy.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert [(r["positions"], r["agreement"]) for r in reports] == [(r["positions"], r["agreement"]) for r in whole_reports]


def test_a_cache_of_another_config_or_a_damaged_chunk_is_not_taken_up(tmp_path, capsys):
    import allfives_train.imitate as imitate

    cfg = tiny_config(**{"imitate.games": 60, "imitate.rounds": 1, "imitate.epochs": 1})
    cache = imitate.open_cache(tmp_path / "imitation", cfg)
    imitate.warm_start(_model(cfg), cfg, _metadata(), log=lambda *_: None, cache=cache)
    # a resume may change the steps: the cache still belongs to the run
    longer = tiny_config(**{"imitate.games": 60, "imitate.rounds": 1, "imitate.epochs": 1, "total_steps": 99_999})
    assert imitate.open_cache(tmp_path / "imitation", longer) == cache and (cache / "round1-policy.pt").exists()
    (cache / "round1-chunk0001.npz").write_bytes(b"not a chunk")
    assert imitate.ChunkStore(cache, 0).read(1) is None and "unreadable" in capsys.readouterr().out
    other = tiny_config(**{"imitate.games": 60, "imitate.rounds": 1, "imitate.epochs": 1, "imitate.explore": 0.5})
    imitate.open_cache(tmp_path / "imitation", other, log=print)
    assert "belongs to another config" in capsys.readouterr().out and not list(cache.glob("round*"))


@pytest.mark.slow
def test_a_run_killed_in_its_warm_start_resumes_it(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    args = ["net.obs_version=2", "imitate.teacher=ismcts:iters=4", "imitate.games=150", "imitate.rounds=1",
            "imitate.epochs=1", "total_steps=512"]
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "allfives.cli.main", "train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not (run_dir / "imitation" / "round1-chunk0000.npz").exists() and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended before its first chunk"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        process.kill()
    assert not (run_dir / "checkpoints" / "latest.json").exists(), "killed before the warm start ended"
    kept = sorted(p.name for p in (run_dir / "imitation").glob("round1-chunk*.npz"))
    resumed = run_cli("train", "--run-dir", run_dir, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming the warm start of {run_dir}" in resumed.stdout
    assert not (run_dir / "imitation").exists(), "the cache goes once the warm start is checkpointed"
    whole_dir = tmp_path / "whole"
    whole = run_cli("train", "--config", TINY, "--run-dir", whole_dir, "--no-progress", *args)
    assert whole.returncode == 0, whole.stderr
    got, want = (json.loads((d / "imitation.json").read_text()) for d in (run_dir, whole_dir))
    assert [(r["positions"], r["agreement"]) for r in got] == [(r["positions"], r["agreement"]) for r in want] and kept


def _children(pid: int) -> set[int]:
    from pathlib import Path

    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads a process's children from /proc")
def test_sigterm_stops_a_warm_start_and_its_worker_processes_and_the_run_resumes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    args = ["net.obs_version=2", "imitate.teacher=ismcts:iters=4", "imitate.games=300", "imitate.rounds=1",
            "imitate.epochs=1", "imitate.workers=2", "total_steps=512"]
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "allfives.cli.main", "train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not (run_dir / "imitation" / "round1-chunk0000.npz").exists() and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended before its first chunk"
            time.sleep(0.05)
        workers = _children(process.pid)
        assert len(workers) >= 2, "the games are played by worker processes"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130 and "interrupted" in err, err
    time.sleep(1)
    alive = [pid for pid in workers if os.path.exists(f"/proc/{pid}") and "zombie" not in open(f"/proc/{pid}/status").read()]
    assert not alive, f"worker processes left playing: {alive}"
    resumed = run_cli("train", "--run-dir", run_dir, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming the warm start of {run_dir}" in resumed.stdout


def test_total_steps_0_is_behaviour_cloning_alone_and_needs_a_teacher(tmp_path):
    from allfives_train.config import ConfigError

    with pytest.raises(ConfigError, match="total_steps must be at least 1"):
        load_config(TINY, ["total_steps=0"])
    run_dir = tmp_path / "clone"
    args = ["net.obs_version=2", "imitate.teacher=expert", "imitate.games=12", "imitate.rounds=1", "imitate.epochs=1", "total_steps=0"]
    result = run_cli("train", "--config", TINY, "--run-dir", run_dir, "--no-progress", *args)
    assert result.returncode == 0, result.stderr
    card = json.loads((run_dir / "card.json").read_text())
    assert card["steps"] == 0 and card["imitation"][0]["positions"] > 0
    # the model is the cloned one: the warm start's checkpoint and the final model hold the same weights
    from allfives_agents.nets.policy import NumpyPolicy

    final, cloned = NumpyPolicy.load(run_dir / "final.zip"), NumpyPolicy.load(run_dir / "checkpoints" / "step_0000000000.zip")
    obs = np.random.default_rng(0).random((5, final.obs_size), dtype=np.float32)
    np.testing.assert_array_equal(final.logits(obs), cloned.logits(obs))


@pytest.mark.parametrize("net", [{}, {"net.policy": "mlp", "net.precision": "float32"}], ids=["scorer", "mlp"])
def test_visit_targets_are_a_search_teachers_root_shares_and_the_student_learns_them(net):
    from sb3_contrib import MaskablePPO

    from allfives_env.single_agent import SingleAgentEnv
    from allfives_train.imitate import soft_cross_entropy
    from allfives_train.train import policy_spec

    teacher = "ismcts:iters=40"
    cfg = tiny_config(**{"imitate.teacher": teacher, "imitate.target": "visits", "imitate.explore": 0.0, **net})
    data = play_games(cfg, teacher, None, games=3, seed=5)
    assert data.visits.shape == (len(data), 112)
    np.testing.assert_allclose(data.visits.sum(1), 1.0, rtol=1e-5)
    assert not (data.visits[~data.mask] > 0).any(), "shares only on legal moves"
    several = data.mask.sum(1) > 1
    assert (data.visits[several].max(1) < 1).any(), "a search spreads its visits"
    # the label is the most visited move (ties: the lower id, as the agent chooses)
    np.testing.assert_array_equal(data.action, np.argmax(data.visits, axis=1))
    again = play_games(cfg, teacher, None, games=3, seed=5)
    np.testing.assert_array_equal(data.visits, again.visits)

    policy_class, kwargs = policy_spec(cfg)
    torch.manual_seed(0)
    model = MaskablePPO(policy_class, SingleAgentEnv(obs_version=2), policy_kwargs=kwargs, seed=0, device="cpu")
    obs, mask, target = (torch.as_tensor(getattr(data, k)) for k in ("obs", "mask", "visits"))

    def loss() -> float:
        with torch.no_grad():
            return float(soft_cross_entropy(model.policy.get_distribution(obs, mask), target).mean())

    before = loss()
    cfg.imitate.epochs, cfg.imitate.learning_rate, cfg.imitate.batch_size = 30, 3e-3, 64
    fit(model, data, cfg, log=lambda *_: None)
    assert loss() < before - 0.1, (before, loss())


@pytest.mark.parametrize("teacher", ["expert", "greedy"])
def test_visit_targets_refuse_a_teacher_that_is_not_a_search(teacher):
    from allfives_train.config import ConfigError

    with pytest.raises(ConfigError, match="imitate.target visits needs a search teacher"):
        tiny_config(**{"imitate.teacher": teacher, "imitate.target": "visits"})
    with pytest.raises(ConfigError, match="imitate.target must be one of move, visits"):
        tiny_config(**{"imitate.target": "policy"})


@pytest.mark.parametrize("first", ["teacher", "student"])
def test_imitate_first_says_who_plays_the_first_round(monkeypatch, first):
    """``imitate.first: student``: round 1's positions are those the warm-started network reaches
    (DAgger from the start), labelled by the teacher; ``teacher`` (the default) plays them itself."""
    from allfives_train import imitate

    cfg = tiny_config(**{"imitate.first": first, "imitate.rounds": 2, "imitate.games": 4, "imitate.epochs": 1})
    model = _model(cfg)
    players = []

    def recorded(cfg, student, games, seed, workers, keep=None):
        players.append(student)
        if student is not None:  # the model as it is at that round, its actor's weights exactly
            np.testing.assert_array_equal(student.params["w0"], model.policy.mlp_extractor.policy_net[0].weight.detach().numpy())
        return play_games(cfg, cfg.imitate.teacher, student, games, seed)

    monkeypatch.setattr(imitate, "gather", recorded)
    lines = []
    imitate.warm_start(model, cfg, _metadata(), log=lines.append)
    assert (players[0] is None) == (first == "teacher") and players[1] is not None
    assert f"positions played by the {first}" in lines[0]


def test_imitate_first_names_its_choices():
    from allfives_train.config import ConfigError

    with pytest.raises(ConfigError, match="imitate.first must be one of teacher, student"):
        tiny_config(**{"imitate.first": "expert"})


def test_a_dataset_keeps_the_teachers_games_for_another_student(tmp_path, monkeypatch):
    import allfives_train.imitate as imitate

    quiet = lambda *_: None  # noqa: E731
    data_dir = tmp_path / "teacher"
    cfg = tiny_config(**{"imitate.games": 120, "imitate.rounds": 1, "imitate.epochs": 1, "imitate.dataset": str(data_dir)})
    plain = tiny_config(**{"imitate.games": 120, "imitate.rounds": 1, "imitate.epochs": 1})
    first = imitate.warm_start(_model(cfg), cfg, _metadata(), log=quiet)
    assert sorted(p.name for p in data_dir.iterdir()) == ["games.yaml", "teacher-0000-50.npz", "teacher-0001-50.npz", "teacher-0002-20.npz"]
    assert first[0]["positions"] == len(gather(plain, None, 120, plain.seed, 1)), "the same positions as a run without a dataset"

    # another student (other widths, rate and epochs) on the same games: the teacher plays none of them
    monkeypatch.setattr(imitate, "play_games", lambda *args: pytest.fail("a kept chunk was played again"))
    wide = tiny_config(**{"imitate.games": 120, "imitate.rounds": 1, "imitate.epochs": 2, "imitate.learning_rate": 5e-4,
                          "net.pi": "[48]", "net.vf": "[48]", "imitate.dataset": str(data_dir)})
    again = imitate.warm_start(_model(wide), wide, _metadata(), log=quiet)
    assert again[0]["positions"] == first[0]["positions"]
    # fewer games read the chunks they share
    fewer = tiny_config(**{"imitate.games": 100, "imitate.rounds": 1, "imitate.epochs": 1, "imitate.dataset": str(data_dir)})
    imitate.warm_start(_model(fewer), fewer, _metadata(), log=quiet)


def test_a_dataset_of_other_games_is_refused_and_a_damaged_chunk_played_again(tmp_path, capsys):
    import allfives_train.imitate as imitate
    from allfives_train.config import ConfigError

    data_dir = tmp_path / "teacher"
    cfg = tiny_config(**{"imitate.games": 60, "imitate.rounds": 1, "imitate.epochs": 1, "imitate.dataset": str(data_dir)})
    imitate.warm_start(_model(cfg), cfg, _metadata(), log=lambda *_: None)
    other = tiny_config(**{"imitate.games": 60, "imitate.rounds": 1, "imitate.epochs": 1, "imitate.dataset": str(data_dir), "imitate.explore": 0.5, "seed": 4})
    with pytest.raises(ConfigError, match=r"holds the games of another setting \(seed, explore differ"):
        imitate.warm_start(_model(other), other, _metadata(), log=lambda *_: None)
    (data_dir / "teacher-0001-10.npz").write_bytes(b"PK broken")
    store = imitate.TeacherGames(data_dir, cfg)
    assert store.read(1) is None and "unreadable" in capsys.readouterr().out and store.held() == 2
    (data_dir / "games.yaml").write_text("[unclosed")
    with pytest.raises(ConfigError, match="games.yaml is unreadable"):
        imitate.TeacherGames(data_dir, cfg)


def test_a_dataset_needs_the_teacher_to_play_round_1(tmp_path):
    from allfives_train.config import ConfigError

    with pytest.raises(ConfigError, match="imitate.dataset keeps the teacher's games of round 1"):
        tiny_config(**{"imitate.first": "student", "imitate.dataset": str(tmp_path / "d")})
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="exists and is not a folder"):
        tiny_config(**{"imitate.dataset": str(tmp_path / "file")})
