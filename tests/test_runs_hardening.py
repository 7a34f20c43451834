"""Runs that lose nothing and configs with every input bounded: a run killed between an evaluation
and its checkpoint, in the middle of a row or before its first checkpoint resumes as if never
killed; checkpoint files that disagree, replaced pool snapshots and huge or explosive configs are
one-line errors. The runs are the tiny config in one process (a few seconds each), with the
evaluations during training faked so that the best model is known in advance."""

from __future__ import annotations

import io
import json
import pickle
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import allfives_train.callbacks as callbacks_module
import allfives_train.checkpoint as checkpoint_module
import allfives_train.train as train_module
from allfives.cli.main import main as cli_main
from allfives_train.checkpoint import CheckpointError, latest_checkpoint, load_state
from allfives_train.config import MAX_MESSAGE, ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny_test.yaml"
RLLIB_TINY = ROOT / "configs" / "rllib_tiny.yaml"
#: the tiny config in one process: 128 steps a rollout, an evaluation and a checkpoint every 256, 512 in all
ONE_PROCESS = ["n_envs=1", "vec_env=dummy", "eval.every=256", "checkpoint_every=256", "total_steps=512"]


class Killed(BaseException):
    """The run's process dying: nothing of the trainer's own runs after it (unlike Ctrl-C)."""


@pytest.fixture
def evaluations(monkeypatch):
    """The win rates the evaluations during training give, in turn (a list the test fills); the
    final evaluation is faked too. Each evaluation's steps are recorded in ``evaluations.at``."""
    rates: list[float] = []

    def evaluate(agent, opponents, rules, games, seed, workers=1):
        rate = rates.pop(0)
        return [{"opponent": o, "games": games, "a_wins": round(rate * games), "a_win_rate": rate, "ci_low": 0.0, "ci_high": 1.0,
                 "mean_score_diff": 0.0} for o in opponents]

    monkeypatch.setattr(callbacks_module, "evaluate", evaluate)
    monkeypatch.setattr(train_module, "final_evaluation", lambda agent, cfg, *a: evaluate(agent, cfg.eval.opponents, None, 2, 0) if rates else [])
    return rates


def kill_at_checkpoint(monkeypatch, steps: int) -> None:
    """Kill the run when it starts the checkpoint of ``steps``, before writing any of it."""
    real = checkpoint_module.save_checkpoint

    def save(run_dir, model, extra, keep=3):
        if model.num_timesteps >= steps:
            raise Killed
        return real(run_dir, model, extra, keep)

    for module in (train_module, callbacks_module):
        monkeypatch.setattr(module, "save_checkpoint", save, raising=False)


def cli(capsys, *args) -> tuple[int, str]:
    code = cli_main([str(a) for a in args])
    return code, capsys.readouterr().err


def train(capsys, run: Path, *args) -> tuple[int, str]:
    """``allfives train`` of the tiny config in one process, fresh (``--config``) unless ``--resume``."""
    config = [] if "--resume" in args else ["--config", TINY, *ONE_PROCESS]
    return cli(capsys, "train", "--run-dir", run, "--no-progress", *config, *args)


def killed_run(tmp_path, monkeypatch, capsys, rates, steps: int = 512) -> Path:
    """A run killed as it started its checkpoint of ``steps``, after the evaluations ``rates``."""
    run = tmp_path / "run"
    with monkeypatch.context() as patch:
        kill_at_checkpoint(patch, steps)
        with pytest.raises(Killed):
            train(capsys, run)
    assert not rates, "every evaluation ran"
    return run


def rows(run: Path) -> list[tuple[int, float]]:
    """``(steps, win rate against greedy)`` of every row of evals.jsonl (each line must be JSON)."""
    lines = (run / "evals.jsonl").read_text().splitlines()
    return [(r["steps"], r["results"]["greedy"]["a_win_rate"]) for r in map(json.loads, lines)]


def model_steps(path: Path) -> tuple[int, float | None]:
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("allfives.json"))
    return meta["steps"], meta.get("best_win_rate")


# 1. evals.jsonl and best.zip follow the checkpoint a run resumes from ----------------------------------


def test_a_run_killed_between_an_evaluation_and_its_checkpoint_resumes_with_the_rows_and_best_of_that_checkpoint(
        tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3, 0.9]  # step 256, then a new best at 512 that no checkpoint will hold
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations)
    assert rows(run) == [(256, 0.3), (512, 0.9)]

    evaluations += [0.1, 0.5]  # step 512 again, by the resumed model; then the final evaluation
    code, err = train(capsys, run, "--resume")
    assert code == 0, err
    assert rows(run) == [(256, 0.3), (512, 0.1)], "each step evaluated once, by the model the run went on with"
    assert model_steps(run / "best.zip") == (256, 0.3), "best.zip is the best of the run that went on"
    card = json.loads((run / "card.json").read_text())
    assert card["best"]["win_rate"] == 0.3 and card["best"]["steps"] == 256
    assert not list((run / "checkpoints").glob("best*")), "nothing left pending"


