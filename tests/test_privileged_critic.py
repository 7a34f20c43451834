"""``net.critic: privileged``: a critic that sees every hand in training, a policy that sees only its
seat's view (allfives_env/privileged.py, train/network.py). The features are the game's hidden
tiles; the actor, and everything exported or played from it, is a function of the view alone; the
default critic's policy is the one shipped."""

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from allfives_env.engine.tiles import NUM_TILES, mask_tiles
from allfives_env.observation import OBS_SIZES, OBS_VERSION, encoder
from allfives_env.privileged import PRIVILEGED_SIZE, encode_privileged
from allfives_env.single_agent import SingleAgentEnv

from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny_test.yaml"
RECIPE = ROOT / "configs" / "ppo_2p.yaml"
VIEW = OBS_SIZES[OBS_VERSION]


def bits(row) -> set[int]:
    return {int(t) for t in np.flatnonzero(row)}


@pytest.mark.parametrize("options", [dict(num_players=2), dict(num_players=3), dict(num_players=4, partnerships=True)],
                         ids=["2p", "3p", "4p-partners"])
def test_the_privileged_features_are_the_tiles_hidden_from_the_seat(options):
    env = SingleAgentEnv(privileged=True, **options)
    encode = encoder(OBS_VERSION)
    rng = np.random.default_rng(0)
    n = options["num_players"]
    checked = 0
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            assert obs.shape == env.observation_space.shape == (VIEW + PRIVILEGED_SIZE,)
            view = env.view()
            np.testing.assert_array_equal(obs[:VIEW], encode(view), "the view part is the standard observation")
            hidden = obs[VIEW:]
            hands = [bits(hidden[NUM_TILES * (r - 1) : NUM_TILES * r]) for r in range(1, 4)]
            for r in range(1, 4):
                expected = set(mask_tiles(env.game.hands[(view.seat + r) % n])) if r < n else set()
                assert hands[r - 1] == expected, f"relative seat {r}"
            boneyard = bits(hidden[3 * NUM_TILES :])
            # every tile is in exactly one place: the viewer's hand, the table, a hidden hand, the boneyard
            places = [set(view.hand_tiles), set(mask_tiles(view.played)), *hands, boneyard]
            assert sum(len(p) for p in places) == NUM_TILES and set().union(*places) == set(range(NUM_TILES))
            assert len(boneyard) == view.boneyard_size
            checked += 1
            obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            done = terminated or truncated
    assert checked > 30


def test_the_vector_of_games_writes_the_privileged_rows():
    """The trainer's path (``BatchedVecEnv`` over ``GameVector``, which encodes into its rows)."""
    from allfives_train.config import load_config
    from allfives_train.envs import make_env_fn
    from allfives_train.vec_env import BatchedVecEnv

    cfg = load_config(TINY, ["net.critic=privileged", "vec_env=batched", "env_workers=0", "n_envs=3"])
    vec = BatchedVecEnv([make_env_fn(cfg, rank, ["greedy", "random"], [1.0, 1.0]) for rank in range(3)], workers=0)
    obs = vec.reset()
    rng = np.random.default_rng(1)
    encode = encoder(cfg.net.obs_version)
    for _ in range(40):
        for env, row in zip(vec._local.envs, obs):
            view = env.view()
            np.testing.assert_array_equal(row[:VIEW], encode(view))
            np.testing.assert_array_equal(row[VIEW:], encode_privileged(env.game, view.seat))
        masks = np.stack(vec.env_method("action_masks"))
        obs, _, dones, _ = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    vec.close()


def make_privileged_model(path: Path):
    """An untrained privileged-critic policy with large random weights, saved as training saves it."""
    from sb3_contrib import MaskablePPO

    from allfives_train.callbacks import save_model
    from allfives_train.network import AllFivesPolicy

    kwargs = {"net_arch": {"pi": [32, 32], "vf": [16]}, "privileged_size": PRIVILEGED_SIZE}
    model = MaskablePPO(AllFivesPolicy, SingleAgentEnv(privileged=True), policy_kwargs=kwargs, seed=0, device="cpu")
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    save_model(model, path, {"obs_version": OBS_VERSION, "obs_size": VIEW, "rules": {"num_players": 2}, "critic": "privileged"})
    return model


