"""The RLlib trainer (``trainer: rllib``): typed config, training on a local Ray, resume, ONNX export."""

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli

from allfives_train.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "rllib_tiny.yaml"

pytestmark = pytest.mark.usefixtures("one_ray_at_a_time")


@pytest.mark.slow
def test_train_resume_export_and_play_the_rllib_policy(tmp_path):
    """With a relative --run-dir, as docs/cli.md writes it (Ray reads a relative path as a URI)."""
    pytest.importorskip("ray.rllib")
    from allfives_agents.nets.onnx_agent import OnnxAgent
    from allfives_agents.tournament import play_game
    from allfives_env.engine import Rules
    from allfives_train.rllib_export import check_rllib_parity, rllib_checkpoint

    relative, run = "runs/rllib_tiny", tmp_path / "runs" / "rllib_tiny"
    first = run_cli("train", "--config", TINY, "--run-dir", relative, "--no-progress", cwd=tmp_path, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    card = json.loads((run / "card.json").read_text())
    assert card["trainer"] == "rllib" and card["steps"] >= 400 and (run / "final.onnx").is_file()
    assert [r["opponent"] for r in card["final_evaluation"]] == ["random", "greedy"]

    resumed = run_cli("train", "--run-dir", relative, "--resume", "total_steps=800", "--no-progress", cwd=tmp_path, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming {relative} from step {card['steps']}" in resumed.stdout
    assert json.loads((run / "card.json").read_text())["steps"] >= 800
    snapshots = json.loads((run / "checkpoints" / "latest.json").read_text())["pool"]["snapshots"]
    assert [Path(p).name for p in snapshots] == ["snap_0000000600.onnx", "snap_0000000800.onnx"]
    assert sorted(p.name for p in (run / "pool").iterdir()) == ["snap_0000000600.onnx", "snap_0000000800.onnx"]

    out = tmp_path / "policy.onnx"
    export = run_cli("export", relative, "--out", out, "--check", "300", "--json", cwd=tmp_path, timeout=300)
    assert export.returncode == 0, export.stderr[-3000:]
    parity = json.loads(export.stdout.strip().splitlines()[-1])
    assert parity["max_abs_diff"] < 1e-4 and parity["same_action"] == 1.0 and parity["all_legal"]
    assert check_rllib_parity(rllib_checkpoint(run), out, count=200, seed=5)["max_abs_diff"] < 1e-4

    agent = OnnxAgent(out)
    assert agent.policy.obs_version == 1 and agent.policy.rules["target_score"] == 60
    game = play_game(Rules.from_dict(agent.policy.rules), 3, [agent, OnnxAgent(out)], [1, 2])
    assert game.over and game.winner is not None
    logits = agent.policy.logits(np.zeros(agent.policy.obs_size, np.float32))
    assert logits.shape == (112,) and np.isfinite(logits).all()

    ranked = run_cli("tournament", "--agents", f"onnx:{out}", "ppo:allfives_2p", "--games", "2", "--seed", "1", "--target", "60",
                     "--json", timeout=300)
    assert ranked.returncode == 0, ranked.stderr[-2000:]
    assert json.loads(ranked.stdout.strip().splitlines()[-1])["games"] == 2, "ranked against a shipped SB3 policy"

    from allfives.server import BotService  # what allfives serve runs, given the file as it is

    service = BotService(str(out))
    assert service.health()["obs_version"] == 1 and service.health()["rules"]["target_score"] == 60
    answer = service.move({"seat": 0, "hand": [[0, 3], [1, 4], [2, 6], [0, 5], [3, 3], [4, 6], [1, 1], [2, 2], [6, 6]], "history": []})
    assert answer["end"] == "lead" and answer["tile"] in [[0, 3], [1, 4], [2, 6], [0, 5], [3, 3], [4, 6], [1, 1], [2, 2], [6, 6]]


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["ppo.learning_rate=1e-4"], "unknown key 'ppo.learning_rate'; the PPOConfig.training arguments"),
        (["ppo.lr=-1"], "ppo.lr: must be a finite number > 0, got -1"),
        (["ppo.minibatch_size=512"], "ppo.minibatch_size (512) must not exceed ppo.train_batch_size_per_learner (200)"),
        (["num_env_runners=-1"], "num_env_runners must be 0"),
        (["n_envs=4"], "unknown key 'n_envs'"),
        (["net.hidden=[]"], "net.hidden must be a list of positive layer sizes"),
        (["pool.snapshot_every=0"], "pool.snapshot_every must be at least 1"),
        (["pool.heuristics={nope: 1}"], "pool.heuristics: agent 'nope'"),
        (["ray=somewhere"], "ray: bad Ray address 'somewhere'"),
        (["trainer=tf"], "trainer: must be one of sb3, rllib, got 'tf'"),
    ],
)
def test_bad_rllib_configs_are_one_line_errors_naming_the_key(overrides, message):
    from allfives_train.rllib_config import load_rllib_config

    with pytest.raises(ConfigError) as info:
        load_rllib_config(TINY, overrides)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_trainers_read_only_their_own_configs():
    from allfives_train.config import load_config
    from allfives_train.rllib_config import load_rllib_config

    with pytest.raises(ConfigError, match="config of the rllib trainer"):
        load_config(TINY)
    with pytest.raises(ConfigError, match="config of the sb3 trainer"):
        load_rllib_config(ROOT / "configs" / "tiny_test.yaml", ["trainer=sb3"])
    assert load_rllib_config(ROOT / "configs" / "rllib_2p.yaml").num_env_runners == 2