def test_a_new_best_is_best_zip_once_its_checkpoint_is_written(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3, 0.9, 0.5]
    code, err = train(capsys, tmp_path / "run")
    assert code == 0, err
    assert model_steps(tmp_path / "run" / "best.zip") == (512, 0.9)


# 2. a row cut by a kill is repaired ------------------------------------------------------------------------


def test_a_partial_last_row_of_evals_jsonl_is_dropped_on_resume(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3, 0.9]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations)
    evals = run / "evals.jsonl"
    text = evals.read_text()
    evals.write_text(text[: len(text) - 40])  # killed in the middle of writing the row of step 512

    evaluations += [0.1, 0.5]
    code, err = train(capsys, run, "--resume")
    assert code == 0, err
    assert rows(run) == [(256, 0.3), (512, 0.1)], "no row fused onto the partial one"


def test_a_damaged_row_in_the_middle_of_evals_jsonl_is_an_error_naming_its_line(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3, 0.9]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations)
    evals = run / "evals.jsonl"
    evals.write_text("not json\n" + evals.read_text())
    kept = evals.read_text()
    code, err = train(capsys, run, "--resume")
    assert code == 2 and f"{evals} line 1 is not an evaluation row" in err and len(err.strip().splitlines()) == 1
    assert evals.read_text() == kept


# 4. a run killed before its first complete checkpoint ------------------------------------------------------


