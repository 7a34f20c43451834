"""What a training config may ask of this machine, checked when the config is loaded (both trainers).

Sizes that allocate (the rollout buffer, the network, the environments, the games an evaluation or
a warm start keeps) are estimated in bytes, and together they must fit in this machine's memory;
threads and processes are at most ``PER_CORE`` per core. The estimates are floors of what the
trainers allocate, so a config refused here would have run out of memory (or aborted in libgomp
for its threads) later. ``sb3_problem`` and ``rllib_problem`` say what is too much, naming the keys,
and the configs' ``validate`` raises it as a one-line ``ConfigError``, before anything is written,
instead of a crash tens of seconds into the run.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OBS_SIZES
from allfives_env.privileged import PRIVILEGED_SIZE

#: threads, and processes, a config may ask for per core of this machine
PER_CORE = 8
FLOAT = 4
#: what an evaluation keeps per game: its task and its result (allfives_agents.tournament)
GAME_BYTES = 2_000
#: an environment: a process of SB3's SubprocVecEnv (an interpreter with numpy), or a game kept in
#: the learner's process (about 22 kB measured)
ENV_BYTES = {"subproc": 50 << 20, "dummy": 10 << 10, "batched": 10 << 10}
#: positions a warm-start game gives (236,790 in 3000 two-player games: about 80)
POSITIONS_PER_GAME = 80
#: the scalars a rollout step keeps beside its observation and action mask (action, reward, value, ...)
STEP_SCALARS = 8


class Need(NamedTuple):
    """A part of a run's memory: its estimate in bytes, the keys that size it, what it is."""

    bytes: int
    keys: tuple[str, ...]
    what: str


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def memory() -> int:
    """This machine's memory in bytes, or the container's limit when lower."""
    try:
        import psutil

        total = psutil.virtual_memory().total
    except ImportError:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit, encoding="ascii") as f:
                total = min(total, int(f.read().strip()))
        except (OSError, ValueError):  # no such file, or "max"
            pass
    return total


def count_problem(counts: dict[str, int]) -> str | None:
    """The first number of threads or processes above ``PER_CORE`` per core, said."""
    limit = PER_CORE * cores()
    for key, value in counts.items():
        if value > limit:
            return f"{key}: at most {PER_CORE} per core ({limit} on this machine of {cores()} cores), got {value}"
    return None


def memory_problem(needs: list[Need]) -> str | None:
    """The largest part, said, when the parts together exceed this machine's memory."""
    available = memory()
    if sum(n.bytes for n in needs) <= available:
        return None
    worst = max(needs, key=lambda n: n.bytes)
    return (f"{', '.join(worst.keys)}: {worst.what} needs about {_size(worst.bytes)} of memory, more than this "
            f"machine's {_size(available)}: lower {' or '.join(worst.keys)}")


def _size(n: int) -> str:
    return f"{n / 2**30:.3g} GiB"


def mlp_params(sizes: list[int]) -> int:
    """The weights and biases of fully connected layers of these sizes."""
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def network(params: int, batch: int, widths: int, keys: tuple[str, ...]) -> Need:
    """Weights, gradients, two optimizer moments and a copy for the pool; a batch's activations
    (forward and backward) over layers ``widths`` wide in all."""
    return Need(params * FLOAT * 5 + batch * widths * FLOAT * 3, keys, f"a network of {params} parameters")


def sb3_needs(cfg) -> list[Need]:
    """The memory parts of an SB3 run (train/config.py's ``TrainConfig``)."""
    from allfives_agents.nets import action_features as af

    net, version = cfg.net, cfg.net.obs_version
    steps = cfg.n_envs * cfg.ppo.get("n_steps", 2048)
    privileged = PRIVILEGED_SIZE if net.critic == "privileged" else 0  # the critic's extra values (training only)
    obs = OBS_SIZES[version] + privileged
    state = af.STATE_SIZE[version] if net.policy == "scorer" else OBS_SIZES[version]
    hidden = net.pi[-1] if net.pi else state
    params = mlp_params([state, *net.pi]) + mlp_params([state + privileged, *net.vf, 1]) + (hidden + 1) * NUM_ACTIONS
    widths = sum(net.pi) + sum(net.vf)
    if net.policy == "scorer":
        params += (hidden + 1 + af.N_FEATURES[version]) * net.scorer_width + net.scorer_width + 1
        widths += NUM_ACTIONS * net.scorer_width
    needs = [
        # SB3 keeps every step's observation, mask and scalars, and copies them all to train on them
        Need(2 * steps * (obs + NUM_ACTIONS + STEP_SCALARS) * FLOAT, ("n_envs", "ppo.n_steps"),
             f"a rollout buffer of {steps} steps"),
        network(params, cfg.ppo.get("batch_size", 64), widths, ("net.pi", "net.vf", "net.scorer_width", "ppo.batch_size")),
        Need(cfg.n_envs * ENV_BYTES[cfg.vec_env], ("n_envs",), f"{cfg.n_envs} environments ({cfg.vec_env})"),
        Need(max(cfg.eval.games, cfg.eval.final_games) * GAME_BYTES, ("eval.games", "eval.final_games"), "an evaluation's games"),
    ]
    if cfg.imitate.teacher:
        positions = cfg.imitate.games * max(cfg.imitate.rounds, 1) * POSITIONS_PER_GAME
        needs.append(Need(positions * (obs + NUM_ACTIONS) * FLOAT, ("imitate.games", "imitate.rounds"),
                          f"a warm start's {positions} positions"))
    return needs


def sb3_problem(cfg) -> str | None:
    """What an SB3 config asks beyond this machine (threads, processes, memory), or ``None``."""
    counts = {"torch_threads": cfg.torch_threads, "update_threads": cfg.update_threads, "env_workers": cfg.env_workers,
              "eval.workers": cfg.eval.workers, "imitate.workers": cfg.imitate.workers}
    if cfg.vec_env == "subproc":
        counts["n_envs (a process each with vec_env: subproc)"] = cfg.n_envs
    return count_problem(counts) or memory_problem(sb3_needs(cfg))


def rllib_needs(cfg) -> list[Need]:
    """The memory parts of an RLlib run (train/rllib_config.py's ``RLlibConfig``): the learner's, in the driver."""
    obs, hidden = OBS_SIZES[cfg.net.obs_version], list(cfg.net.hidden)
    batch = cfg.ppo["train_batch_size_per_learner"]
    params = mlp_params([obs, *hidden, NUM_ACTIONS]) + mlp_params([obs, *hidden, 1])
    return [
        # the episodes, the train batch and its tensors, each holding every step once
        Need(4 * batch * (obs + NUM_ACTIONS + STEP_SCALARS) * FLOAT, ("ppo.train_batch_size_per_learner",),
             f"a train batch of {batch} steps"),
        network(params, cfg.ppo["minibatch_size"], 2 * sum(hidden), ("net.hidden", "ppo.minibatch_size")),
        Need(cfg.eval.final_games * GAME_BYTES, ("eval.final_games",), "the final evaluation's games"),
    ]


def rllib_problem(cfg) -> str | None:
    """What an RLlib config asks beyond this machine (a local Ray's CPUs and runners, processes, memory), or ``None``."""
    counts = {"num_cpus": cfg.num_cpus, "eval.workers": cfg.eval.workers}
    if cfg.ray == "local":
        counts["num_env_runners (processes of a local Ray)"] = cfg.num_env_runners
    return count_problem(counts) or memory_problem(rllib_needs(cfg))
