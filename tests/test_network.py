"""The policy network's legal-only scoring: the same masked distribution and gradients as scoring
all 112 actions, on real positions of every variant and observation version."""

import numpy as np
import pytest
import torch

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_VERSION, action_mask, encoder

from test_export import make_model
from test_lookahead import VARIANTS, views_of_random_games


def positions(version: int, options: dict, seed: int, limit: int = 160):
    views = [v for _, v in views_of_random_games(options, seed=seed, games=3)][:limit]
    encode = encoder(version)
    obs = torch.as_tensor(np.stack([encode(v) for v in views]))
    masks = torch.as_tensor(np.stack([action_mask(v) for v in views])).bool()
    actions = torch.as_tensor([v.legal_actions[i % len(v.legal_actions)] for i, v in enumerate(views)])
    return obs, masks, actions


def dense_outputs(policy, obs, masks, actions):
    """What SB3's own ``MaskableActorCriticPolicy.evaluate_actions`` computes: every logit, then the
    mask, from the latents of ``forward_actor`` and ``forward_critic``."""
    features = policy.extract_features(obs)
    latent_pi, latent_vf = policy.mlp_extractor.forward_actor(features), policy.mlp_extractor.forward_critic(features)
    distribution = policy.action_dist.proba_distribution(action_logits=policy.action_net(latent_pi))
    distribution.apply_masking(masks)
    return policy.value_net(latent_vf), distribution.log_prob(actions), distribution.entropy()


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_legal_only_scoring_gives_the_dense_distribution_and_gradients(tmp_path, version, options):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(make_model({1: "scorer", 2: "scorer_v2", 3: "scorer_v3", 4: "scorer_v4"}[version], tmp_path / "m.zip"), device="cpu")
    policy = model.policy
    obs, masks, actions = positions(version, options, seed=5)
    assert int(masks.sum(1).max()) > 1
    sparse = policy.evaluate_actions(obs, actions, action_masks=masks)
    dense = dense_outputs(policy, obs, masks, actions)
    for a, b in zip(sparse, dense):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    grads = []
    for values, log_prob, entropy in (sparse, dense):
        policy.zero_grad()
        (values.mean() - log_prob.mean() - 0.01 * entropy.mean()).backward()
        grads.append([p.grad.clone() for p in policy.parameters()])
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    with torch.no_grad():
        chosen, _, _ = policy.forward(obs, deterministic=True, action_masks=masks.numpy())
    assert masks[torch.arange(len(chosen)), chosen].all()
    latent_pi, _ = policy.mlp_extractor(policy.extract_features(obs))
    with torch.no_grad():
        dense_logits = policy.action_net(latent_pi).masked_fill(~masks, -torch.inf)
    assert torch.equal(chosen, dense_logits.argmax(1))


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_hidden_and_value_gives_the_actor_and_critic_latents_and_their_gradients(tmp_path, precision):
    """``hidden_and_value`` (what training asks, without the view copied into a latent) against
    ``forward_actor`` and ``forward_critic`` (what export and SB3's own paths ask)."""
    from sb3_contrib import MaskablePPO

    from allfives_train.network import PRECISIONS

    policy = MaskablePPO.load(make_model("scorer_v2", tmp_path / "m.zip"), device="cpu").policy
    extractor = policy.mlp_extractor
    extractor.autocast = PRECISIONS[precision]
    obs, _, _ = positions(2, dict(num_players=2), seed=7)
    outputs = []
    for together in (True, False):
        policy.zero_grad()
        if together:
            h, view, latent_vf = extractor.hidden_and_value(obs)
        else:
            latent_pi, latent_vf = extractor.forward_actor(obs), extractor.forward_critic(obs)
            h, view = latent_pi[:, : extractor.hidden_dim], latent_pi[:, extractor.hidden_dim :]
        (h.square().mean() + latent_vf.sin().mean()).backward()
        outputs.append((h.detach(), view, latent_vf.detach(), [p.grad.clone() for p in extractor.parameters()]))
    (h1, view1, vf1, g1), (h2, view2, vf2, g2) = outputs
    assert torch.equal(view1, obs) and torch.equal(view2, obs)
    tol = dict(rtol=1e-5, atol=1e-6) if precision == "float32" else dict(rtol=2e-2, atol=1e-2)
    torch.testing.assert_close(h1, h2, **tol)
    torch.testing.assert_close(vf1, vf2, **tol)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, **tol)
    assert all(g.abs().sum() > 0 for g in g1)  # every layer of both networks gets a gradient


