"""Recipes of stages (train/stages.py): one config trains several runs, each from the last one's
network, resumes where it stopped, and leaves a run that ships like any other."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from allfives_train.checkpoint import CheckpointError
from allfives_train.config import ConfigError, load_config
from allfives_train.stages import RECIPE_NAME, load_recipe, saved_recipe, stages_of, train_stages
from helpers import run_cli
from test_train import ROOT, TINY

#: the tiny config's network and observation, in every stage (a stage may not change them)
STAGES = [
    {"name": "ppo", "set": {"total_steps": 256}},
    {"name": "clone", "set": {"imitate.teacher": "expert", "imitate.games": 6, "imitate.rounds": 1, "imitate.epochs": 1, "total_steps": 0}},
    {"name": "polish", "set": {"lr_decay": "linear", "total_steps": 256}},
]


def recipe_file(tmp_path, stages=STAGES, **top) -> Path:
    (tmp_path / "tiny.yaml").write_text(TINY.read_text())
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({"base": "tiny.yaml", "net": {"obs_version": 2}, **top, "stages": stages}))
    return path


@pytest.mark.parametrize("players", [3, 4])
def test_a_shipped_recipe_is_the_three_commands_in_its_model_card(players):
    import shlex

    recipe, stages = load_recipe(ROOT / "configs" / f"allfives_{players}p.yaml")
    assert [s.name for s in stages] == ["ppo", "expert_iteration", "polish"]
    commands = json.loads((ROOT / "models" / f"allfives_{players}p.json").read_text())["recipe"]
    assert len(commands) == 4 and commands[3].startswith("python -m allfives_train.ship")
    for stage, command in zip(stages, commands):
        words = shlex.split(command)
        base = words[words.index("--config") + 1]
        overrides = [w for w in words if "=" in w and not w.startswith("init_from=")]  # a stage starts from the one before
        want = load_config(ROOT / base, overrides)
        assert stage.config.imitate == dataclasses.replace(want.imitate, dataset=stage.config.imitate.dataset), stage.name
        assert stage.config == dataclasses.replace(want, imitate=stage.config.imitate), stage.name
    teacher = stages[1].config.imitate
    assert (teacher.teacher, teacher.target, teacher.dataset) == ("strong", "visits", f"runs/teacher_{players}p")


@pytest.mark.slow
def test_a_recipe_trains_its_stages_each_from_the_last_and_ships_as_a_run(tmp_path):
    run_dir = tmp_path / "run"
    stages = [*STAGES, {"name": "ensemble", "fuse": ["clone", "polish"]}]
    result = run_cli("train", "--config", recipe_file(tmp_path, stages), "--run-dir", run_dir, "--no-progress", timeout=900)
    assert result.returncode == 0, result.stderr
    folders = ["1-ppo", "2-clone", "3-polish", "4-ensemble"]
    configs = [yaml.safe_load((run_dir / f / "config.yaml").read_text()) for f in folders]
    assert [c["init_from"] for c in configs] == ["", str(run_dir / "1-ppo" / "final.zip"), str(run_dir / "2-clone" / "final.zip"), ""]
    assert [c["total_steps"] for c in configs] == [256, 0, 256, 0] and configs[2]["lr_decay"] == "linear"
    assert configs[3]["net"]["pi"] == [64] and configs[3]["net"]["scorer_width"] == 2 * configs[0]["net"]["scorer_width"]
    for name in ("final.zip", "best.zip", "config.yaml"):
        assert (run_dir / name).read_bytes() == (run_dir / "4-ensemble" / name).read_bytes()
    card = json.loads((run_dir / "card.json").read_text())
    cards = [json.loads((run_dir / f / "card.json").read_text()) for f in folders]
    assert [s["name"] for s in card["stages"]] == ["ppo", "clone", "polish", "ensemble"] and card["stages"][3]["fused"] == ["clone", "polish"]
    assert card["steps"] == sum(c["steps"] for c in cards) and cards[1]["imitation"][0]["positions"] > 0
    assert card["stages"][1]["wall_seconds"] >= cards[1]["imitation"][0]["seconds"]
    assert card["final_evaluation"] == cards[3]["final_evaluation"] and card["recipe"].startswith("allfives train --config ")
    assert "trained 4 stages" in result.stdout
    # the fused network plays the mean of its members' logits
    from allfives_agents.nets.policy import NumpyPolicy

    fused, members = NumpyPolicy.load(run_dir / "final.zip"), [NumpyPolicy.load(run_dir / f / "final.zip") for f in folders[1:3]]
    obs = (np.random.default_rng(1).random((50, fused.obs_size)) < 0.2).astype(np.float32)
    np.testing.assert_allclose(fused.logits(obs), np.mean([m.logits(obs) for m in members], 0), atol=1e-4)

    from allfives_train.ship import ship

    shipped = ship(run_dir, "tiny_recipe", games=4, out_dir=tmp_path / "models")
    assert shipped["trained_steps"] == card["steps"] and shipped["onnx_parity"]["same_action"] == 1.0
    assert shipped["recipe"] == card["recipe"] and [s["name"] for s in shipped["stages"]] == ["ppo", "clone", "polish", "ensemble"]


def _fake_train(calls, stop_at=None):
    """A stand-in trainer writing what a finished run leaves; raises KeyboardInterrupt at stage ``stop_at``."""

    def train(config, folder, resume, progress):
        folder = Path(folder)
        calls.append((folder.name, resume, config.init_from))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.yaml").write_text("name: x\n")
        if folder.name == stop_at:
            raise KeyboardInterrupt
        for name in ("final.zip", "best.zip"):
            (folder / name).write_bytes(folder.name.encode())
        card = {"steps": config.total_steps, "wall_seconds": 1.5, "imitation": [{"seconds": 2.0}] if config.imitate.teacher else None,
                "final_evaluation": [{"opponent": "greedy", "a_win_rate": 0.5}], "name": "tiny"}
        (folder / "card.json").write_text(json.dumps(card))

    return train


def test_a_stopped_recipe_resumes_at_the_stage_it_stopped_in_and_keeps_the_finished_ones(tmp_path):
    recipe, stages = load_recipe(recipe_file(tmp_path))
    run_dir, calls = tmp_path / "run", []
    with pytest.raises(KeyboardInterrupt):
        train_stages(recipe, stages, run_dir, train=_fake_train(calls, stop_at="2-clone"))
    assert [c[0] for c in calls] == ["1-ppo", "2-clone"] and not (run_dir / "card.json").exists()
    with pytest.raises(CheckpointError, match="not empty: pass --resume"):
        train_stages(recipe, stages, run_dir, train=_fake_train([]))

    calls.clear()
    saved = saved_recipe(run_dir)
    card = train_stages(saved, stages_of(saved), run_dir, resume=True, train=_fake_train(calls))
    # the finished stage is kept; the one stopped before its first checkpoint starts again from stage 1's model
    assert calls == [("2-clone", False, str(run_dir / "1-ppo" / "final.zip")), ("3-polish", False, str(run_dir / "2-clone" / "final.zip"))]
    assert (run_dir / "final.zip").read_bytes() == b"3-polish"
    assert [s["wall_seconds"] for s in card["stages"]] == [1.5, 3.5, 1.5] and card["wall_seconds"] == 6.5
    assert card["steps"] == 256 + 0 + 256 and card["final_evaluation"][0]["a_win_rate"] == 0.5

    calls.clear()
    train_stages(saved, stages_of(saved), run_dir, resume=True, train=_fake_train(calls))
    assert calls == []


def test_resume_needs_a_run_of_stages(tmp_path):
    recipe, stages = load_recipe(recipe_file(tmp_path))
    with pytest.raises(CheckpointError, match=f"holds no {RECIPE_NAME}"):
        train_stages(recipe, stages, tmp_path / "nothing", resume=True, train=_fake_train([]))


@pytest.mark.parametrize(
    "stages, top, message",
    [
        ([], {}, r"stages: expected a list of at least one stage"),
        (["ppo"], {}, r"stages\[0\]: expected a mapping with name and set"),
        ([{"name": "a", "steps": 3}], {}, r"stages\[0\]: unknown key 'steps'"),
        ([{"name": "a/b"}], {}, r"stages\[0\]: name must be a plain name"),
        ([{"name": "a"}, {"name": "a"}], {}, r"stages\[1\]: another stage is named 'a'"),
        ([{"name": "a"}, {"name": "b", "set": {"init_from": "x.zip"}}], {}, r"stages\[1\] \(b\): sets init_from"),
        ([{"name": "a"}, {"name": "b", "set": {"net.pi": [64]}}], {}, r"stages\[1\] \(b\): changes net \(\['pi: \[32\] -> \[64\]'\]\)"),
        ([{"name": "a"}, {"name": "b", "set": {"game.num_players": 3}}], {}, r"stages\[1\] \(b\): changes game"),
        ([{"name": "a", "set": {"ppo.gamma": 1.5}}], {}, r"stages\[0\] \(a\): ppo.gamma: must be in \(0, 1\]"),
        ([{"name": "a", "set": "fast"}], {}, r"stages\[0\] \(a\): set must map dotted keys to values"),
        ([{"name": "a"}], {"total_stepz": 5}, r"stages\[0\] \(a\): unknown key 'total_stepz'"),
        ([{"name": "a", "from": "a"}], {}, r"stages\[0\] \(a\): the first stage starts from init_from or from nothing"),
        ([{"name": "a"}, {"name": "b", "from": "c"}], {}, r"stages\[1\] \(b\): from 'c' is not a stage before it \(a\)"),
        ([{"name": "a"}, {"name": "b", "fuse": ["a"]}], {}, r"fuse must list at least 2 different stages before it"),
        ([{"name": "a"}, {"name": "b", "fuse": ["a", "a"]}], {}, r"fuse must list at least 2 different stages"),
        ([{"name": "a"}, {"name": "b"}, {"name": "c", "fuse": ["a", "b"], "set": {"seed": 1}}], {}, r"a fuse stage has a name and the stages it fuses"),
        ([{"name": "a"}, {"name": "b", "fuse": ["a", "z"]}], {}, r"fuse 'z' is not a stage before it"),
        ([{"name": "a"}, {"name": "b"}, {"name": "c", "fuse": ["a", "b"]}, {"name": "d"}, {"name": "e", "fuse": ["c", "d"]}], {},
         r"stages\[4\] \(e\): fuse takes networks of the recipe's own layout"),
    ],
)
def test_a_bad_recipe_is_refused_naming_the_stage_before_anything_runs(tmp_path, stages, top, message):
    with pytest.raises(ConfigError, match=message):
        load_recipe(recipe_file(tmp_path, stages, **top))


def test_a_recipe_is_not_one_runs_config_and_its_base_is_not_a_recipe(tmp_path):
    path = recipe_file(tmp_path)
    with pytest.raises(ConfigError, match="is a recipe of several runs"):
        load_config(path)
    (tmp_path / "outer.yaml").write_text(yaml.safe_dump({"base": "recipe.yaml", "stages": [{"name": "a"}]}))
    with pytest.raises(ConfigError, match="must be one run's config, not a recipe"):
        load_recipe(tmp_path / "outer.yaml")
    (tmp_path / "lost.yaml").write_text(yaml.safe_dump({"base": "missing.yaml", "stages": [{"name": "a"}]}))
    with pytest.raises(ConfigError, match="config file not found"):
        load_recipe(tmp_path / "lost.yaml")


def test_the_command_lines_overrides_reach_every_stage_and_a_bad_one_is_named(tmp_path):
    _, stages = load_recipe(recipe_file(tmp_path), ["seed=5", "eval.final_games=6"])
    assert [(s.config.seed, s.config.eval.final_games) for s in stages] == [(5, 6)] * 3
    with pytest.raises(ConfigError, match="must be key=value"):
        load_recipe(recipe_file(tmp_path), ["seed"])


def test_a_resumed_run_of_stages_takes_no_new_config_or_overrides(tmp_path):
    recipe, stages = load_recipe(recipe_file(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        train_stages(recipe, stages, tmp_path / "run", train=_fake_train([], stop_at="1-ppo"))
    result = run_cli("train", "--resume", "--run-dir", tmp_path / "run", "total_steps=9")
    assert result.returncode == 2 and "resumes with its saved recipe" in result.stderr and "Traceback" not in result.stderr


def test_stages_branch_with_from_and_a_stage_after_a_fuse_has_the_fused_widths(tmp_path):
    stages = [{"name": "a"}, {"name": "b"}, {"name": "c", "from": "a"}, {"name": "ab", "fuse": ["a", "b", "c"]}, {"name": "more"}]
    recipe, got = load_recipe(recipe_file(tmp_path, stages))
    assert [(s.source, s.members) for s in got] == [(None, ()), (0, ()), (0, ()), (None, (0, 1, 2)), (3, ())]
    assert got[4].config.net.pi == [96] and got[4].config.net.scorer_width == 3 * got[0].config.net.scorer_width
    calls = []
    run_dir = tmp_path / "run"
    with pytest.raises(CheckpointError, match=r"stage 4-ab: .*is not a readable model zip"):  # the stand-in trainer's models are not zips
        train_stages(recipe, got, run_dir, train=_fake_train(calls))
    assert [(c[0], c[2]) for c in calls] == [("1-a", ""), ("2-b", str(run_dir / "1-a" / "final.zip")), ("3-c", str(run_dir / "1-a" / "final.zip"))]
