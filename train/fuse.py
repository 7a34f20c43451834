"""Several trained networks of one layout fused into one wider network that plays as their ensemble.

K networks of the same layout (hidden layers, scorer width, observation, game) become one network
whose layers are K times as wide: the first hidden layer stacks theirs (all read the same
observation), each later one (and the scorer's context layer) is block-diagonal, the scorer's action
features stack, and the output layers average theirs. Each member's units see only their own, so the
fused network computes every member's hidden layers exactly, and its logits and value are the
members' mean. Its move (the legal move with the highest logit) is the ensemble's that sums the
members' log-probabilities over the legal moves, since a member's log-softmax differs from its
logits by the same amount for every move. It is an ordinary model zip of the project's policy:
it exports to ONNX, runs in ``NumpyPolicy`` and ``allfives.js``, and PPO may train it further.

``python -m allfives_train.fuse RUN_A RUN_B ... --out RUN`` writes a run folder (``final.zip``,
``best.zip``, ``config.yaml`` and ``card.json`` with the members) that ``allfives_train.ship`` ships;
a recipe's ``fuse`` stage (train/stages.py) does the same with its stages' networks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path

from .checkpoint import CheckpointError, atomic_write, check_model
from .config import ConfigError, TrainConfig, load_config

#: the scorer's tables of the game (not learned): the same in every member
CONSTANT = ("action_net.static", "action_net.end_of_action", "action_net.expose", "action_net.pip_of_tile")


def fuse_states(states: list[dict]) -> dict:
    """The fused state dict of the members' policy state dicts (torch tensors by SB3's names)."""
    import torch

    if len(states) < 2:
        raise ValueError(f"fusing needs at least 2 networks, got {len(states)}")
    keys = list(states[0])
    for i, state in enumerate(states[1:], 1):
        if list(state) != keys or any(state[k].shape != states[0][k].shape for k in keys):
            raise ValueError(f"network {i + 1} has another layout than the first (its layers or their sizes differ)")
    k = len(states)
    out = {}
    for key in keys:
        parts = [s[key].detach().float() for s in states]
        if key in CONSTANT:
            if any(not torch.equal(parts[0], p) for p in parts[1:]):
                raise ValueError(f"{key} differs between the networks: they were built for other games")
            out[key] = parts[0].clone()
        elif key.startswith("mlp_extractor.") or key.startswith("action_net.context.") or key == "action_net.features.weight":
            first_layer = key.endswith(".0.weight") and key.startswith("mlp_extractor.")
            if key.endswith(".bias") or first_layer or key == "action_net.features.weight":
                out[key] = torch.cat(parts, 0)  # stacked: each member's units on the same inputs
            else:
                out[key] = torch.block_diag(*parts)  # each member's units read their own
        elif key.endswith(".weight"):  # action_net.out, action_net.base, value_net, action_net (mlp): the mean of the outputs
            out[key] = torch.cat(parts, 1) / k
        elif key.endswith(".bias"):
            out[key] = sum(parts) / k
        else:
            raise ValueError(f"unknown parameter {key!r}: this network cannot be fused")
    return out


def fused_net(net, k: int):
    """A config's ``net`` for K fused members of ``net``: every width K times as large."""
    return dataclasses.replace(net, pi=[k * w for w in net.pi], vf=[k * w for w in net.vf], scorer_width=k * net.scorer_width)


def fused_config(config: TrainConfig, k: int) -> TrainConfig:
    """The config of K fused members of ``config``: ``fused_net`` widths, nothing to start from, no PPO."""
    return dataclasses.replace(config, net=fused_net(config.net, k), init_from="", total_steps=0)


