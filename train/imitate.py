"""Warm start: behaviour cloning of a teacher agent, DAgger-style, before PPO. Reads top to bottom.

1. play episodes of the environment PPO trains in (``train.envs``: the same seats, partner and
   rewards), its other seats drawn from the pool's heuristics; the learner's moves are the
   teacher's (round 1) or the student's own (later rounds, so the data holds the positions the
   student reaches; DAgger, Ross et al. 2011), with a share ``explore`` of random moves; at each
   decision keep the observation, the mask, the teacher's move (``teacher.act(env.view())``) and
   the discounted return of the learner's rewards from there (the value head's target);
2. train the policy on everything gathered so far: cross-entropy to the teacher's move over the
   legal moves, plus ``vf_coef`` times the squared error of the value;
3. repeat for ``rounds`` rounds, and report the student's agreement with the teacher on held-out
   positions.

The data lives in memory only (nothing half-written is left behind by a killed run); the trainer
checkpoints the warm-started model at step 0 before PPO begins.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from agents import make_agent
from agents.policy import NumpyPolicy, PPOAgent
from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_SIZES

from .envs import make_env_fn


@dataclass
class Batch:
    """Positions of the learner: observations, masks, teacher moves, returns."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    ret: np.ndarray

    @classmethod
    def concat(cls, parts: list["Batch"]) -> "Batch":
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("obs", "mask", "action", "ret")))

    def __len__(self) -> int:
        return len(self.action)


def play_games(cfg, teacher_spec: str, student: NumpyPolicy | None, games: int, seed: int) -> Batch:
    """``games`` episodes of the training environment from ``seed``; see the module docstring (step 1)."""
    rng = random.Random(seed)
    teacher = make_agent(teacher_spec, seed=rng.getrandbits(63))
    student_agent = PPOAgent(student) if student is not None else None
    specs, weights = list(cfg.pool.heuristics), list(cfg.pool.heuristics.values())
    env = make_env_fn(cfg, 0, specs, weights)()  # the environment PPO trains in: seats, pool, rewards
    explore, gamma = cfg.imitate.explore, cfg.ppo["gamma"]
    obs, masks, actions, rets = [], [], [], []
    for _ in range(games):
        o, info = env.reset(seed=rng.getrandbits(63))
        rewards = []
        done = False
        while not done:
            view = env.view()
            label = teacher.act(view)
            legal = view.legal_actions
            if rng.random() < explore:
                move = legal[rng.randrange(len(legal))]
            else:
                move = label if student_agent is None else student_agent.act(view)
            obs.append(o)
            masks.append(info["action_mask"])
            actions.append(label)
            o, reward, terminated, truncated, info = env.step(move)
            rewards.append(reward)
            done = terminated or truncated
        g = 0.0
        out = []
        for r in reversed(rewards):
            g = r + gamma * g
            out.append(g)
        rets.extend(reversed(out))
    size = OBS_SIZES[cfg.net.obs_version]
    return Batch(
        np.asarray(obs, np.float32).reshape(-1, size),
        np.asarray(masks, bool).reshape(-1, NUM_ACTIONS),
        np.asarray(actions, np.int64),
        np.asarray(rets, np.float32),
    )


def gather(cfg, student: NumpyPolicy | None, games: int, seed: int, workers: int) -> Batch:
    """``play_games`` split over ``workers`` processes (the same positions for any ``workers``)."""
    chunks = [(i, min(50, games - i)) for i in range(0, games, 50)]
    args = [(cfg, cfg.imitate.teacher, student, k, seed * 100_003 + i) for i, k in chunks]
    if workers <= 1:
        return Batch.concat([play_games(*a) for a in args])
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:  # safe beside torch
        return Batch.concat(list(pool.map(play_games, *zip(*args))))


def fit(model, data: Batch, cfg, log) -> dict:
    """Train ``model.policy`` on ``data`` (step 2); returns the held-out agreement and losses."""
    import torch

    imitate = cfg.imitate
    policy = model.policy
    gen = np.random.default_rng(cfg.seed)
    order = gen.permutation(len(data))
    held = order[: max(1, len(data) // 20)]
    train = order[len(held) :]
    optimizer = torch.optim.Adam(policy.parameters(), lr=imitate.learning_rate)
    t = {k: torch.as_tensor(getattr(data, k)) for k in ("obs", "mask", "action", "ret")}
    policy.set_training_mode(True)
    for epoch in range(imitate.epochs):
        gen.shuffle(train)
        total_pi = total_v = 0.0
        for start in range(0, len(train), imitate.batch_size):
            idx = torch.as_tensor(train[start : start + imitate.batch_size])
            values, logp, _ = policy.evaluate_actions(t["obs"][idx], t["action"][idx], t["mask"][idx])
            loss_pi = -logp.mean()
            loss_v = torch.nn.functional.mse_loss(values.flatten(), t["ret"][idx])
            loss = loss_pi + imitate.vf_coef * loss_v
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            total_pi += loss_pi.item() * len(idx)
            total_v += loss_v.item() * len(idx)
        log(f"  epoch {epoch + 1}/{imitate.epochs}: policy loss {total_pi / len(train):.4f}, value loss {total_v / len(train):.4f}")
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.as_tensor(held)
        choice = policy.get_distribution(t["obs"][idx], t["mask"][idx]).mode()
        several = t["mask"][idx].sum(-1) > 1
        agree = float((choice == t["action"][idx])[several].float().mean()) if bool(several.any()) else 1.0
    return {"positions": len(data), "agreement": agree}


def warm_start(model, cfg, metadata: dict, log=print) -> list[dict]:
    """Run the rounds of the warm start on ``model`` (step 3); returns one report per round."""
    imitate = cfg.imitate
    parts: list[Batch] = []
    reports = []
    for r in range(imitate.rounds):
        started = time.time()
        student = None if r == 0 else NumpyPolicy.from_sb3(model.policy, metadata)
        parts.append(gather(cfg, student, imitate.games, cfg.seed + 1000 * r, imitate.workers))
        data = Batch.concat(parts)
        who = "the teacher" if r == 0 else "the student"
        log(f"imitation round {r + 1}/{imitate.rounds}: {len(parts[-1])} positions played by {who} (explore {imitate.explore}), {len(data)} in all")
        report = fit(model, data, cfg, log)
        log(f"  agreement with {imitate.teacher} on held-out positions: {report['agreement']:.3f}")
        reports.append(dict(report, round=r + 1, seconds=round(time.time() - started, 1)))
    return reports
