"""Warm start: behaviour cloning of a teacher agent, DAgger-style, before PPO. Reads top to bottom.

1. play episodes of the environment PPO trains in (``allfives_train.envs``: the same seats, partner and
   rewards), its other seats drawn from the pool's heuristics; the learner's moves are the
   teacher's (round 1, unless ``first: student``) or the student's own (later rounds, so the data
   holds the positions the student reaches; DAgger, Ross et al. 2011), with a share ``explore`` of
   random moves; at each
   decision keep the observation, the mask, the teacher's move (``teacher.act(env.view())``) and
   the discounted return of the learner's rewards from there (the value head's target); with
   ``target: visits`` also the search teacher's share of root visits per move (its move is the
   most visited);
2. train the policy on everything gathered so far: cross-entropy to the teacher's move over the
   legal moves (``target: visits``: to its visit shares, as AlphaZero trains its policy on the
   search's), plus ``vf_coef`` times the squared error of the value;
3. repeat for ``rounds`` rounds, and report the student's agreement with the teacher on held-out
   positions.

With a ``cache`` folder (the trainer passes ``RUN/imitation``) every finished chunk of games and
every round's fitted weights are written there as they come (each file whole or not at all), so a
run stopped during the warm start (a search teacher takes many minutes) goes on with ``--resume``
from what it had: the chunks kept are not played again, the rounds fitted are not fitted again, and
the result is that of a run never stopped. The folder says which config it belongs to; the trainer
deletes it once the warm-started model is checkpointed at step 0, before PPO begins.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from allfives_agents import make_agent
from allfives_agents.factory import BotAgent
from allfives_agents.nets.policy import NumpyPolicy, PPOAgent
from allfives_env.engine.tiles import NUM_ACTIONS

from .envs import make_env_fn


FIELDS = ("obs", "mask", "action", "ret", "visits")


@dataclass
class Batch:
    """Positions of the learner: observations, masks, teacher moves, returns, and the teacher's
    visit shares per action (``target: visits``; zero columns otherwise)."""

    obs: np.ndarray
    mask: np.ndarray
    action: np.ndarray
    ret: np.ndarray
    visits: np.ndarray

    @classmethod
    def concat(cls, parts: list["Batch"]) -> "Batch":
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in FIELDS))

    def __len__(self) -> int:
        return len(self.action)


def play_games(cfg, teacher_spec: str, student: NumpyPolicy | None, games: int, seed: int) -> Batch:
    """``games`` episodes of the training environment from ``seed``; see the module docstring (step 1)."""
    rng = random.Random(seed)
    teacher = make_agent(teacher_spec, seed=rng.getrandbits(63))
    soft = cfg.imitate.target == "visits"
    student_agent = PPOAgent(student) if student is not None else None
    specs, weights = list(cfg.pool.heuristics), list(cfg.pool.heuristics.values())
    env = make_env_fn(cfg, 0, specs, weights)()  # the environment PPO trains in: seats, pool, rewards
    explore, gamma = cfg.imitate.explore, cfg.ppo["gamma"]
    obs, masks, actions, rets, shares = [], [], [], [], []
    for _ in range(games):
        o, info = env.reset(seed=rng.getrandbits(63))
        rewards = []
        done = False
        while not done:
            view = env.view()
            legal = view.legal_actions
            if soft:
                label, share = visit_shares(teacher, view)
                shares.append(share)
            else:
                label = teacher.act(view)
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
    size = env.observation_space.shape[0]  # with net.critic privileged, the view and the privileged values
    return Batch(
        np.asarray(obs, np.float32).reshape(-1, size),
        np.asarray(masks, bool).reshape(-1, NUM_ACTIONS),
        np.asarray(actions, np.int64),
        np.asarray(rets, np.float32),
        np.asarray(shares, np.float32).reshape(-1, NUM_ACTIONS) if soft else np.zeros((len(actions), 0), np.float32),
    )


def visit_shares(teacher, view) -> tuple[int, np.ndarray]:
    """A search teacher's move at ``view`` and its share of the root's visits per action (the
    search ``act`` runs, early stop included; a forced move: all on it)."""
    if isinstance(teacher, BotAgent):
        teacher = teacher.for_rules(view.rules)
    legal = view.legal_actions
    share = np.zeros(NUM_ACTIONS, np.float32)
    if len(legal) == 1:
        share[legal[0]] = 1.0
        return legal[0], share
    root = teacher.search(view, decide=teacher.stop == "early")
    for action in legal:
        child = root.children.get(action)
        share[action] = child.visits if child is not None else 0
    share /= share.sum()
    return teacher.choose(root, legal), share


def gather(cfg, student: NumpyPolicy | None, games: int, seed: int, workers: int, keep: "ChunkStore | None" = None) -> Batch:
    """``play_games`` split over ``workers`` processes (the same positions for any ``workers``); with
    ``keep``, chunks it holds are read back instead of played, and every chunk played is written to it."""
    args = [(cfg, cfg.imitate.teacher, student, k, seed * 100_003 + 50 * i) for i, k in _chunks(games)]
    parts = [keep.read(i) if keep is not None else None for i in range(len(args))]
    todo = [i for i, part in enumerate(parts) if part is None]
    if todo and workers > 1:
        # spawned (safe beside torch); leaving the block terminates the workers, so a run stopped here
        # (Ctrl-C, SIGTERM) leaves none playing on
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            _fill(parts, todo, pool.imap(_play_chunk, [args[i] for i in todo]), keep)
    else:
        _fill(parts, todo, (play_games(*args[i]) for i in todo), keep)
    return Batch.concat(parts)


def _play_chunk(args: tuple) -> Batch:
    return play_games(*args)


def _fill(parts: list, todo: list[int], played, keep) -> None:
    for i, batch in zip(todo, played):  # in order, as each chunk is done
        parts[i] = batch
        if keep is not None:
            keep.write(i, batch)


class ChunkStore:
    """The files of one round in the warm start's cache folder: chunks of games and the fitted weights."""

    def __init__(self, folder: Path, round_index: int) -> None:
        self.folder = folder
        self.prefix = f"round{round_index + 1}"

    def read(self, chunk: int) -> Batch | None:
        return _read_chunk(self.folder / f"{self.prefix}-chunk{chunk:04d}.npz", "imitation cache")

    def write(self, chunk: int, batch: Batch) -> None:
        _atomic_save(self.folder / f"{self.prefix}-chunk{chunk:04d}.npz", **{k: getattr(batch, k) for k in FIELDS})

    def fitted(self) -> tuple[dict, dict] | None:
        """The weights and report saved after this round's fit, or ``None``."""
        import torch

        weights, report = self.folder / f"{self.prefix}-policy.pt", self.folder / f"{self.prefix}-report.json"
        if not (weights.exists() and report.exists()):
            return None
        try:
            return torch.load(weights, weights_only=True), json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError, RuntimeError) as exc:
            print(f"imitation cache: round {self.prefix[5:]}'s fit is unreadable ({exc}); fitting it again")
            return None

    def save_fit(self, state: dict, report: dict) -> None:
        import torch

        tmp = self.folder / f"{self.prefix}-policy.pt.tmp"
        torch.save(state, tmp)
        os.replace(tmp, self.folder / f"{self.prefix}-policy.pt")
        tmp = self.folder / f"{self.prefix}-report.json.tmp"
        tmp.write_text(json.dumps(report), encoding="utf-8")
        os.replace(tmp, self.folder / f"{self.prefix}-report.json")


