"""Check an exported ONNX policy against the torch policy it came from, on observations of real games."""

from __future__ import annotations

import random

import numpy as np

from allfives_env.engine import Game, Rules
from allfives_env.observation import action_mask, encoder


def sample_observations(count: int, rules: Rules | None = None, seed: int = 0, obs_version: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``count`` observations (of ``obs_version``) and masks of the players to act in random games."""
    rules = rules or Rules.make()
    encode = encoder(obs_version)
    rng = random.Random(seed)
    obs, masks = [], []
    game_seed = seed
    while len(obs) < count:
        game = Game(rules, game_seed)
        game_seed += 1
        while not game.over and len(obs) < count:
            view = game.view(game.current_player)
            obs.append(encode(view))
            masks.append(action_mask(view))
            game.step(rng.choice(view.legal_actions))
    return np.stack(obs), np.stack(masks).astype(np.float32)


def torch_logits(model, obs: np.ndarray) -> np.ndarray:
    """The policy logits of an SB3 model, computed by torch."""
    import torch

    policy = model.policy
    with torch.no_grad():
        latent = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(torch.as_tensor(obs)))
        return policy.action_net(latent).numpy()


def check_parity(model_path, onnx_path, count: int = 10_000, seed: int = 0) -> dict:
    """Max |ONNX - torch| logit difference and the share of identical masked argmax choices."""
    from allfives_agents.nets.onnx_agent import OnnxPolicy

    from allfives_train.network import in_float32, load_ppo

    model = load_ppo(model_path, device="cpu")
    in_float32(model.policy)
    onnx = OnnxPolicy(onnx_path)
    rules = Rules.from_dict(onnx.rules) if onnx.rules else Rules.make()
    obs, masks = sample_observations(count, rules, seed, onnx.obs_version)
    reference = torch_logits(model, obs)
    logits, masked, actions = onnx.run(obs, masks)
    expected = np.argmax(np.where(masks > 0, reference, -np.inf), axis=-1)
    legal = masks[np.arange(len(actions)), actions] > 0
    return {
        "observations": int(len(obs)),
        "max_abs_diff": float(np.abs(logits - reference).max()),
        "same_action": float((actions == expected).mean()),
        "all_legal": bool(legal.all()),
    }
