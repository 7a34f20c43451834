"""``allfives train``: train a bot from a YAML config, evaluate it against the baselines, resume runs.

The config's ``trainer`` key picks the trainer: absent or ``sb3``, SB3's MaskablePPO (train/train.py);
``rllib``, RLlib's PPO on Ray (train/rllib.py, docs/scale.md). Both take the same flags.
"""

from __future__ import annotations

from pathlib import Path

from .common import CLIError


def add_parser(sub, name: str) -> None:
    p = sub.add_parser(name, help="train a bot with self-play MaskablePPO (or RLlib PPO: trainer: rllib) from a YAML config")
    p.add_argument("--config", help="YAML config (see configs/); with --resume the run's saved config is used, and a --config given must agree with it")
    p.add_argument("--run-dir", help="where checkpoints, TensorBoard logs and models go (default runs/NAME)")
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint of --run-dir, with its saved config")
    p.add_argument("--seed", type=int, help="override the config's seed")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="config overrides, e.g. total_steps=50000 ppo.learning_rate=1e-4 (on --resume: total_steps, checkpoint_every, eval.*, ... only; see docs/training.md)")
    p.set_defaults(run=run)


def _trainer(args, overrides) -> str:
    """``sb3`` or ``rllib``: the ``trainer`` key of the config (on a resume: of the run's saved config)."""
    from allfives_train.config import read_data, trainer_of

    if args.resume and args.run_dir and (Path(args.run_dir) / "config.yaml").is_file():
        return trainer_of(read_data(Path(args.run_dir) / "config.yaml"))
    return trainer_of(read_data(args.config, overrides)) if args.config else "sb3"


def run(args) -> int:
    from allfives_train.checkpoint import CheckpointError
    from allfives_train.config import ConfigError, load_config
    from allfives_train.export import ExportError

    overrides = list(args.overrides)
    if args.seed is not None:
        overrides.append(f"seed={args.seed}")
    if _staged(args, overrides):
        return _run_stages(args, overrides)
    try:
        if _trainer(args, overrides) == "rllib":
            from allfives_train.rllib import check_run_dir, resume_config, train_rllib as train
            from allfives_train.rllib_config import load_rllib_config as load_config
        else:
            from allfives_train.train import check_run_dir, resume_config, train
    except ConfigError as exc:
        raise CLIError(str(exc)) from None
    try:
        if args.resume:
            if not args.run_dir:
                raise CLIError("--resume needs --run-dir (the run to continue)")
            run_dir = args.run_dir
            check_run_dir(run_dir, resume=True)
            config = resume_config(run_dir, args.config, overrides)
        else:
            if not args.config:
                raise CLIError("--config is required (e.g. --config configs/quickstart_2p.yaml)")
            config = load_config(args.config, overrides)
            run_dir = args.run_dir or str(Path("runs") / config.name)
            check_run_dir(run_dir, resume=False)
        card = train(config, run_dir, args.resume, not args.no_progress)
    except (ConfigError, CheckpointError, ExportError) as exc:
        raise CLIError(str(exc)) from None
    files = "final.onnx, checkpoints/, card.json" if card.get("trainer") == "rllib" else "final.zip, best.zip, card.json"
    print(f"trained {card['steps']} steps in {card['wall_seconds']:.0f} s; models in {run_dir} ({files})")
    return 0


def _staged(args, overrides) -> bool:
    """Whether this is a recipe of stages (train/stages.py): a resumed run that saved one, or a config with ``stages``."""
    from allfives_train.config import ConfigError, read_data
    from allfives_train.stages import is_recipe, is_staged_run

    if args.resume and args.run_dir:
        return is_staged_run(args.run_dir)
    try:
        return bool(args.config) and is_recipe(read_data(args.config))
    except ConfigError as exc:
        raise CLIError(str(exc)) from None


def _run_stages(args, overrides) -> int:
    from allfives_train.checkpoint import CheckpointError
    from allfives_train.config import ConfigError
    from allfives_train.export import ExportError
    from allfives_train.stages import load_recipe, saved_recipe, stages_of, train_stages

    try:
        if args.resume:
            if args.config or overrides:
                raise CLIError(f"{args.run_dir} is a run of stages: it resumes with its saved recipe; pass only --resume --run-dir")
            recipe = saved_recipe(args.run_dir)
            stages = stages_of(recipe)
            run_dir = args.run_dir
        else:
            recipe, stages = load_recipe(args.config, overrides)
            run_dir = args.run_dir or str(Path("runs") / stages[0].config.name)
        card = train_stages(recipe, stages, run_dir, args.resume, not args.no_progress)
    except (ConfigError, CheckpointError, ExportError) as exc:
        raise CLIError(str(exc)) from None
    done = ", ".join(f"{s['name']} {s['steps']} steps in {s['wall_seconds']:.0f} s" for s in card["stages"])
    print(f"trained {len(card['stages'])} stages ({done}); models in {run_dir} (final.zip, best.zip, card.json)")
    return 0
