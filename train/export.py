"""Export a trained policy to ONNX: observation and action mask in, logits and the chosen action out.

The graph has two inputs, ``observation`` (float32, ``[N, obs_size]``, the vector of
docs/observation.md in the version the policy was trained on) and ``action_mask`` (float32, ``[N, 112]``, 1 for legal actions), and three
outputs: ``logits`` (the raw policy logits), ``masked_logits`` (illegal actions set to -1e9) and
``action`` (int64, the legal action with the highest logit). The masking is inside the graph, so a
runtime only has to build the two inputs. The ONNX metadata holds ``obs_version``, ``obs_size``,
``num_actions``, ``rules`` (JSON: the rules options, or ``null`` when the model does not record
them; a model whose recorded rules are invalid is refused) and ``source``.

``export_onnx`` replaces ``out_path`` if it exists (``allfives export`` refuses unless ``--force``).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

from allfives_env.engine.rules import Rules
from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import obs_version_of_size

MASKED = -1e9


class ExportError(ValueError):
    """The model cannot be exported (unreadable, or not a policy this project knows)."""


def masked_outputs(logits, action_mask):
    """The graph's outputs from the raw ``logits``: them, masked (illegal = ``MASKED``), the legal argmax."""
    import torch

    masked = torch.where(action_mask > 0.5, logits, torch.full_like(logits, MASKED))
    return logits, masked, torch.argmax(masked, dim=-1)


def _actor_module(policy):
    from torch import nn

    class Actor(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = policy.pi_features_extractor
            self.extractor = policy.mlp_extractor
            self.action_net = policy.action_net

        def forward(self, observation, action_mask):
            latent = self.extractor.forward_actor(self.features(observation))
            return masked_outputs(self.action_net(latent), action_mask)

    return Actor().eval()


def export_onnx(model_path, out_path, opset: int = 17) -> dict:
    """Write ``out_path`` (ONNX) from an SB3 MaskablePPO zip; return the metadata written."""
    from allfives_agents.nets.policy import PolicyFileError, check_layout, read_zip_metadata

    model_path = Path(model_path)
    if not model_path.exists():
        raise ExportError(f"model file not found: {model_path}")
    try:
        metadata = read_zip_metadata(str(model_path))
        from allfives_train.network import load_ppo

        model = load_ppo(model_path, device="cpu")
    except PolicyFileError as exc:
        raise ExportError(str(exc)) from None
    except Exception as exc:
        raise ExportError(f"not a readable MaskablePPO model: {model_path} ({type(exc).__name__}: {exc})") from None
    from allfives_train.network import in_float32, view_size

    obs_size = view_size(model.policy)  # a privileged critic's extra values are not the policy's: the graph takes the view
    try:
        check_layout(metadata, obs_size, str(model_path))
    except PolicyFileError as exc:
        raise ExportError(str(exc)) from None
    if metadata.get("rules") is not None:
        try:
            Rules.from_dict(metadata["rules"])
        except (TypeError, ValueError) as exc:
            raise ExportError(f"{model_path}: the 'rules' in its metadata are not valid rules: {exc}") from None
    source = {"obs_version": metadata.get("obs_version", obs_version_of_size(obs_size)), "rules": metadata.get("rules"), "source": model_path.name}
    return write_onnx(_actor_module(in_float32(model.policy)), obs_size, source, out_path, opset)



def write_onnx(actor, obs_size: int, about: dict, out_path, opset: int = 17, producer: str = "allfives export") -> dict:
    """Trace ``actor`` (``(observation, action_mask) -> (logits, masked_logits, action)``) into the ONNX
    contract of docs/frontends.md at ``out_path`` (atomically), with the metadata built from ``about``
    (``obs_version``, ``rules``, ``source``); return the metadata written."""
    import onnx
    import torch

    obs = torch.zeros((1, obs_size), dtype=torch.float32)
    mask = torch.ones((1, NUM_ACTIONS), dtype=torch.float32)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    # the TorchScript exporter: the newer torch.export one needs onnxscript and gains nothing here
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            actor,
            (obs, mask),
            str(tmp),
            input_names=["observation", "action_mask"],
            output_names=["logits", "masked_logits", "action"],
            dynamic_axes={name: {0: "batch"} for name in ("observation", "action_mask", "logits", "masked_logits", "action")},
            opset_version=opset,
            dynamo=False,
        )
    info = {
        "obs_version": str(about["obs_version"]),
        "obs_size": str(obs_size),
        "num_actions": str(NUM_ACTIONS),
        "rules": json.dumps(about.get("rules")),
        "source": about["source"],
        "producer": producer,
        "inputs": "observation float32 [N, obs_size]; action_mask float32 [N, num_actions] (1 = legal)",
        "outputs": "logits [N, num_actions]; masked_logits (illegal = -1e9); action int64 [N]",
    }
    graph = onnx.load(str(tmp))
    for key, value in info.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(graph)
    onnx.save(graph, str(tmp))
    os.replace(tmp, out_path)
    return info