class TeacherGames:
    """``imitate.dataset``: the teacher's games of round 1 kept in a folder across runs, in the chunks
    ``gather`` plays (file ``teacher-CHUNK-GAMES.npz``), for every run whose games they are: the folder's
    ``games.yaml`` holds ``games_stamp`` (what those games depend on), and one of another stamp is
    refused naming what differs. A damaged chunk is played again and rewritten."""

    STAMP = "games.yaml"

    def __init__(self, folder, cfg) -> None:
        import yaml

        from .config import ConfigError, cut

        self.folder = Path(folder)
        self.sizes = dict(_chunks(cfg.imitate.games))
        stamp = games_stamp(cfg)
        path = self.folder / self.STAMP
        if path.is_file():
            try:
                held = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, yaml.YAMLError) as exc:
                raise ConfigError(f"imitate.dataset: {path} is unreadable ({exc}); use another folder") from None
            if held != stamp:
                differ = [k for k in stamp if not isinstance(held, dict) or held.get(k) != stamp[k]]
                raise ConfigError(f"imitate.dataset: {self.folder} holds the games of another setting ({', '.join(differ) or 'its stamp'} "
                                  f"differ: {cut(str({k: held.get(k) for k in differ} if isinstance(held, dict) else held))}); use another folder")
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(yaml.safe_dump(stamp, sort_keys=True), encoding="utf-8")
            os.replace(tmp, path)

    def _path(self, chunk: int) -> Path:
        return self.folder / f"teacher-{chunk:04d}-{self.sizes[chunk]}.npz"

    def read(self, chunk: int) -> Batch | None:
        return _read_chunk(self._path(chunk), "imitate.dataset")

    def write(self, chunk: int, batch: Batch) -> None:
        _atomic_save(self._path(chunk), **{k: getattr(batch, k) for k in FIELDS})

    def held(self) -> int:
        """How many of this run's chunks the folder holds."""
        return sum(self._path(i).is_file() for i in self.sizes)


