"""imitate.anchor: the teacher's kept positions fitted before each PPO update (train/anchor.py)."""

import numpy as np
import pytest
import torch

from allfives_train.config import ConfigError

from test_imitate import tiny_config


def anchored(data_dir, **overrides):
    items = {"imitate.rounds": 0, "imitate.games": 40, "imitate.dataset": str(data_dir), "imitate.anchor": 16,
             "vec_env": "dummy", "total_steps": 2048, "ppo.learning_rate": 1e-3, "eval.every": 100000, **overrides}
    return tiny_config(**items)


def agreement(path, data) -> float:
    from allfives_train.network import load_ppo

    policy = load_ppo(path, device="cpu").policy
    several = data.mask.sum(1) > 1
    with torch.no_grad():
        choice = policy.get_distribution(torch.as_tensor(data.obs), torch.as_tensor(data.mask)).mode().numpy()
    return float((choice == data.action)[several].mean())


@pytest.mark.slow
def test_the_anchor_keeps_ppo_on_the_teachers_moves_from_the_kept_games(tmp_path, monkeypatch):
    import allfives_train.imitate as imitate
    from allfives_train.imitate import teacher_positions
    from allfives_train.train import train

    data_dir = tmp_path / "teacher"
    cfg = anchored(data_dir)
    train(cfg, tmp_path / "anchored", progress_bar=False)
    assert sorted(p.name for p in data_dir.iterdir()) == ["games.yaml", "teacher-0000-40.npz"], "the teacher's games kept for the next run"
    assert not (tmp_path / "anchored" / "imitation.json").exists(), "rounds 0: no warm start"
    data = teacher_positions(cfg)
    train(anchored(data_dir, **{"imitate.anchor": 0, "imitate.dataset": "", "imitate.rounds": 1, "imitate.teacher": ""}), tmp_path / "plain", progress_bar=False)
    with_anchor, without = agreement(tmp_path / "anchored" / "final.zip", data), agreement(tmp_path / "plain" / "final.zip", data)
    assert with_anchor > without + 0.15 and with_anchor > 0.6, (with_anchor, without)

    # a resume reads the kept games again: the teacher plays none of them
    monkeypatch.setattr(imitate, "play_games", lambda *args: pytest.fail("a kept chunk was played again"))
    resumed = anchored(data_dir, total_steps=2560)
    card = train(resumed, tmp_path / "anchored", resume=True, progress_bar=False)
    assert card["steps"] >= 2560


def test_the_anchors_minibatches_follow_the_seed_and_the_step():
    from allfives_train.anchor import AnchorCallback
    from allfives_train.imitate import Batch

    n = 300
    data = Batch(np.zeros((n, 4), np.float32), np.ones((n, 112), bool), np.arange(n) % 112, np.zeros(n, np.float32), np.zeros((n, 0), np.float32))
    one, two = (AnchorCallback(data, 2, 8, 1.0, seed=5) for _ in range(2))
    assert np.array_equal(one.draws(4096), two.draws(4096))
    assert not np.array_equal(one.draws(4096), one.draws(8192))
    assert not np.array_equal(one.draws(4096), AnchorCallback(data, 2, 8, 1.0, seed=6).draws(4096))
    assert one.draws(4096).shape == (2, 8) and one.draws(4096).max() < n


@pytest.mark.parametrize("overrides, message", [
    ({"imitate.anchor": 4}, "imitate.anchor fits the teacher's games kept in imitate.dataset during PPO: it needs imitate.dataset"),
    ({"imitate.anchor": 4, "imitate.dataset": "D", "total_steps": 0}, "it needs imitate.dataset and total_steps of at least 1"),
    ({"imitate.anchor": -1}, "imitate.anchor must be 0 \\(none\\) or more"),
    ({"imitate.anchor": 4, "imitate.dataset": "D", "imitate.anchor_coef": 0}, "imitate.anchor_coef must be a finite number > 0"),
    ({"imitate.anchor": 4, "imitate.dataset": "D", "imitate.anchor_coef": -0.5}, "imitate.anchor_coef must be a finite number > 0"),
    ({"imitate.rounds": 0}, "imitate.rounds must be at least 1 \\(0 only with imitate.anchor"),
])
def test_a_malformed_anchor_is_refused_by_name(tmp_path, overrides, message):
    items = {k: (str(tmp_path / v) if k == "imitate.dataset" else v) for k, v in overrides.items()}
    with pytest.raises(ConfigError, match=message):
        tiny_config(**items)
