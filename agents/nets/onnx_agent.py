"""``onnx:PATH``: a policy exported with ``allfives export``, run by onnxruntime (no torch, no SB3).

The observation is built by the numpy encoder of ``allfives_env.observation``; the mask is the
second input of the graph, which returns the chosen legal action directly. The file's metadata
(written by ``allfives export``) must give ``obs_version`` and ``obs_size`` matching this package,
and ``rules`` as JSON (an object of rules options, or ``null`` when unknown); a file that lacks them
or has them malformed is refused with a ``PolicyFileError`` naming the file and the key.
"""

from __future__ import annotations

import json
import os

import numpy as np

from allfives_env.engine import Game
from allfives_env.engine.rules import Rules
from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_SIZES, check_layout, encoder

from ..base import Agent
from .policy import PolicyFileError, check_policy_file


class OnnxPolicy:
    """An exported policy: ``run(obs, mask)`` -> (logits, masked logits, actions), batched."""

    def __init__(self, path) -> None:
        path = os.fspath(path)
        check_policy_file(path)
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise PolicyFileError(f"onnx agents need onnxruntime (pip install onnxruntime): {exc}") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            raise PolicyFileError(f"not a readable ONNX policy: {path} ({type(exc).__name__}: {exc})") from None
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        missing = [key for key in ("obs_version", "obs_size") if key not in self.metadata]
        if missing:
            raise PolicyFileError(
                f"{path} has no {' or '.join(repr(k) for k in missing)} in its ONNX metadata, so the observation "
                f"layout it takes is unknown (this package builds sizes {OBS_SIZES} by OBS_VERSION); "
                "export the policy with 'allfives export'"
            )
        version, size = (_metadata_int(path, self.metadata, key) for key in ("obs_version", "obs_size"))
        problem = check_layout(version, size)
        if problem is not None:
            raise PolicyFileError(f"{path} was exported for {problem}")
        self.obs_version, self.obs_size = version, size
        self.encode = encoder(version)
        self.rules = _metadata_rules(path, self.metadata.get("rules"))
        self.path = path
        self._check_contract()

    def _check_contract(self) -> None:
        """``PolicyFileError`` unless the graph keeps the contract of ``allfives export``: inputs
        ``observation (N, obs_size)`` and ``action_mask (N, 112)``; outputs logits and masked logits
        ``(N, 112)``, finite, and a legal action per row. Checked once, on a real position, so that a
        policy that cannot answer is refused at load rather than failing every move."""
        path = self.path
        inputs = sorted(i.name for i in self.session.get_inputs())
        if inputs != ["action_mask", "observation"]:
            raise PolicyFileError(f"{path}: the graph's inputs are {inputs}; the contract is 'observation' (N, {self.obs_size}) "
                                  f"and 'action_mask' (N, {NUM_ACTIONS}): export the policy with 'allfives export'")
        outputs = [o.name for o in self.session.get_outputs()]
        if len(outputs) != 3:
            raise PolicyFileError(f"{path}: the graph has {len(outputs)} output(s) {outputs}; the contract is three: "
                                  "logits, masked logits and the action")
        game = Game(Rules.from_dict(self.rules) if self.rules else Rules.make(), seed=0)
        view = game.view(game.current_player)
        mask = np.zeros((1, NUM_ACTIONS), np.float32)
        mask[0, view.legal_actions] = 1.0
        try:
            logits, masked, action = (np.asarray(x) for x in self.run(self.encode(view)[None], mask))
        except Exception as exc:  # onnxruntime's own errors: shapes or types the graph does not take
            raise PolicyFileError(f"{path}: the graph does not run on an observation of the contract "
                                  f"({type(exc).__name__}: {str(exc)[:200]})") from None
        if logits.shape != (1, NUM_ACTIONS) or masked.shape != (1, NUM_ACTIONS) or action.shape != (1,):
            raise PolicyFileError(f"{path}: the graph answers shapes {logits.shape}, {masked.shape}, {action.shape}; "
                                  f"the contract is (N, {NUM_ACTIONS}), (N, {NUM_ACTIONS}), (N,)")
        if not np.all(np.isfinite(logits)):
            raise PolicyFileError(f"{path}: the graph's logits are not finite (NaN or infinite) on a start position")
        if not np.issubdtype(action.dtype, np.integer) or int(action[0]) not in view.legal_actions:
            raise PolicyFileError(f"{path}: the graph chose action {action[0]!r}, not a legal one, on a start position")

    def run(self, obs: np.ndarray, mask: np.ndarray):
        obs = np.asarray(obs, np.float32).reshape(-1, self.obs_size)
        mask = np.asarray(mask, np.float32).reshape(-1, NUM_ACTIONS)
        return self.session.run(None, {"observation": obs, "action_mask": mask})

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Raw action logits for one observation ``(obs_size,)`` or a batch ``(N, obs_size)`` (as ``NumpyPolicy``)."""
        x = np.asarray(obs, np.float32)
        batch = x.reshape(-1, self.obs_size)
        out = self.run(batch, np.ones((len(batch), NUM_ACTIONS), np.float32))[0]
        return out[0] if x.ndim == 1 else out


def _metadata_int(path: str, metadata: dict, key: str) -> int:
    text = metadata[key]
    try:
        return int(text)
    except ValueError:
        raise PolicyFileError(f"{path}: the ONNX metadata {key!r} must be an integer, got {text!r}") from None


def _metadata_rules(path: str, text: str | None) -> dict | None:
    """The ``rules`` metadata as a dict of rules options (``None``: absent or ``null``), checked."""
    if not text:
        return None
    try:
        rules = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than a JSON reader goes
        raise PolicyFileError(f"{path}: the ONNX metadata 'rules' is not valid JSON ({type(exc).__name__}): {text[:80]!r}") from None
    if rules is None:
        return None
    try:
        Rules.from_dict(rules)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PolicyFileError(f"{path}: the ONNX metadata 'rules' are not valid rules: {str(exc)[:200]}") from None
    return rules


class OnnxAgent(Agent):
    """Plays the action the exported policy picks (the legal action with the highest logit)."""

    name = "onnx"

    def __init__(self, path, seed: int | None = None) -> None:
        super().__init__(seed)
        self.policy = OnnxPolicy(path)
        self.name = f"onnx:{path}"
        self._mask = np.zeros((1, NUM_ACTIONS), np.float32)

    def act(self, view) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        mask = self._mask
        mask.fill(0.0)
        mask[0, legal] = 1.0
        _, _, action = self.policy.run(self.policy.encode(view)[None], mask)
        return int(action[0])