def positions(count: int = 120, seed: int = 2):
    """Privileged observations and masks of a learner's decisions against random opponents."""
    env = SingleAgentEnv(privileged=True)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    o, info = env.reset(seed=seed)
    while len(obs) < count:
        obs.append(o)
        masks.append(info["action_mask"].astype(bool))
        o, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            o, info = env.reset()
    return torch.as_tensor(np.stack(obs)), torch.as_tensor(np.stack(masks))


def test_the_actor_reads_the_view_alone_and_the_critic_the_hidden_tiles(tmp_path):
    from allfives_agents.nets.policy import NumpyPolicy

    policy = make_privileged_model(tmp_path / "m.zip").policy
    assert policy.view_size == VIEW
    obs, masks = positions()
    assert int(masks.sum(1).max()) > 1
    changed = obs.clone()
    changed[:, VIEW:] = torch.rand(changed[:, VIEW:].shape, generator=torch.Generator().manual_seed(3)) * 2 - 1
    with torch.no_grad():
        for action_masks in (masks, None):
            a = policy.get_distribution(obs, action_masks=action_masks)
            b = policy.get_distribution(changed, action_masks=action_masks)
            if action_masks is None:
                torch.testing.assert_close(a.distribution.logits, b.distribution.logits, rtol=0, atol=0)
            else:
                torch.testing.assert_close(a.log_p, b.log_p, rtol=0, atol=0)
        values, changed_values = policy.predict_values(obs), policy.predict_values(changed)
        assert not torch.allclose(values, changed_values), "the critic reads the privileged part"
        # the actor runs on the view alone (what export and play hand it), with the same logits
        full = policy.action_net(policy.mlp_extractor.forward_actor(obs))
        view = policy.action_net(policy.mlp_extractor.forward_actor(obs[:, :VIEW]))
        torch.testing.assert_close(full, view, rtol=0, atol=0)
    # no gradient from the actor's loss reaches the privileged part
    probe = obs.clone().requires_grad_(True)
    _, log_prob, entropy = policy.evaluate_actions(probe, masks.float().argmax(1), action_masks=masks)
    (log_prob.sum() + entropy.sum()).backward()
    assert probe.grad[:, VIEW:].abs().max() == 0 and probe.grad[:, :VIEW].abs().max() > 0
    # the numpy runtime (evaluations, the pool's snapshots, ppo: agents) takes the view
    numpy_policy = NumpyPolicy.from_sb3(policy, {"obs_version": OBS_VERSION})
    assert numpy_policy.obs_size == VIEW
    np.testing.assert_allclose(numpy_policy.logits(obs[:, :VIEW].numpy()), full.numpy(), atol=1e-4)
    loaded = NumpyPolicy.load(tmp_path / "m.zip")
    assert loaded.obs_size == VIEW and loaded.metadata["critic"] == "privileged"
    # the critic on the view alone is a clear error, not a shape mismatch deep in torch
    with pytest.raises(ValueError, match="privileged critic reads"):
        policy.predict_values(obs[:, :VIEW])


def test_the_export_takes_the_view_and_matches_the_torch_actor(tmp_path):
    from allfives_agents.nets.onnx_agent import OnnxPolicy
    from allfives_train.export import export_onnx
    from allfives_train.parity import check_parity

    model = make_privileged_model(tmp_path / "m.zip")
    info = export_onnx(tmp_path / "m.zip", tmp_path / "m.onnx")
    assert info["obs_size"] == str(VIEW) and info["obs_version"] == str(OBS_VERSION)
    onnx = OnnxPolicy(tmp_path / "m.onnx")
    assert onnx.obs_size == VIEW
    parity = check_parity(tmp_path / "m.zip", tmp_path / "m.onnx", count=500)
    assert parity["max_abs_diff"] < 1e-4 and parity["same_action"] == 1.0
    obs, masks = positions(60, seed=4)
    logits, _, _ = onnx.run(obs[:, :VIEW].numpy(), masks.float().numpy())
    with torch.no_grad():
        reference = model.policy.action_net(model.policy.mlp_extractor.forward_actor(obs)).numpy()
    np.testing.assert_allclose(logits, reference, atol=1e-4)


def _state_shapes(zip_path: Path) -> dict:
    with zipfile.ZipFile(zip_path) as zf:
        state = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
    return {k: tuple(v.shape) for k, v in state.items()}


