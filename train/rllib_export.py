"""The RLlib trainer's policy in the ONNX contract of docs/frontends.md, like ``allfives export``'s.

A checkpoint of train/rllib.py is a folder: RLlib's own files and ``allfives.json`` (the
observation version, the rules, the steps). ``export_rllib(CHECKPOINT, OUT.onnx)`` loads the
learner's module from it (``load_module``) and writes the same graph as an SB3 export: observation
and action mask in; logits, masked logits and the chosen legal action out; the same metadata. So
``onnx:OUT.onnx`` plays in tournaments, ``allfives serve`` and ``allfives play`` unchanged.
``check_rllib_parity`` compares the ONNX logits with the torch module's on real positions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from allfives_env.engine import Rules
from allfives_env.engine.tiles import NUM_ACTIONS

from .export import ExportError, masked_outputs, write_onnx
from .parity import sample_observations

#: the project's file in each checkpoint folder of the RLlib trainer
METADATA_NAME = "allfives.json"
#: where RLlib keeps the learner's module inside a checkpoint of the algorithm
MODULE_PATH = ("learner_group", "learner", "rl_module")


def is_rllib_checkpoint(path) -> bool:
    """Whether ``path`` is a checkpoint folder of the RLlib trainer."""
    return (Path(path) / METADATA_NAME).is_file()


def rllib_checkpoint(path) -> Path:
    """``path`` if it is a checkpoint folder of the RLlib trainer, or the latest checkpoint of a run folder
    of it (``RUN/checkpoints/latest.json``); ``ExportError`` otherwise."""
    path = Path(path)
    if is_rllib_checkpoint(path):
        return path
    latest = path / "checkpoints" / "latest.json"
    try:
        found = path / "checkpoints" / json.loads(latest.read_text(encoding="utf-8"))["checkpoint"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ExportError(f"{path} is a folder but neither a checkpoint of the rllib trainer nor a run folder of one") from None
    if not is_rllib_checkpoint(found):
        raise ExportError(f"{latest} names {found}, which is not a complete checkpoint")
    return found


def read_metadata(checkpoint) -> dict:
    """``allfives.json`` of a checkpoint; ``ExportError`` naming the folder if it is missing or broken."""
    path = Path(checkpoint) / METADATA_NAME
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"{checkpoint} is not a checkpoint of the rllib trainer ({path}: {exc})") from None
    if not isinstance(metadata, dict) or not {"obs_version", "rules", "module"} <= set(metadata):
        raise ExportError(f"{path} lacks obs_version, rules or module")
    return metadata


def load_module(checkpoint):
    """The learner's torch RLModule from a checkpoint folder (``ExportError`` if it cannot be read)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    metadata = read_metadata(checkpoint)
    path = Path(checkpoint).resolve().joinpath(*MODULE_PATH, metadata["module"])  # Ray reads a relative path as a URI
    try:
        return RLModule.from_checkpoint(path).eval()
    except Exception as exc:
        raise ExportError(f"cannot load the module of {checkpoint} ({type(exc).__name__}: {exc})") from None


def actor_module(module):
    """``(observation, action_mask) -> (logits, masked_logits, action)`` from an RLlib PPO module's actor."""
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.base import ACTOR, ENCODER_OUT
    from torch import nn

    class Actor(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = getattr(module.encoder, "actor_encoder", None) or module.encoder
            self.pi = module.pi

        def forward(self, observation, action_mask):
            out = self.encoder({Columns.OBS: observation})[ENCODER_OUT]
            return masked_outputs(self.pi(out[ACTOR] if isinstance(out, dict) else out), action_mask)

    return Actor().eval()


def export_rllib(checkpoint, out_path, opset: int = 17) -> dict:
    """Write ``out_path`` (ONNX) from a checkpoint folder of the RLlib trainer; return the metadata written."""
    from allfives_env.observation import OBS_SIZES

    checkpoint = Path(checkpoint)
    metadata = read_metadata(checkpoint)
    if metadata["rules"] is not None:
        try:
            Rules.from_dict(metadata["rules"])
        except (TypeError, ValueError) as exc:
            raise ExportError(f"{checkpoint}: the rules in {METADATA_NAME} are not valid rules: {exc}") from None
    about = {"obs_version": metadata["obs_version"], "rules": metadata["rules"], "source": checkpoint.name}
    actor = actor_module(load_module(checkpoint))
    return write_onnx(actor, OBS_SIZES[int(metadata["obs_version"])], about, out_path, opset, producer="allfives export (rllib)")


def torch_logits(module, obs: np.ndarray) -> np.ndarray:
    """The logits of an RLlib module's own inference pass (every action legal, so nothing masked)."""
    import torch
    from ray.rllib.core.columns import Columns

    batch = {Columns.OBS: {"observations": torch.as_tensor(obs), "action_mask": torch.ones((len(obs), NUM_ACTIONS))}}
    with torch.no_grad():
        return module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()


def check_rllib_parity(checkpoint, onnx_path, count: int = 1000, seed: int = 0) -> dict:
    """Max |ONNX - torch| logit difference, the share of identical masked argmax choices, all legal."""
    from allfives_agents.nets.onnx_agent import OnnxPolicy

    onnx = OnnxPolicy(onnx_path)
    rules = Rules.from_dict(onnx.rules) if onnx.rules else Rules.make()
    obs, masks = sample_observations(count, rules, seed, onnx.obs_version)
    reference = torch_logits(load_module(checkpoint), obs)
    logits, _, actions = onnx.run(obs, masks)
    expected = np.argmax(np.where(masks > 0, reference, -np.inf), axis=-1)
    return {
        "observations": int(len(obs)),
        "max_abs_diff": float(np.abs(logits - reference).max()),
        "same_action": float((actions == expected).mean()),
        "all_legal": bool((masks[np.arange(len(actions)), actions] > 0).all()),
    }