def test_a_run_killed_while_writing_its_first_latest_json_resumes_from_the_complete_checkpoint_on_disk(
        tmp_path, monkeypatch, capsys, evaluations):
    real = checkpoint_module.atomic_write

    def write(path, data):
        if Path(path).name == "latest.json":
            Path(str(path) + ".tmp").write_bytes(data[: len(data) // 2])
            raise Killed
        real(path, data)

    evaluations += [0.3]
    run = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(checkpoint_module, "atomic_write", write)
        with pytest.raises(Killed):
            train(capsys, run)
    directory = run / "checkpoints"
    assert not (directory / "latest.json").exists() and (directory / "step_0000000256.state.json").is_file()

    evaluations += [0.6, 0.5]
    code, err = train(capsys, run, "--resume")
    assert code == 0, err
    assert latest_checkpoint(run).steps == 512 and rows(run) == [(256, 0.3), (512, 0.6)]


def test_a_run_killed_before_any_checkpoint_may_start_again_or_resume_from_step_0(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations, steps=256)
    assert not list(run.glob("checkpoints/*.json")) and (run / "config.yaml").is_file()

    evaluations += [0.2, 0.4, 0.5]
    code, err = train(capsys, run)  # the same command again
    assert code == 0, err
    assert rows(run) == [(256, 0.2), (512, 0.4)], "the killed start's rows are gone"
    assert model_steps(run / "best.zip") == (512, 0.4)


def test_a_resume_of_a_run_killed_before_any_checkpoint_starts_it_again(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations, steps=256)
    evaluations += [0.2, 0.4, 0.5]
    code, err = train(capsys, run, "--resume")
    assert code == 0, err
    assert rows(run) == [(256, 0.2), (512, 0.4)]


def test_a_folder_that_is_not_a_run_or_holds_a_checkpoint_is_still_refused(tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    code, err = train(capsys, other)
    assert code == 2 and "is not empty" in err and (other / "notes.txt").read_text() == "mine\n"
    code, err = train(capsys, tmp_path / "nothing", "--resume")
    assert code == 2 and "nothing to resume" in err


def rllib_run(tmp_path, steps=(200,), latest: int | None = 200, config: bool = True) -> Path:
    """A run folder of the rllib trainer: checkpoint folders of ``steps`` (RLlib's files left out) and
    the latest.json of step ``latest`` (``None``: none written)."""
    from allfives_train.config import to_yaml
    from allfives_train.rllib_config import load_rllib_config

    run = tmp_path / "rllib_run"
    (run / "checkpoints").mkdir(parents=True)
    if config:
        (run / "config.yaml").write_text(to_yaml(load_rllib_config(RLLIB_TINY)))
    for step in steps:
        folder = run / "checkpoints" / f"step_{step:010d}"
        folder.mkdir()
        state = {"steps": step, "wall_seconds": 1.0, "pool": {"snapshots": []}}
        (folder / "allfives.json").write_text(json.dumps({"obs_version": 1, "rules": None, "module": "learner", **state}))
    if latest is not None:
        info = {"checkpoint": f"step_{latest:010d}", "steps": latest, "wall_seconds": 1.0, "pool": {"snapshots": []}}
        (run / "checkpoints" / "latest.json").write_text(json.dumps(info))
    return run


def test_an_rllib_run_killed_while_writing_its_first_latest_json_resumes_from_the_complete_folder(tmp_path):
    from allfives_train.rllib import check_run_dir, resume_point

    run = rllib_run(tmp_path, steps=(200,), latest=None)
    (run / "checkpoints" / "step_0000000400").mkdir()  # RLlib's files of step 400, allfives.json not yet written
    check_run_dir(run, resume=True)
    path, state = resume_point(run)
    assert path.name == "step_0000000200" and state["steps"] == 200


def test_an_rllib_run_killed_before_any_checkpoint_may_start_again(tmp_path):
    from allfives_train.rllib import check_run_dir, resume_point

    run = rllib_run(tmp_path, steps=(), latest=None)
    (run / "checkpoints" / "step_0000000200").mkdir()
    assert resume_point(run) is None
    check_run_dir(run, resume=False)
    check_run_dir(run, resume=True)
    (run / "config.yaml").unlink()
    with pytest.raises(CheckpointError, match="is not empty"):
        check_run_dir(run, resume=False)
    with pytest.raises(CheckpointError, match="nothing to resume"):
        check_run_dir(run, resume=True)


# 5. checkpoint files that disagree on the step --------------------------------------------------------------


def test_an_rllib_checkpoint_whose_steps_disagree_with_latest_json_is_refused_naming_both(tmp_path):
    from allfives_train.rllib import check_run_dir

    run = rllib_run(tmp_path, steps=(200,), latest=200)
    latest = run / "checkpoints" / "latest.json"
    latest.write_text(latest.read_text().replace('"steps": 200', '"steps": 400'))
    with pytest.raises(CheckpointError) as info:
        check_run_dir(run, resume=True)
    message = str(info.value)
    assert str(latest) in message and "400" in message and "step_0000000200/allfives.json says steps 200" in message


def test_a_state_whose_steps_disagree_with_latest_json_is_refused_naming_both(tmp_path):
    from test_train_hardening import fake_run, latest

    run = fake_run(tmp_path)
    path = run / "checkpoints" / latest(run)["state"]
    state = json.loads(path.read_text())
    state["steps"] = 512
    path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError) as info:
        load_state(latest_checkpoint(run), run)
    message = str(info.value)
    assert str(path) in message and "512" in message and str(run / "checkpoints" / "latest.json") in message and "256" in message
    assert "\n" not in message


def test_a_model_whose_step_disagrees_with_its_checkpoint_is_refused(tmp_path, monkeypatch, capsys, evaluations):
    evaluations += [0.3, 0.9]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations)
    directory = run / "checkpoints"
    info = json.loads((directory / "latest.json").read_text())
    for key in ("model", "state", "rng"):  # the files of step 256 renamed as a checkpoint of step 768
        (directory / info[key]).rename(directory / info[key].replace("0000000256", "0000000768"))
    state = directory / info["state"].replace("0000000256", "0000000768")
    state.write_text(state.read_text().replace('"steps": 256', '"steps": 768'))
    (directory / "latest.json").write_text(json.dumps({k: (v.replace("0000000256", "0000000768") if isinstance(v, str) else 768)
                                                       for k, v in info.items()}))
    code, err = train(capsys, run, "--resume")
    assert code == 2 and "is a model of step 256" in err and "768" in err and len(err.strip().splitlines()) == 1


# 7. a pool snapshot replaced by a pickle or an object array -----------------------------------------------------


class Evil:
    def __init__(self, path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("replacement", ["pickle", "object array", "garbage"])
def test_a_replaced_pool_snapshot_is_one_error_naming_it(tmp_path, monkeypatch, capsys, evaluations, replacement):
    evaluations += [0.3, 0.9]
    run = killed_run(tmp_path, monkeypatch, capsys, evaluations)
    snapshot = run / "pool" / "snap_0000000256.npz"
    assert snapshot.is_file()
    marker = tmp_path / "pwned"
    if replacement == "pickle":
        snapshot.write_bytes(pickle.dumps(Evil(marker)))
    elif replacement == "object array":
        buffer = io.BytesIO()
        np.savez(buffer, pi_0_w=np.array([Evil(marker)], dtype=object))
        snapshot.write_bytes(buffer.getvalue())
    else:
        snapshot.write_bytes(b"PK\x03\x04 not a zip")
    code, err = train(capsys, run, "--resume")
    assert code == 2 and err.startswith(f"error: pool snapshot {snapshot} cannot be loaded") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not marker.exists()


# 6. every input bounded ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "override, message",
    [
        ("n_envs=100000000000", "n_envs"),
        ("eval.games=1000000000000", "eval.games"),
        ("ppo.n_steps=1000000000", "ppo.n_steps"),
        ("net.pi=[100000000]", "net.pi"),
        ("net.scorer_width=100000000", "net.scorer_width"),
        ("torch_threads=100000", "torch_threads: at most 8 per core"),
        ("update_threads=100000", "update_threads: at most 8 per core"),
        ("env_workers=100000", "env_workers: at most 8 per core"),
        ("eval.workers=100000", "eval.workers: at most 8 per core"),
        ("imitate.games=1000000000", "imitate.games"),
    ],
)
def test_huge_values_are_one_line_errors_at_load(override, message):
    extra = ["vec_env=batched", "imitate.teacher=greedy"]
    started = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        load_config(TINY, [*extra, override])
    assert message in str(info.value) and "\n" not in str(info.value)
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    "override, message",
    [
        ("ppo.train_batch_size_per_learner=10000000000000", "ppo.train_batch_size_per_learner"),
        ("net.hidden=[100000000]", "net.hidden"),
        ("num_cpus=100000", "num_cpus: at most 8 per core"),
        ("eval.final_games=1000000000000", "eval.final_games"),
    ],
)
def test_huge_values_of_an_rllib_config_are_one_line_errors_at_load(override, message):
    from allfives_train.rllib_config import load_rllib_config

    with pytest.raises(ConfigError) as info:
        load_rllib_config(RLLIB_TINY, [override])
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_command_line_overrides_meet_the_same_bounds(tmp_path, capsys):
    run = tmp_path / "run"
    for override in ("torch_threads=100000", "n_envs=100000000000", "net.pi=[100000000]"):
        code, err = cli(capsys, "train", "--config", TINY, "--run-dir", run, "--no-progress", override)
        assert code == 2 and err.startswith(f"error: {override.split('=')[0]}") and len(err.strip().splitlines()) == 1
    assert not run.exists()