def test_a_resume_keeps_the_recipe(tmp_path):
    from allfives_train.config import resume_changes
    from allfives_train.rllib_config import RESUMABLE, load_rllib_config

    saved = load_rllib_config(TINY)
    assert resume_changes(saved, load_rllib_config(TINY, ["total_steps=800", "num_env_runners=2"]), RESUMABLE) == [
        "total_steps", "num_env_runners"]
    with pytest.raises(ConfigError, match=r"ppo.lr \(0.0003 -> 0.001\) cannot change on resume"):
        resume_changes(saved, load_rllib_config(TINY, ["ppo.lr=1e-3"]), RESUMABLE)


def test_the_cli_checks_an_rllib_config_before_writing_anything(tmp_path):
    run = tmp_path / "run"
    result = run_cli("train", "--config", TINY, "--run-dir", run, "ppo.num_epochs=0", timeout=120)
    assert result.returncode == 2 and result.stderr.strip() == "error: ppo.num_epochs: must be an integer >= 1, got 0"
    assert not run.exists()
    result = run_cli("train", "--run-dir", run, "--resume", timeout=120)
    assert result.returncode == 2 and "error:" in result.stderr


@pytest.mark.slow
def test_self_play_snapshots_reach_every_runners_environments(tmp_path):
    pytest.importorskip("ray.rllib")
    import allfives_agents
    import allfives_env
    import allfives_train
    from allfives_agents.tournament.cluster import connect
    from allfives_train.pool import OpponentPool
    from allfives_train.rllib import MODULE, Snapshot, build_algorithm, send_pool
    from allfives_train.rllib_config import load_rllib_config

    cfg = load_rllib_config(TINY, ["pool.self_play=1.0"])
    pool = OpponentPool(cfg.pool.heuristics, cfg.pool.self_play, cfg.pool.max_snapshots, tmp_path / "pool")
    ray, started = connect("local", 2, (allfives_env, allfives_agents, allfives_train))
    try:
        algo = build_algorithm(cfg, pool)
        metadata = {"obs_version": 1, "rules": cfg.game.rules().to_dict(), "module": MODULE}
        path = pool.add_snapshot(Snapshot(algo, metadata), 200, ".onnx")
        send_pool(algo, pool)

        def opponents(runner):
            return [[type(a).__name__ for a in env.unwrapped.env.opponent_agents] for env in runner.env.envs]

        seen = algo.env_runner_group.foreach_env_runner(opponents, local_env_runner=False)
        assert seen == [[["RandomAgent", "GreedyAgent", "OnnxAgent"]]]
        assert pool.entries() == (["random", "greedy", f"onnx:{path}"], [1.0, 1.0, 1.0])
        assert algo.train()["env_runners"]["num_env_steps_sampled"] >= 200
        algo.stop()
    finally:
        if started:
            ray.shutdown()