def teacher_positions(cfg, log=print) -> Batch:
    """Round 1's positions, the teacher's games kept in ``imitate.dataset`` (the chunks it lacks are
    played and written there): the warm start's first round and ``imitate.anchor``'s data."""
    games = TeacherGames(cfg.imitate.dataset, cfg)
    log(f"imitate.dataset: {games.held()} of {len(games.sizes)} chunks of the teacher's games in {cfg.imitate.dataset}")
    return gather(cfg, None, cfg.imitate.games, cfg.seed, cfg.imitate.workers, games)


def games_stamp(cfg) -> dict:
    """What the teacher's games of round 1 depend on: the game and its rewards, the pool's heuristics
    and partner, the observation, the seed, the teacher and its target, the random moves, the discount."""
    return {
        "game": dataclasses.asdict(cfg.game),
        "pool": {"heuristics": dict(cfg.pool.heuristics), "partner": cfg.pool.partner},
        "observation": {"obs_version": cfg.net.obs_version, "critic": cfg.net.critic},
        "seed": cfg.seed,
        "teacher": cfg.imitate.teacher,
        "target": cfg.imitate.target,
        "explore": float(cfg.imitate.explore),
        "gamma": float(cfg.ppo["gamma"]),
    }


def _chunks(games: int) -> list[tuple[int, int]]:
    """The chunks of ``games``: (index, games in it), 50 a chunk."""
    return [(i // 50, min(50, games - i)) for i in range(0, games, 50)]


def _read_chunk(path: Path, what: str) -> Batch | None:
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            batch = Batch(*(f[k] for k in FIELDS))
        if len({len(batch.obs), len(batch.mask), len(batch.action), len(batch.ret)}) != 1:
            raise ValueError("its arrays have different lengths")
        return batch
    except (OSError, ValueError, KeyError, EOFError) as exc:  # a damaged file is played again
        print(f"{what}: {path.name} is unreadable ({exc}); playing its games again")
        return None


def _atomic_save(path: Path, **arrays) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def cache_stamp(cfg) -> str:
    """What of the config the warm start depends on, as YAML: all of it but the settings a resume
    may change that it does not read (steps, checkpoints, processes, threads, device, evaluation,
    self-play snapshots)."""
    import yaml

    from .config import RESUMABLE

    data = dataclasses.asdict(cfg)
    for key in RESUMABLE:
        if key != "pool.heuristics":  # the warm start's other seats are drawn from them
            *parents, last = key.split(".")
            node = data
            for name in parents:
                node = node[name]
            node.pop(last, None)
    return yaml.safe_dump(data, sort_keys=False)


def open_cache(folder, cfg, log=print) -> Path:
    """The warm start's cache folder for ``cfg``: one written for another config, or damaged, is
    emptied first."""
    folder = Path(folder)
    config_text = cache_stamp(cfg)
    stamp = folder / "config.yaml"
    if folder.exists():
        try:
            same = stamp.read_text(encoding="utf-8") == config_text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            log(f"imitation cache: {folder} belongs to another config; starting the warm start afresh")
            shutil.rmtree(folder)
    if not folder.exists():
        folder.mkdir(parents=True)
        tmp = folder / "config.yaml.tmp"
        tmp.write_text(config_text, encoding="utf-8")
        os.replace(tmp, stamp)
    return folder


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
    t = {k: torch.as_tensor(getattr(data, k)) for k in FIELDS}
    soft = data.visits.shape[1] > 0
    policy.set_training_mode(True)
    for epoch in range(imitate.epochs):
        gen.shuffle(train)
        total_pi = total_v = 0.0
        for start in range(0, len(train), imitate.batch_size):
            idx = torch.as_tensor(train[start : start + imitate.batch_size])
            values = policy.predict_values(t["obs"][idx])
            loss_pi = teacher_loss(policy, *(t[k][idx] for k in ("obs", "mask", "action", "visits")), soft)
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


def teacher_loss(policy, obs, mask, action, visits, soft: bool):
    """The policy's loss on a minibatch of the teacher's positions: the cross-entropy to its visit
    shares (``soft``) or to its move, over the legal moves; a mean over the minibatch."""
    if soft:
        return soft_cross_entropy(policy.get_distribution(obs, mask), visits).mean()
    _, logp, _ = policy.evaluate_actions(obs, action, mask)
    return -logp.mean()


def soft_cross_entropy(dist, target):
    """Cross-entropy of the policy's distribution ``dist`` to the target shares ``target`` (rows of
    112, zero off the legal moves), one value per position."""
    import torch

    if getattr(dist, "idx", None) is not None:  # the scorer's distribution over the legal actions
        return -torch.where(dist.valid, target.gather(1, dist.idx.clamp(min=0)) * dist.log_p, 0.0).sum(1)  # padding: -1
    log_p = dist.distribution.logits  # SB3's masked categorical: normalised log-probabilities
    return -torch.where(target > 0, target * log_p, 0.0).sum(1)


def warm_start(model, cfg, metadata: dict, log=print, cache: Path | None = None) -> list[dict]:
    """Run the rounds of the warm start on ``model`` (step 3); returns one report per round. With
    ``cache`` (a folder from ``open_cache``) it keeps its work there and takes up what is there."""
    imitate = cfg.imitate
    parts: list[Batch] = []
    reports = []
    for r in range(imitate.rounds):
        started = time.time()
        keep = ChunkStore(cache, r) if cache is not None else None
        done = keep.fitted() if keep is not None else None
        by_teacher = r == 0 and imitate.first == "teacher"
        student = None if by_teacher else NumpyPolicy.from_sb3(model.policy, metadata)
        if by_teacher and imitate.dataset:
            parts.append(teacher_positions(cfg, log))
        else:
            parts.append(gather(cfg, student, imitate.games, cfg.seed + 1000 * r, imitate.workers, keep))
        data = Batch.concat(parts)
        who = "the teacher" if by_teacher else "the student"
        log(f"imitation round {r + 1}/{imitate.rounds}: {len(parts[-1])} positions played by {who} (explore {imitate.explore}), {len(data)} in all")
        if done is not None:
            state, report = done
            model.policy.load_state_dict(state)
            log(f"  fitted before this run was stopped: agreement {report['agreement']:.3f} (from {cache})")
        else:
            report = dict(fit(model, data, cfg, log), round=r + 1, seconds=round(time.time() - started, 1))
            log(f"  agreement with {imitate.teacher} on held-out positions: {report['agreement']:.3f}")
            if keep is not None:
                keep.save_fit(model.policy.state_dict(), report)
        reports.append(report)
    return reports