BOMB = "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


def test_a_yaml_alias_bomb_is_refused_quickly_and_never_echoed(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text('a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB + "name: *i\n")
    started = time.perf_counter()
    with pytest.raises(ConfigError, match="aliases expand to more than"):
        load_config(path)
    run = tmp_path / "run"
    code, err = cli(capsys, "train", "--config", path, "--run-dir", run)
    assert code == 2 and "aliases expand" in err and len(err) < 400 and not run.exists()
    override = "name=[&a [x, x, x, x, x, x, x, x, x], " + ", ".join(f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")) + "]"
    with pytest.raises(ConfigError, match="aliases expand to more than"):
        load_config(TINY, [override])
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize(
    "override",
    [
        "name=[" + ", ".join(["[x, x, x, x, x, x, x, x]"] * 2000) + "]",  # a wrong type: the value shown is cut
        "name=" + "x" * 100_000,
        "imitate.teacher=" + "y" * 100_000,
        "seed=" + "9" * 5000,
        "pool.heuristics={greedy: " + "1" * 10_000 + "x}",
        "name=" + "[" * 20_000 + "]" * 20_000,
    ],
)
def test_a_config_error_echoes_a_bounded_part_of_the_value(override):
    with pytest.raises(ConfigError) as info:
        load_config(TINY, [override])
    assert len(str(info.value)) <= MAX_MESSAGE and "\n" not in str(info.value)


def test_a_huge_or_endless_config_file_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "huge.yaml"
    huge.write_text("name: run\n" + "# padding\n" * 200_000)
    with pytest.raises(ConfigError, match="more than the"):
        load_config(huge)
    if Path("/dev/zero").exists():
        with pytest.raises(ConfigError, match="not a regular file"):
            load_config("/dev/zero")


def test_progress_reaches_a_log_file_in_lines_and_never_reads_past_the_total(tmp_path):
    # output to a file: a plain line at the start and the end (and every LOG_EVERY_S seconds), with the
    # steps clamped to the run's total although the last rollout gathers more
    import subprocess
    import sys

    log = tmp_path / "train.log"
    with open(log, "w") as out:
        result = subprocess.run([sys.executable, "-m", "allfives.cli.main", "train", "--config", "configs/tiny_test.yaml",
                                 "--run-dir", str(tmp_path / "run"), "total_steps=300"],
                                cwd=Path(__file__).resolve().parents[1], stdout=out, stderr=subprocess.STDOUT, timeout=300)
    text = log.read_text()
    assert result.returncode == 0, text[-2000:]
    lines = [line for line in text.splitlines() if line.startswith(("training from step", "step "))]
    assert lines[0].startswith("training from step 0/300") and lines[-1].startswith("step 300/300 (100%)"), lines
    assert "\r" not in text