def fuse_models(paths: list, config: TrainConfig, out: Path) -> dict:
    """Write the fused model of the model zips ``paths`` (each a network of ``config``) to ``out``;
    return its metadata. ``ValueError`` naming the file or the layer that does not fit."""
    import tempfile

    import torch
    from stable_baselines3.common.save_util import load_from_zip_file
    from stable_baselines3.common.vec_env import DummyVecEnv

    from allfives_agents.nets.policy import read_zip_metadata

    from .callbacks import save_model
    from .envs import make_env_fn
    from .train import new_model

    states, metas = [], []
    for path in paths:
        try:
            check_model(Path(path))
            states.append(load_from_zip_file(path, load_data=False, device="cpu")[1]["policy"])
            metas.append(read_zip_metadata(str(path)))
        except (CheckpointError, OSError, ValueError, KeyError, RuntimeError) as exc:
            raise ValueError(f"{path} is not a readable model zip: {str(exc)[:300]}") from None
    fused = fuse_states(states)
    wide = fused_config(config, len(paths))
    env = DummyVecEnv([make_env_fn(wide, 0, list(wide.pool.heuristics), list(wide.pool.heuristics.values()))])
    try:
        with tempfile.TemporaryDirectory() as tb:
            model = new_model(wide, env, tb)
    finally:
        env.close()
    target = model.policy.state_dict()
    wrong = [key for key in target if key not in fused or fused[key].shape != target[key].shape]
    if wrong:
        raise ValueError(f"the networks are not the config's (first difference: {wrong[0]}): fuse networks trained with this net.*")
    with torch.no_grad():
        model.policy.load_state_dict({key: value.to(target[key].dtype) for key, value in fused.items()})
    meta = dict(metas[0], steps=sum(m.get("steps", 0) for m in metas), wall_seconds=round(sum(m.get("wall_seconds", 0.0) for m in metas), 1),
                fused_from=[str(p) for p in paths])
    save_model(model, out, meta)
    return meta


def fuse_run(members: list, config: TrainConfig, run_dir, evaluate: bool = True) -> dict:
    """A run folder for the fused network of the run folders ``members`` (their ``final.zip``, each a
    network of ``config``): ``final.zip`` (and ``best.zip``, the same), ``config.yaml`` (``config``
    with the fused widths) and ``card.json`` with the members and, given ``evaluate``, the final
    evaluation of ``config.eval``. Returns the card."""
    from .config import CONFIG_NAME, to_yaml
    from .evaluate import card_rows, final_evaluation

    started = time.time()
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    members = [Path(m) for m in members]
    cards = [_member_card(m) for m in members]
    wide = fused_config(config, len(members))
    meta = fuse_models([m / "final.zip" for m in members], config, run_dir / "final.zip")
    shutil.copyfile(run_dir / "final.zip", run_dir / "best.zip")
    atomic_write(run_dir / CONFIG_NAME, to_yaml(wide).encode())
    rules = wide.game.rules()
    rows = []
    if evaluate:
        rows = final_evaluation(f"ppo:{run_dir / 'final.zip'}", wide, rules, run_dir, run_dir / "final.zip")
    card = {
        "name": config.name,
        "model": "final.zip",
        "steps": 0,
        "wall_seconds": round(time.time() - started, 1),
        "obs_version": meta["obs_version"],
        "rules": rules.to_dict(),
        "fused_from": [{"run": str(m), "steps": c["steps"], "wall_seconds": c["wall_seconds"]} for m, c in zip(members, cards)],
        "final_evaluation": card_rows(rows),
        "config": dataclasses.asdict(wide),
    }
    atomic_write(run_dir / "card.json", (json.dumps(card, indent=1) + "\n").encode())
    return card


def _member_card(folder: Path) -> dict:
    path = folder / "card.json"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
        card["steps"], card["wall_seconds"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{folder} is not a finished run ({path}: {type(exc).__name__}: {exc})") from None
    if not (folder / "final.zip").is_file():
        raise ValueError(f"{folder} is not a finished run: it has no final.zip")
    return card


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m allfives_train.fuse", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="finished runs of one config (their final.zip)")
    parser.add_argument("--out", required=True, help="the run folder to write (must not exist or be empty)")
    parser.add_argument("--no-eval", action="store_true", help="skip the final evaluation")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"error: {out} is not empty: pass another --out", file=sys.stderr)
        return 2
    try:
        config = load_config(Path(args.runs[0]) / "config.yaml")
        card = fuse_run(args.runs, config, out, evaluate=not args.no_eval)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in card["final_evaluation"]:
        print(f"{row['opponent']:<10} {row['games']:>6} games  {row['a_win_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
    print(f"fused {len(args.runs)} networks into {out / 'final.zip'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
