"""Training: config loading and its errors; a tiny run end to end, resume, corrupt checkpoints.

The hardening of configs and resume files (crafted files, ranges, what a resume may change) is in
test_train_hardening.py."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from allfives_train.config import ConfigError, TrainConfig, load_config, parse_override
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny_test.yaml"


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_configs_in_the_repo_load():
    from allfives_train.config import read_data, trainer_of
    from allfives_train.rllib_config import RLlibConfig, load_rllib_config

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if "stages" in read_data(path):  # a recipe of several runs: tests/test_stages.py
            from allfives_train.stages import load_recipe

            assert load_recipe(path)[1], path
            continue
        if trainer_of(read_data(path)) == "rllib":
            assert isinstance(load_rllib_config(path), RLlibConfig), path
            continue
        config = load_config(path)
        assert isinstance(config, TrainConfig), path
        assert config.total_steps > 0 or (config.total_steps == 0 and config.imitate.teacher), path  # 0: cloning alone


def test_a_search_teacher_is_given_as_overrides():
    """docs/results.md's expert-iteration runs: the shipped recipe plus a search as teacher, its spec
    (with ``=`` and ``,``) kept whole, nothing else of the recipe changed."""
    recipe = ROOT / "configs" / "ppo_2p.yaml"
    teacher = "ismcts:iters=100,policy=allfives_2p"
    base = load_config(recipe)
    overrides = ["name=exit_2p", f"imitate.teacher={teacher}", "imitate.games=1200", "imitate.explore=0.05", "imitate.workers=2"]
    config = load_config(recipe, overrides)
    imitate = config.imitate
    assert imitate.teacher == teacher
    assert (imitate.games, imitate.explore, imitate.workers, imitate.rounds) == (1200, 0.05, 2, 2)
    assert (config.ppo, config.net, config.pool, config.total_steps) == (base.ppo, base.net, base.pool, base.total_steps)


def test_overrides_are_typed():
    config = load_config(TINY, ["ppo.learning_rate=1e-4", "total_steps=2048", "pool.heuristics.expert=0.5", "net.pi=[16, 16]"])
    assert config.ppo["learning_rate"] == pytest.approx(1e-4)
    assert config.total_steps == 2048 and config.pool.heuristics["expert"] == 0.5 and config.net.pi == [16, 16]
    assert config.ppo["n_steps"] == 128, "the file's ppo keys are kept"
    assert parse_override("game.partnerships=null") == ("game.partnerships", None)


@pytest.mark.parametrize(
    "text, message",
    [
        ("totl_steps: 5\n", "unknown key 'totl_steps'; known keys: name, seed, total_steps"),
        ("pool:\n  wieghts: {}\n", "unknown key 'pool.wieghts'; known keys of pool: heuristics"),
        ("ppo:\n  learning_rte: 0.1\n", "unknown key 'ppo.learning_rte': not a MaskablePPO argument"),
        ("ppo:\n  policy: MlpPolicy\n", "ppo.policy is set by the trainer"),
        ("total_steps: lots\n", "total_steps: expected an integer, got 'lots'"),
        ("net:\n  pi: 64\n", "net.pi: expected a list, got 64"),
        ("pool:\n  heuristics: {greedy: many}\n", "pool.heuristics.greedy: expected a number, got 'many'"),
        ("pool:\n  heuristics: {grandmaster: 1.0}\n", "agent 'grandmaster': unknown agent"),
        ("game:\n  num_players: 5\n", "game: num_players must be 2, 3 or 4"),
        ("eval:\n  best_against: expert\n  opponents: [random]\n", "eval.best_against must be one of eval.opponents"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        ("net:\n  obs_version: 5\n", "net.obs_version must be one of 1, 2, 3, 4"),
        ("imitate:\n  explore: 2\n", "imitate.explore must be in [0, 1]"),
        ("imitate:\n  rounds: 0\n", "imitate.rounds must be at least 1 (0 only with imitate.anchor"),
        ("imitate:\n  games: 0\n", "imitate.games and imitate.epochs must be at least 1"),
        ("imitate:\n  teacher: grandmaster\n", "agent 'grandmaster': unknown agent"),
        ("imitate:\n  learning_rate: .nan\n", "imitate.learning_rate must be a finite number > 0"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_config_errors_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config(write(tmp_path, text))


@pytest.mark.slow
def test_tiny_training_run_resume_and_corrupt_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    result = run_cli("train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress")
    assert result.returncode == 0, result.stderr
    for name in ("config.yaml", "final.zip", "best.zip", "card.json", "eval.txt", "evals.jsonl"):
        assert (run_dir / name).exists(), name
    assert list((run_dir / "tb").rglob("events.out.tfevents.*")), "TensorBoard events written"
    latest = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    assert latest["steps"] >= 512
    assert list((run_dir / "pool").glob("snap_*.npz")), "self-play snapshots in the pool"
    card = json.loads((run_dir / "card.json").read_text())
    assert {r["opponent"] for r in card["final_evaluation"]} == {"random", "greedy"}
    assert "final evaluation" in result.stdout and "random" in result.stdout
    # the learning curve: a point per evaluation row, by steps and by the run's wall time, drawn as a PNG
    rows = [json.loads(line) for line in (run_dir / "evals.jsonl").read_text().splitlines()]
    assert [p["steps"] for p in card["learning_curve"]] == [r["steps"] for r in rows] and rows
    walls = [p["wall_seconds"] for p in card["learning_curve"]]
    assert all(w > 0 for w in walls) and walls == sorted(walls) and walls[-1] <= card["wall_seconds"]
    assert (run_dir / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # a second fresh run into the same directory is refused; --resume continues it
    again = run_cli("train", "--config", str(TINY), "--run-dir", str(run_dir))
    assert again.returncode == 2 and "pass --resume" in again.stderr
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    resumed = run_cli("train", "--run-dir", str(run_dir), "--resume", "total_steps=1024", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stdout and "from step 512" in resumed.stdout
    assert json.loads((run_dir / "checkpoints" / "latest.json").read_text())["steps"] >= 1024
    assert yaml.safe_load((run_dir / "config.yaml").read_text()) == dict(saved, total_steps=1024), "only the override changed"
    assert not list(run_dir.rglob("*.pkl")) and not list(run_dir.rglob("*.tmp")), "no pickles, no half-written files"

    # a truncated checkpoint is a clear error, not a traceback
    latest = json.loads((run_dir / "checkpoints" / "latest.json").read_text())
    model = run_dir / "checkpoints" / latest["model"]
    model.write_bytes(model.read_bytes()[:1000])
    broken = run_cli("train", "--run-dir", str(run_dir), "--resume", "total_steps=2048", "--no-progress")
    assert broken.returncode == 2 and "is corrupt" in broken.stderr and "Traceback" not in broken.stderr

    # the trained policy plays as an agent in a tournament
    match = run_cli("tournament", "--agents", f"ppo:{run_dir / 'final.zip'},random", "--games", "4", "--seed", "1", "--target", "50", "--json")
    assert match.returncode == 0, match.stderr
    assert json.loads(match.stdout.strip().splitlines()[-1])["pairings"][0]["games"] == 4

    # shipping the run: zip + onnx + card with the evaluation and the baselines' yardstick
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.json").write_text(json.dumps({"intended_use": "kept", "evaluation": "replaced"}))
    shipped = subprocess.run([sys.executable, "-m", "allfives_train.ship", str(run_dir), "--name", "tiny", "--games", "4", "--out-dir", str(models)],
                             capture_output=True, text=True, timeout=600)
    assert shipped.returncode == 0, shipped.stderr
    card = json.loads((models / "tiny.json").read_text())
    assert (models / "tiny.zip").is_file() and (models / "tiny.onnx").is_file()
    assert [r["opponent"] for r in card["evaluation"]["results"]] == ["random", "greedy", "expert"]
    assert len(card["evaluation"]["among_baselines"]) == 3 and card["onnx_parity"]["same_action"] >= 0.99
    assert "tiny vs greedy" in shipped.stdout and "random vs greedy" in shipped.stdout
    assert card["intended_use"] == "kept", "re-shipping keeps a card's hand-written fields"


def test_resume_without_checkpoint_is_a_clear_error(tmp_path):
    result = run_cli("train", "--run-dir", str(tmp_path / "nothing"), "--resume")
    assert result.returncode == 2 and "nothing to resume" in result.stderr
    result = run_cli("train", "--config", str(tmp_path / "missing.yaml"))
    assert result.returncode == 2 and "config file not found" in result.stderr


def test_evaluation_in_worker_processes_matches_one_process():
    """eval.workers > 1: the learner (a numpy policy object) is saved for the workers; same games, same rows."""
    from allfives_agents.nets.policy import NumpyPolicy, PPOAgent
    from allfives_env.engine import Rules
    from allfives_train.evaluate import evaluate

    agent = PPOAgent(NumpyPolicy.load(ROOT / "models" / "allfives_2p.zip"))
    agent.name = "learner"
    one = evaluate(agent, ["greedy", "random"], Rules.make(target_score=100), 8, seed=5)
    two = evaluate(agent, ["greedy", "random"], Rules.make(target_score=100), 8, seed=5, workers=2)
    keys = ("opponent", "games", "a_wins", "mean_score_diff")
    assert [{k: r[k] for k in keys} for r in one] == [{k: r[k] for k in keys} for r in two]
    assert [r["games"] for r in one] == [8, 8]


@pytest.mark.slow
def test_shipping_a_cut_throat_policy_plays_separate_two_agent_matches(tmp_path):
    run_dir = tmp_path / "run3"
    result = run_cli("train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress", "game.num_players=3",
                     "eval.final_games=3")
    assert result.returncode == 0, result.stderr
    models = tmp_path / "models"
    shipped = subprocess.run([sys.executable, "-m", "allfives_train.ship", str(run_dir), "--name", "tiny3", "--games", "3", "--out-dir", str(models)],
                             capture_output=True, text=True, timeout=600)
    assert shipped.returncode == 0, shipped.stderr
    card = json.loads((models / "tiny3.json").read_text())
    evaluation = card["evaluation"]
    assert evaluation["schedule"].startswith("separate two-agent matches") and evaluation["ratings"] is None
    assert [r["opponent"] for r in evaluation["results"]] == ["random", "greedy", "expert"]
    # a padded group a b a: each game holds two meetings of the policy with its opponent
    assert all(r["games"] == 2 * evaluation["games_per_opponent"] for r in evaluation["results"])
    assert {(r["a"], r["b"]) for r in evaluation["among_baselines"]} == {("random", "greedy"), ("random", "expert"), ("greedy", "expert")}


@pytest.mark.slow
def test_a_batched_run_in_worker_processes_trains_and_resumes(tmp_path):
    run_dir = tmp_path / "run"
    options = ["vec_env=batched", "env_workers=2", "n_envs=4", "ppo.n_steps=64", "update_threads=2", "net.precision=bfloat16"]
    result = run_cli("train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress", *options)
    assert result.returncode == 0, result.stderr
    assert list((run_dir / "pool").glob("snap_*.npz")), "self-play snapshots reached the workers' pool"
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert (saved["vec_env"], saved["env_workers"], saved["net"]["precision"]) == ("batched", 2, "bfloat16")
    resumed = run_cli("train", "--run-dir", str(run_dir), "--resume", "total_steps=1024", "env_workers=0", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "from step 512" in resumed.stdout
    assert json.loads((run_dir / "checkpoints" / "latest.json").read_text())["steps"] >= 1024


def test_learning_curve_points_follow_the_steps_and_keep_rows_without_a_wall_time(tmp_path):
    from allfives_train import curve

    def row(steps, rate, wall=None):
        r = {"steps": steps, "results": {"expert": {"a_win_rate": rate, "ci_low": rate - 0.1, "ci_high": rate + 0.1}}}
        return json.dumps(dict(r, wall_seconds=wall) if wall is not None else r)

    (tmp_path / "evals.jsonl").write_text("\n".join([row(200, 0.5, 20.0), row(100, 0.4, 10.0)]) + "\n")
    points = curve.write(tmp_path, "t")
    assert [p["steps"] for p in points] == [100, 200] and [p["wall_seconds"] for p in points] == [10.0, 20.0]
    assert points[0]["win_rates"] == {"expert": [0.4, pytest.approx(0.3), 0.5]}
    assert (tmp_path / curve.CURVE_PNG).stat().st_size > 1000
    # rows of runs before wall times were recorded: drawn by steps only
    (tmp_path / "evals.jsonl").write_text(row(100, 0.4) + "\n")
    assert curve.write(tmp_path)[0]["wall_seconds"] is None
    empty = tmp_path / "empty"
    empty.mkdir()
    assert curve.write(empty) == [] and not (empty / curve.CURVE_PNG).exists()


@pytest.mark.slow
def test_init_from_starts_from_a_models_weights_and_linear_decay_ends_at_zero(tmp_path):
    """``init_from`` starts a run from another model's policy weights (another network is refused by
    name), and ``lr_decay: linear`` takes the learning rate from ``ppo.learning_rate`` down to 0 at
    ``total_steps``, on the same line across a resume."""
    import torch

    from allfives_train.network import load_ppo
    from allfives_train.train import init_weights, ppo_arguments

    cfg = load_config(TINY, ["lr_decay=linear", "ppo.learning_rate=0.001"])
    schedule = ppo_arguments(cfg)["learning_rate"]
    assert [schedule(p) for p in (1.0, 0.25, 0.0)] == [0.001, 0.00025, 0.0]
    assert ppo_arguments(load_config(TINY))["learning_rate"] == load_config(TINY).ppo["learning_rate"]

    first = tmp_path / "first"
    assert run_cli("train", "--config", str(TINY), "--run-dir", str(first), "--no-progress").returncode == 0
    source = load_ppo(first / "final.zip").policy.state_dict()
    second = tmp_path / "second"
    result = run_cli("train", "--config", str(TINY), "--run-dir", str(second), "--no-progress", f"init_from={first / 'final.zip'}",
                     "lr_decay=linear", "total_steps=1024")
    assert result.returncode == 0, result.stderr
    rate = load_config(TINY).ppo["learning_rate"]
    # updates of 256 steps, each at the rate of the share of the run left after its rollout; a
    # checkpoint is saved during a rollout, so step N's holds the rate of the update before it
    # (the last three checkpoints are kept)
    rates = [load_ppo(second / "checkpoints" / f"step_{n:010d}").policy.optimizer.param_groups[0]["lr"] for n in (512, 768)]
    assert rates == pytest.approx([rate * 3 / 4, rate / 2])
    assert load_ppo(second / "final.zip").policy.optimizer.param_groups[0]["lr"] == 0.0
    resumed = run_cli("train", "--run-dir", str(second), "--resume", "total_steps=1536", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr

    # the weights at step 0 are the source's; another network is a one-line error naming init_from
    import allfives_train.train as train_module
    from allfives_train.envs import make_env_fn
    from stable_baselines3.common.vec_env import DummyVecEnv

    tiny = load_config(TINY)
    env = DummyVecEnv([make_env_fn(tiny, 0, ["random"], [1.0])])
    model = train_module.new_model(tiny, env, tmp_path / "tb")
    init_weights(model, first / "final.zip")
    assert all(torch.equal(v, source[k]) for k, v in model.policy.state_dict().items())
    wide = train_module.new_model(load_config(TINY, ["net.pi=[16]"]), env, tmp_path / "tb")
    with pytest.raises(ConfigError, match="init_from: .* holds another network"):
        init_weights(wide, first / "final.zip")
    broken = run_cli("train", "--config", str(TINY), "--run-dir", str(tmp_path / "third"), "init_from=README.md")
    assert broken.returncode == 2 and "init_from" in broken.stderr and "Traceback" not in broken.stderr


def test_numpys_blas_runs_on_the_learners_threads_while_it_learns(tmp_path, monkeypatch):
    """The rollouts score in numpy and the pool's snapshots play in numpy: its BLAS gets
    ``torch_threads`` threads during ``learn`` (its default, one per core, spins beside other work),
    and its own setting back afterwards."""
    from sb3_contrib import MaskablePPO
    from threadpoolctl import threadpool_info, threadpool_limits

    from allfives_train.train import train

    def blas_threads() -> set[int]:
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    seen = []
    collect = MaskablePPO.collect_rollouts

    def recording(self, *args, **kwargs):
        seen.append(blas_threads())
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(MaskablePPO, "collect_rollouts", recording)
    cfg = load_config(TINY, ["vec_env=batched", "env_workers=0", "torch_threads=1", "eval.final_games=2"])
    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        train(cfg, tmp_path / "run", progress_bar=False)
        assert blas_threads() == before
    assert before == {2} and seen and all(threads == {1} for threads in seen)