def test_the_mask_is_only_used_inside_one_call(tmp_path):
    from sb3_contrib import MaskablePPO

    policy = MaskablePPO.load(make_model("scorer_v2", tmp_path / "m.zip"), device="cpu").policy
    obs, masks, actions = positions(2, dict(num_players=2), seed=6, limit=20)
    policy.evaluate_actions(obs, actions, action_masks=masks)
    assert policy._legal_mask is None
    with torch.no_grad():
        logits = policy.get_distribution(obs).distribution.logits
    assert logits.shape == (len(obs), NUM_ACTIONS) and torch.isfinite(logits).all()


def test_bfloat16_hidden_layers_train_float32_weights_and_export_as_float32(tmp_path):
    from sb3_contrib import MaskablePPO

    from allfives_train.network import AllFivesPolicy
    from allfives_agents.nets.policy import NumpyPolicy
    from allfives_env.single_agent import SingleAgentEnv
    from allfives_train.callbacks import save_model

    kwargs = {"net_arch": {"pi": [64, 64], "vf": [32]}, "precision": "bfloat16"}
    model = MaskablePPO(AllFivesPolicy, SingleAgentEnv(obs_version=2), policy_kwargs=kwargs, seed=0, device="cpu")
    policy = model.policy
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    obs, masks, actions = positions(2, dict(num_players=2), seed=7, limit=64)
    values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    assert values.dtype == log_prob.dtype == torch.float32
    (values.mean() - log_prob.mean()).backward()
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in policy.parameters())
    # the same weights in float32 give nearly the same distribution (bfloat16 keeps ~3 digits)
    full = AllFivesPolicy(policy.observation_space, policy.action_space, lambda _: 3e-4, net_arch=kwargs["net_arch"])
    full.load_state_dict(policy.state_dict())
    with torch.no_grad():
        _, exact, _ = full.evaluate_actions(obs, actions, action_masks=masks)
    torch.testing.assert_close(log_prob.detach(), exact, atol=0.05, rtol=0.05)
    # saved and loaded with its precision; exported to numpy in float32
    save_model(model, tmp_path / "bf16.zip", {"obs_version": 2, "obs_size": obs.shape[1], "rules": {"num_players": 2}})
    assert MaskablePPO.load(tmp_path / "bf16.zip", device="cpu").policy.precision == "bfloat16"
    actor = NumpyPolicy.from_sb3(policy)
    np.testing.assert_allclose(actor.logits(obs[:4].numpy())[masks[:4].numpy()], full.action_net(full.mlp_extractor.forward_actor(obs[:4])).detach().numpy()[masks[:4].numpy()], rtol=1e-4, atol=1e-4)
    # exported to ONNX in float32 (onnxruntime has no bfloat16 Gemm on CPU), as NumpyPolicy
    from allfives_agents.nets.onnx_agent import OnnxPolicy
    from allfives_train.export import export_onnx

    export_onnx(tmp_path / "bf16.zip", tmp_path / "bf16.onnx")
    logits, _, _ = OnnxPolicy(tmp_path / "bf16.onnx").run(obs[:4].numpy(), masks[:4].numpy().astype(np.float32))
    np.testing.assert_allclose(logits, actor.logits(obs[:4].numpy()), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16"):
        AllFivesPolicy(policy.observation_space, policy.action_space, lambda _: 3e-4, precision="float16")


def test_the_rollouts_no_grad_forward_runs_in_inference_mode_and_gives_the_same_moves(tmp_path):
    """SB3 calls ``forward`` under ``no_grad`` in its rollouts; the policy runs it in inference mode
    there (train/rollout_forward.py, tests/test_rollout_forward.py): the same modes, values and
    log-probabilities as with gradients on, which the rollout buffer can keep; with gradients on,
    the outputs still carry them."""
    from sb3_contrib import MaskablePPO

    policy = MaskablePPO.load(make_model("scorer_v2", tmp_path / "m.zip"), device="cpu").policy
    obs, masks, _ = positions(2, dict(num_players=2), seed=9, limit=60)
    actions, values, log_probs = policy(obs, deterministic=True, action_masks=masks.numpy())
    assert values.requires_grad and log_probs.requires_grad
    with torch.no_grad():
        fast = policy(obs, deterministic=True, action_masks=masks.numpy())
    assert all(t.is_inference() for t in fast)
    assert torch.equal(fast[0], actions)
    torch.testing.assert_close(fast[1], values.detach(), rtol=0, atol=0)
    torch.testing.assert_close(fast[2], log_probs.detach(), rtol=0, atol=2e-6)
    kept = fast[1].clone().cpu().numpy()  # what SB3's rollout buffer does with them
    assert np.array_equal(kept, values.detach().numpy())


def test_the_legal_only_distribution_samples_its_probabilities_and_refuses_an_illegal_action(tmp_path):
    """``LegalCategorical``: sampling follows the dense masked probabilities, the mode is the dense
    argmax, and the log-probability of an action its position does not allow is an error."""
    from sb3_contrib import MaskablePPO

    policy = MaskablePPO.load(make_model("scorer_v2", tmp_path / "m.zip"), device="cpu").policy
    obs, masks, actions = positions(2, dict(num_players=2), seed=8, limit=40)
    row = int(masks.sum(1).argmax())
    obs, masks = obs[row : row + 1].expand(20000, -1), masks[row : row + 1].expand(20000, -1)
    latent_pi, _ = policy.mlp_extractor(policy.extract_features(obs[:1]))
    with torch.no_grad():
        dense = torch.softmax(policy.action_net(latent_pi).masked_fill(~masks[:1], -torch.inf), 1)[0]
        torch.manual_seed(0)
        sampled = policy.get_distribution(obs, masks).sample()
        mode = policy.get_distribution(obs[:1], masks[:1]).mode()
    legal = dense[masks[0]]
    assert len(legal) > 2 and (legal - 1 / len(legal)).abs().max() > 0.1  # far from uniform: sampling is tested
    assert masks[0, sampled].all()
    frequencies = torch.bincount(sampled, minlength=NUM_ACTIONS).double() / len(sampled)
    assert (frequencies - dense.double()).abs().max() < 0.02, (frequencies[masks[0]], dense[masks[0]])
    assert int(mode) == int(dense.argmax())
    illegal = torch.tensor([int((~masks[0]).nonzero()[0])])
    with pytest.raises(ValueError, match="not legal in its position"):
        policy.evaluate_actions(obs[:1], illegal, action_masks=masks[:1])


def _with_policy_module(source, target, module: str) -> None:
    """A copy of zip ``source`` whose pickled policy class names ``module`` (as zips saved before the move did)."""
    import base64
    import json
    import sys
    import types
    import zipfile

    import cloudpickle

    from allfives_train.network import AllFivesPolicy

    with zipfile.ZipFile(source) as zf:
        members = [(info, zf.read(info.filename)) for info in zf.infolist()]
    data = json.loads(dict((i.filename, b) for i, b in members)["data"])
    home = AllFivesPolicy.__module__
    fake = sys.modules[module] = types.ModuleType(module)
    fake.AllFivesPolicy = AllFivesPolicy
    AllFivesPolicy.__module__ = module
    try:
        data["policy_class"][":serialized:"] = base64.b64encode(cloudpickle.dumps(AllFivesPolicy)).decode()
    finally:
        AllFivesPolicy.__module__ = home
        del sys.modules[module]
    data["policy_class"]["__module__"] = module
    with zipfile.ZipFile(target, "w") as out:
        for info, payload in members:
            out.writestr(info, json.dumps(data, indent=4).encode() if info.filename == "data" else payload)


def test_the_shipped_zips_load_as_a_user_would_and_old_zips_still_load(tmp_path):
    from sb3_contrib import MaskablePPO

    from allfives_agents.models import model_path
    from allfives_train.network import AllFivesPolicy, legacy_objects, load_ppo, rename_policy_class
    from allfives_train.parity import sample_observations, torch_logits
    from allfives_env.engine import Rules

    shipped = model_path("allfives_2p", "zip")
    model = MaskablePPO.load(shipped, device="cpu")  # no custom objects: the class is importable where the zip says
    assert type(model.policy) is AllFivesPolicy and legacy_objects(shipped) == {}
    old = tmp_path / "old.zip"
    _with_policy_module(shipped, old, "agents.network")
    assert legacy_objects(old) == {"policy_class": AllFivesPolicy}
    with pytest.raises(Exception):
        MaskablePPO.load(old, device="cpu")  # agents.network is gone
    installed_as_train = tmp_path / "train_network.zip"  # zips of the time the repository's folder was the import name
    _with_policy_module(shipped, installed_as_train, "train.network")
    assert legacy_objects(installed_as_train) == {"policy_class": AllFivesPolicy}
    assert rename_policy_class(installed_as_train)
    obs, _ = sample_observations(300, Rules.make(), 1, OBS_VERSION)
    reference = torch_logits(model, obs)
    assert np.array_equal(torch_logits(load_ppo(old, device="cpu"), obs), reference)
    assert rename_policy_class(old) and not rename_policy_class(old)
    assert np.array_equal(torch_logits(MaskablePPO.load(old, device="cpu"), obs), reference)


def test_adam_is_fused_where_torch_runs_it_and_loads_a_plain_adams_state():
    """The learner's Adam takes the fused step on the CPU where this torch has it; a choice in
    ``optimizer_kwargs`` is kept; the state of a plain (foreach) Adam, as in older checkpoints, loads."""
    import torch

    from allfives_train.network import FUSED_ADAM, optimizer_kwargs

    assert optimizer_kwargs(torch.optim.Adam, {"eps": 1e-5}, "cpu") == ({"eps": 1e-5, "fused": True} if FUSED_ADAM else {"eps": 1e-5})
    assert optimizer_kwargs(torch.optim.Adam, {"foreach": True}, "cpu") == {"foreach": True}
    assert optimizer_kwargs(torch.optim.SGD, {}, "cpu") == {}
    if not FUSED_ADAM:
        return
    net = torch.nn.Linear(3, 2)
    plain = torch.optim.Adam(net.parameters(), foreach=True)
    net(torch.ones(1, 3)).sum().backward()
    plain.step()
    fused = torch.optim.Adam(net.parameters(), **optimizer_kwargs(torch.optim.Adam, {}, "cpu"))
    fused.load_state_dict(plain.state_dict())
    before = net.weight.detach().clone()
    fused.step()
    assert fused.defaults["fused"] and not torch.equal(before, net.weight)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_the_scorers_lookups_give_the_numpy_features_exactly_and_the_legal_actions_in_order(version, options):
    from allfives_agents.nets.action_features import action_features
    from allfives_train.network import ActionScorer

    obs, masks, _ = positions(version, options, seed=8)
    scorer = ActionScorer(8, 4, obs_version=version)
    assert np.array_equal(scorer.action_features(obs).numpy(), action_features(obs.numpy()))
    latent = torch.cat([torch.zeros(len(obs), 8), obs], 1)
    _, idx, valid = scorer.legal_logits(latent, masks)
    assert idx.shape[1] == int(masks.sum(1).max())
    for row, mask in enumerate(masks):
        legal = torch.nonzero(mask).flatten()
        assert torch.equal(idx[row, : len(legal)], legal) and valid[row].sum() == len(legal)
        assert (idx[row, len(legal) :] == -1).all() and not valid[row, len(legal) :].any()