def test_the_default_critic_builds_the_shipped_policy_and_privileged_widens_only_the_critic():
    from sb3_contrib import MaskablePPO

    from allfives_train.config import load_config
    from allfives_train.train import policy_spec

    shipped = _state_shapes(ROOT / "models" / "allfives_2p.zip")
    built = {}
    for critic in ("view", "privileged"):
        cfg = load_config(RECIPE, [f"net.critic={critic}"])
        policy_class, kwargs = policy_spec(cfg)
        assert ("privileged_size" in kwargs) == (critic == "privileged")
        env = SingleAgentEnv(privileged=critic == "privileged", obs_version=cfg.net.obs_version)
        model = MaskablePPO(policy_class, env, policy_kwargs=kwargs, device="cpu", seed=0)
        built[critic] = {k: tuple(v.shape) for k, v in model.policy.state_dict().items()}
    assert load_config(RECIPE).net.critic == "view"
    assert built["view"] == shipped, "the default critic builds the policy the 2-player recipe shipped"
    widened = {k for k in shipped if built["privileged"][k] != shipped[k]}
    assert widened == {"mlp_extractor.value_net.0.weight"}
    assert built["privileged"]["mlp_extractor.value_net.0.weight"][1] == shipped["mlp_extractor.value_net.0.weight"][1] + PRIVILEGED_SIZE


def test_a_warm_start_clones_the_teacher_on_the_privileged_observations(tmp_path):
    """imitate.*: the positions carry the privileged part (the value head's regression reads it)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from allfives_train.config import load_config
    from allfives_train.envs import make_env_fn
    from allfives_train.imitate import play_games, warm_start
    from allfives_train.train import new_model

    cfg = load_config(TINY, ["net.critic=privileged", "imitate.teacher=greedy", "imitate.games=3", "imitate.rounds=2", "imitate.epochs=1"])
    data = play_games(cfg, "greedy", None, games=2, seed=1)
    assert data.obs.shape == (len(data), VIEW + PRIVILEGED_SIZE) and data.obs[:, VIEW:].any()
    env = DummyVecEnv([make_env_fn(cfg, 0, ["greedy"], [1.0])])
    model = new_model(cfg, env, tmp_path / "tb")
    reports = warm_start(model, cfg, {"obs_version": 2}, log=lambda line: None)
    assert [r["round"] for r in reports] == [1, 2] and all(0 <= r["agreement"] <= 1 for r in reports)
    env.close()


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["net.critic=omniscient"], "net.critic must be one of view, privileged"),
        (["net.critic=privileged", "net.policy=mlp"], "net.critic privileged needs net.policy scorer"),
    ],
)
def test_critic_config_errors(overrides, message):
    from allfives_train.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message):
        load_config(TINY, overrides)


@pytest.mark.slow
def test_a_tiny_privileged_run_trains_checkpoints_resumes_and_exports(tmp_path):
    from allfives_agents.nets.policy import NumpyPolicy

    run_dir = tmp_path / "run"
    options = ["net.critic=privileged", "vec_env=batched", "env_workers=0"]
    result = run_cli("train", "--config", str(TINY), "--run-dir", str(run_dir), "--no-progress", *options)
    assert result.returncode == 0, result.stderr
    card = json.loads((run_dir / "card.json").read_text())
    assert card["config"]["net"]["critic"] == "privileged" and card["final_evaluation"]
    snapshots = sorted((run_dir / "pool").glob("snap_*.npz"))
    assert snapshots and all(NumpyPolicy.load(s).obs_size == VIEW for s in snapshots), "the pool plays the view"
    assert NumpyPolicy.load(run_dir / "final.zip").obs_size == VIEW

    resumed = run_cli("train", "--run-dir", str(run_dir), "--resume", "total_steps=1024", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert "from step 512" in resumed.stdout
    assert json.loads((run_dir / "checkpoints" / "latest.json").read_text())["steps"] >= 1024
    refused = run_cli("train", "--run-dir", str(run_dir), "--resume", "net.critic=view", "--no-progress")
    assert refused.returncode == 2 and "net.critic" in refused.stderr

    out = tmp_path / "final.onnx"
    exported = run_cli("export", run_dir / "final.zip", "--out", out, "--check", "300", "--json", timeout=300)
    assert exported.returncode == 0, exported.stderr
    report = json.loads(exported.stdout.strip().splitlines()[-1])
    assert report["max_abs_diff"] < 1e-4 and report["same_action"] == 1.0
    match = run_cli("tournament", "--agents", f"ppo:{run_dir / 'final.zip'},onnx:{out}", "--games", "4", "--seed", "1",
                    "--target", "50", "--json", timeout=300)
    assert match.returncode == 0, match.stderr
