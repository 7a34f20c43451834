"""The rollouts' forward pass (train/rollout_forward.py): under inference mode the policy scores the
legal moves in numpy on its live weights; the values, modes and log-probabilities are the torch
distribution's, sampling follows its probabilities and the seed, and the optimizer's steps show."""

import numpy as np
import pytest
import torch

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.single_agent import SingleAgentEnv

from test_network import positions
from test_privileged_critic import make_privileged_model
from test_privileged_critic import positions as privileged_positions


def random_policy(precision: str, obs_version: int = 2, seed: int = 1):
    """An untrained ``AllFivesPolicy`` with large random weights (decisive, far from uniform)."""
    from sb3_contrib import MaskablePPO

    from allfives_train.network import AllFivesPolicy

    kwargs = {"net_arch": {"pi": [32, 32], "vf": [16]}, "precision": precision}
    model = MaskablePPO(AllFivesPolicy, SingleAgentEnv(obs_version=obs_version), policy_kwargs=kwargs, seed=0, device="cpu")
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model.policy


def check_against_torch(policy, obs, masks) -> None:
    """The rollouts' pass (``no_grad``) against the torch distribution (gradients on) on ``obs``."""
    distribution, values = policy._legal_distribution(obs, masks)
    with torch.no_grad():
        modes, fast_values, mode_log_probs = policy(obs, deterministic=True, action_masks=masks.numpy())
        torch.manual_seed(0)
        sampled, _, sampled_log_probs = policy(obs, action_masks=masks.numpy())
    assert torch.equal(fast_values, values.detach())
    assert torch.equal(modes, distribution.mode())
    assert masks[torch.arange(len(obs)), sampled].all()
    assert not torch.equal(sampled, modes)  # the positions have choices: sampling is tested
    for actions, log_probs in ((modes, mode_log_probs), (sampled, sampled_log_probs)):
        assert log_probs.dtype == torch.float32 and actions.dtype == torch.int64
        torch.testing.assert_close(log_probs, distribution.log_prob(actions).detach(), rtol=0, atol=2e-6)


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
@pytest.mark.parametrize("version, options", [(2, dict(num_players=2)), (2, dict(num_players=4)), (1, dict(num_players=3))])
def test_the_rollouts_pass_gives_the_torch_values_modes_and_log_probabilities(precision, version, options):
    policy = random_policy(precision, version)
    obs, masks, _ = positions(version, options, seed=11)
    assert int(masks.sum(1).max()) > 2
    check_against_torch(policy, obs, masks)


def test_the_privileged_critics_rollouts_pass_reads_the_view_for_moves_and_everything_for_values(tmp_path):
    policy = make_privileged_model(tmp_path / "m.zip").policy
    obs, masks = privileged_positions(count=80, seed=4)
    check_against_torch(policy, obs, masks)


def test_the_rollouts_samples_follow_the_probabilities_and_the_seed():
    policy = random_policy("bfloat16")
    obs, masks, _ = positions(2, dict(num_players=2), seed=8, limit=60)
    row = int(masks.sum(1).argmax())
    many_obs, many_masks = obs[row : row + 1].expand(20000, -1), masks[row : row + 1].expand(20000, -1).numpy()
    distribution, _ = policy._legal_distribution(obs[row : row + 1], masks[row : row + 1])
    probabilities = torch.zeros(NUM_ACTIONS, dtype=torch.float64)
    probabilities[distribution.idx[0][distribution.valid[0]]] = distribution.log_p[0][distribution.valid[0]].exp().double().detach()
    legal = probabilities[masks[row]]
    assert len(legal) > 2 and (legal - 1 / len(legal)).abs().max() > 0.1  # far from uniform
    draws = []
    for seed in (0, 0, 1):
        torch.manual_seed(seed)
        with torch.no_grad():
            draws.append(policy(many_obs, action_masks=many_masks)[0])
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])
    frequencies = torch.bincount(draws[0], minlength=NUM_ACTIONS).double() / len(draws[0])
    assert (frequencies - probabilities).abs().max() < 0.02, (frequencies[masks[row]], legal)


def test_the_rollouts_pass_follows_the_weights_as_they_change():
    """The policy's own optimizer (torch's fused Adam, which changes the weights in place without
    counting a new version) and ``load_state_dict`` change the weights: the rollouts' pass plays the
    weights as they are, its numpy scorer sharing their memory, its bfloat16 casts made anew."""
    from allfives_train.network import FUSED_ADAM

    policy = random_policy("bfloat16")
    obs, masks, _ = positions(2, dict(num_players=2), seed=3, limit=50)
    check_against_torch(policy, obs, masks)
    optimizer = policy.optimizer
    assert optimizer.defaults.get("fused") == (True if FUSED_ADAM else None)
    for group in optimizer.param_groups:
        group["lr"] = 0.05
    values, log_probs, _ = policy.evaluate_actions(obs, policy._legal_distribution(obs, masks)[0].mode(), action_masks=masks)
    (values.square().mean() - log_probs.mean()).backward()
    with torch.no_grad():
        before = policy(obs, deterministic=True, action_masks=masks.numpy())
    optimizer.step()
    with torch.no_grad():
        after = policy(obs, deterministic=True, action_masks=masks.numpy())
    assert not torch.equal(before[1], after[1]) and not torch.allclose(before[2], after[2])
    check_against_torch(policy, obs, masks)
    policy.load_state_dict(random_policy("bfloat16", seed=5).state_dict())
    check_against_torch(policy, obs, masks)


def test_a_position_without_a_legal_move_is_refused():
    policy = random_policy("float32")
    obs, masks, _ = positions(2, dict(num_players=2), seed=3, limit=10)
    masks[4] = False
    with torch.no_grad(), pytest.raises(ValueError, match="needs a mask with a legal move; got 10 masks, 1 without one"):
        policy(obs, action_masks=masks.numpy())
    with torch.no_grad(), pytest.raises(ValueError, match="needs a mask with a legal move; got 9 masks"):
        policy(obs, action_masks=masks[:9].numpy())
