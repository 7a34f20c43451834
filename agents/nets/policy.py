"""``ppo:PATH``: a trained policy as an agent, run in numpy.

``PATH`` is either an SB3 ``MaskablePPO`` zip (its weights read once with torch's
``weights_only`` loader; nothing in the zip is unpickled, so a crafted file cannot run code) or a
``.npz`` actor exported from one (``NumpyPolicy.save``: numpy only, loads in milliseconds; the
training pool's snapshots use it). Either way the actor network (observation -> 112 logits) runs
as numpy matrix products; the agent plays the legal move with the highest logit.

The observation layout a policy was trained on is checked when it loads: a policy built for an
observation size or ``OBS_VERSION`` this package does not build is refused with a message naming
both. The policy's ``obs_version`` (1 or 2, from its weights' shapes) picks its encoder. The number of
players (and partnerships) it was trained for is checked against a game's rules by
``check_policy_players``, the one check the server, ``allfives tournament`` and ``allfives play`` use.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile

import numpy as np

from allfives_env.engine.files import POLICY_MAX_BYTES, refusal
from allfives_env.engine.rules import Rules
from allfives_env.observation import OBS_SIZES, OBS_VERSION, GameObserver, encoder, obs_version_of_size
from allfives_env.observation import check_layout as layout_problem

from .action_features import N_FEATURES, STATE_SIZE, VERSION_OF_FEATURES, action_features, pair_features
from ..base import Agent

METADATA_NAME = "allfives.json"


def _relu(x):
    return np.maximum(x, 0.0)


def _identity(x):
    return x


#: the activations by SB3's class name (module-level functions, so a policy pickles to worker processes)
_ACTIVATIONS = {"Tanh": np.tanh, "ReLU": _relu, "Identity": _identity}


class PolicyFileError(ValueError):
    """A policy file that is missing, corrupt, or built for another observation layout."""


class PolicyPlayersError(ValueError):
    """A policy asked to play a game for another number of players (or partnerships) than it was trained for."""


def check_policy_file(path: str) -> None:
    """``PolicyFileError`` for a policy file that is missing, or that is not a regular file of at
    most ``POLICY_MAX_BYTES`` (read by neither runtime)."""
    if not os.path.exists(path):
        raise PolicyFileError(f"policy file not found: {path}")
    refused = refusal(path, POLICY_MAX_BYTES)
    if refused:
        raise PolicyFileError(f"policy file {path}: {refused}")


def agent_networks(agent) -> dict:
    """The networks an agent reads, by option (``Agent.networks()``; an agent from elsewhere: its ``policy``)."""
    if hasattr(agent, "networks"):
        return agent.networks()
    network = getattr(agent, "policy", None)
    return {} if network is None else {"policy": network}


def trained_rules(agent, network: str = "policy") -> Rules | None:
    """The ``Rules`` a policy agent was trained on, from its file's metadata (``network``: the
    option naming it); ``None`` for agents without that network and policies that do not record
    them. ``PolicyFileError`` naming the agent when the recorded rules are invalid."""
    raw = getattr(agent_networks(agent).get(network), "rules", None)
    if raw is None:
        return None
    try:
        return Rules.from_dict(raw)
    except (TypeError, ValueError) as exc:
        name = getattr(agent, "name", type(agent).__name__)
        raise PolicyFileError(f"{name}: the rules in the policy's metadata are invalid: {exc}") from None


def describe_players(rules: Rules) -> str:
    """``"2 players"``, ``"4 players in partnerships"``, ``"4 players, cut-throat"``."""
    if rules.partnerships:
        return f"{rules.num_players} players in partnerships"
    return f"{rules.num_players} players" + (", cut-throat" if rules.num_players == 4 else "")


def check_trained_players(name: str, trained: Rules | None, rules: Rules, what: str = "this game") -> None:
    """``PolicyPlayersError`` if ``trained`` (the policy ``name``'s rules, ``None``: unknown) has another
    number of players or partnerships than ``rules`` (``what`` they are for, in the message)."""
    if trained is not None and (rules.num_players, rules.partnerships) != (trained.num_players, trained.partnerships):
        raise PolicyPlayersError(
            f"the policy {name} was trained for {describe_players(trained)} "
            f"(rules {json.dumps(trained.to_dict())}); {what} is for {describe_players(rules)}"
        )


def check_policy_players(agent, rules: Rules, what: str = "this game") -> None:
    """Refuse (``ValueError``) to seat a policy agent in a game of ``rules`` for another number of
    players or partnerships than it was trained for. Agents without a policy, and policies that do
    not record their rules, pass. Every network the agent reads is checked (``Agent.networks()``:
    a search's prior and its model of play). The server, ``allfives tournament`` and ``allfives
    play`` call this."""
    for network in agent_networks(agent):
        check_trained_players(getattr(agent, "name", type(agent).__name__), trained_rules(agent, network), rules, what)


class NumpyPolicy:
    """The actor of a trained policy as numpy arrays: observation -> 112 logits.

    ``kind`` is ``"mlp"`` (SB3's plain MLP policy: hidden layers, then a linear action layer) or
    ``"scorer"`` (the project's ``AllFivesPolicy``: hidden layers, then the shared action scorer of
    ``allfives_train.network``). ``params`` holds the arrays by name: ``w0, b0, ...`` for the hidden (and,
    for ``mlp``, the last) layers; for ``scorer`` also ``context_w, context_b, features_w, out_w,
    out_b, base_w, base_b``.
    """

    def __init__(self, kind: str, params: dict[str, np.ndarray], activation: str, metadata: dict | None = None):
        if kind not in ("mlp", "scorer"):
            raise PolicyFileError(f"unknown policy kind {kind!r}")
        if activation not in _ACTIVATIONS:
            raise PolicyFileError(f"unsupported activation {activation!r}; supported: {', '.join(_ACTIVATIONS)}")
        self.kind = kind
        self.params = {k: np.asarray(v, np.float32) for k, v in params.items()}
        self.activation = activation
        self._act = _ACTIVATIONS[activation]
        self.metadata = dict(metadata or {})
        self.hidden = sum(1 for k in self.params if k.startswith("w") and k[1:].isdigit())
        if kind == "mlp":
            self.hidden -= 1
        first = self.params["w0"] if "w0" in self.params else self.params["base_w"]
        try:
            if kind == "scorer":
                width = self.params["features_w"].shape[1]
                if width not in VERSION_OF_FEATURES:
                    raise ValueError(f"the scorer takes {width} action features; known: {sorted(N_FEATURES.values())}")
                self.obs_version = VERSION_OF_FEATURES[width]
                self.obs_size = OBS_SIZES[self.obs_version]
                self.state_size = STATE_SIZE[self.obs_version]
            else:
                self.obs_size = self.state_size = first.shape[1]
                self.obs_version = obs_version_of_size(self.obs_size)
        except (KeyError, ValueError, IndexError) as exc:
            raise PolicyFileError(f"the policy's weights fit no observation layout of this package: {exc}") from None
        if first.shape[1] != self.state_size:
            raise PolicyFileError(f"the policy's first layer takes {first.shape[1]} values; OBS_VERSION {self.obs_version} gives it {self.state_size}")
        self.encode = encoder(self.obs_version)

    @classmethod
    def from_sb3(cls, policy, metadata: dict | None = None) -> "NumpyPolicy":
        """Extract the actor of an SB3 ``MaskableActorCriticPolicy`` (plain MLP or ``AllFivesPolicy``)."""
        activation = "Identity"
        for module in policy.mlp_extractor.policy_net:
            if not hasattr(module, "weight"):
                activation = type(module).__name__
        return cls.from_state_dict(policy.state_dict(), activation, metadata)

    @classmethod
    def from_state_dict(cls, state: dict, activation: str, metadata: dict | None = None) -> "NumpyPolicy":
        """The actor from an SB3 policy's ``state_dict`` (tensors or arrays by parameter name)."""
        prefix = "mlp_extractor.policy_net."
        layers = sorted({int(k[len(prefix):].split(".")[0]) for k in state if k.startswith(prefix)})
        params: dict[str, np.ndarray] = {}
        for i, layer in enumerate(layers):
            params[f"w{i}"] = _np(state[f"{prefix}{layer}.weight"])
            params[f"b{i}"] = _np(state[f"{prefix}{layer}.bias"])
        if not layers:
            activation = "Identity"
        if "action_net.context.weight" in state:
            kind = "scorer"
            for name in ("context", "out", "base"):
                params[f"{name}_w"] = _np(state[f"action_net.{name}.weight"])
                params[f"{name}_b"] = _np(state[f"action_net.{name}.bias"])
            params["features_w"] = _np(state["action_net.features.weight"])
        else:
            kind = "mlp"
            params[f"w{len(layers)}"] = _np(state["action_net.weight"])
            params[f"b{len(layers)}"] = _np(state["action_net.bias"])
        return cls(kind, params, activation, metadata)

    @property
    def rules(self) -> dict | None:
        """The rules (as a dict) the policy was trained on, from its metadata; ``None`` if unknown."""
        return self.metadata.get("rules")

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Action logits for one observation ``(obs_size,)`` or a batch ``(N, obs_size)``."""
        x = np.asarray(obs, np.float32)
        single = x.ndim == 1
        if x.shape[-1] != self.obs_size:
            raise ValueError(f"observation has {x.shape[-1]} values; this policy takes {self.obs_size}")
        if single:
            x = x[None]
        p = self.params
        h = self._hidden(x)
        if self.kind == "mlp":
            out = h @ p[f"w{self.hidden}"].T + p[f"b{self.hidden}"]
        else:
            feats = action_features(x) @ p["features_w"].T  # (B, 112, width)
            context = h @ p["context_w"].T + p["context_b"]
            scores = np.maximum(feats + context[:, None, :], 0.0)
            out = (scores @ p["out_w"].T)[..., 0] + p["out_b"] + h @ p["base_w"].T + p["base_b"]
        return out[0] if single else out

    def _hidden(self, x: np.ndarray) -> np.ndarray:
        """The last hidden layer's activations for a batch of observations."""
        p = self.params
        h = x[:, : self.state_size]
        for i in range(self.hidden):
            h = self._act(h @ p[f"w{i}"].T + p[f"b{i}"])
        return h

    def pair_logits(self, obs: np.ndarray, rows, actions) -> np.ndarray:
        """``(P,)``: the logit of action ``actions[i]`` in observation ``obs[rows[i]]``, equal to
        ``logits(obs)[rows, actions]``; the scorer computes only those actions."""
        x = np.asarray(obs, np.float32)
        if x.ndim != 2 or x.shape[1] != self.obs_size:
            raise ValueError(f"observations must be (N, {self.obs_size}), got {x.shape}")
        rows = np.asarray(rows, np.int64)
        actions = np.asarray(actions, np.int64)
        return self.pair_logits_of_hidden(self._hidden(x), x, rows, actions)

    def pair_logits_of_hidden(self, h: np.ndarray, obs: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``pair_logits`` given the last hidden layer's activations ``h`` of ``obs`` (the learner's
        rollouts compute them in torch, as its updates do); ``rows`` and ``actions`` int64 arrays."""
        p = self.params
        if self.kind == "mlp":
            return (h @ p[f"w{self.hidden}"].T + p[f"b{self.hidden}"])[rows, actions]
        feats = pair_features(obs, rows, actions) @ p["features_w"].T  # (P, width)
        context = h @ p["context_w"].T + p["context_b"]
        scores = np.maximum(feats + context[rows], 0.0)
        base = (h @ p["base_w"].T)[rows, actions] + p["base_b"][actions]  # as in logits(): every action of each row
        return (scores @ p["out_w"].T)[:, 0] + p["out_b"][0] + base

    def save(self, path) -> None:
        """Write the actor as ``.npz`` (numpy only)."""
        meta = dict(self.metadata, activation=self.activation, kind=self.kind)
        arrays = dict(self.params)
        arrays["metadata"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        tmp = f"{path}.tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path) -> "NumpyPolicy":
        """Read an SB3 zip or a ``.npz`` actor; ``PolicyFileError`` names the path and the problem."""
        path = os.fspath(path)
        check_policy_file(path)
        if path.endswith(".npz"):
            policy = cls._load_npz(path)
        else:
            policy = cls._load_sb3(path)
        check_layout(policy.metadata, policy.obs_size, path)
        return policy

    @classmethod
    def _load_npz(cls, path: str) -> "NumpyPolicy":
        try:
            with np.load(path) as data:
                meta = json.loads(bytes(data["metadata"]).decode())
                params = {k: data[k] for k in data.files if k != "metadata"}
            return cls(meta.get("kind", "mlp"), params, meta.get("activation", "Tanh"), meta)
        except PolicyFileError:
            raise
        except Exception as exc:  # zipfile, pickle, key and JSON errors all mean a bad file
            raise PolicyFileError(f"not a readable policy file: {path} ({type(exc).__name__}: {exc})") from None

    @classmethod
    def _load_sb3(cls, path: str) -> "NumpyPolicy":
        """The actor of an SB3 zip, read without unpickling anything: the weights with
        ``torch.load(weights_only=True)``, the activation from the readable part of ``data``
        (SB3's own ``load`` would unpickle several members of ``data``, and those can run code)."""
        metadata = read_zip_metadata(path)
        try:
            import torch
        except ImportError as exc:
            raise PolicyFileError(f"loading {path} needs torch ({exc})") from None
        try:
            with zipfile.ZipFile(path) as zf:
                data = json.loads(zf.read("data").decode())
                state = torch.load(io.BytesIO(zf.read("policy.pth")), map_location="cpu", weights_only=True)
            return cls.from_state_dict(state, _activation_of(data), metadata)
        except PolicyFileError:
            raise
        except Exception as exc:  # zipfile, JSON, torch and key errors all mean a bad file
            raise PolicyFileError(f"not a readable policy file: {path} ({type(exc).__name__}: {exc})") from None


def _activation_of(data: dict) -> str:
    """The activation's class name from the readable copy of ``policy_kwargs`` that SB3 writes
    beside its pickle (``"<class 'torch.nn.modules.activation.Tanh'>"``); SB3's default is Tanh."""
    kwargs = data.get("policy_kwargs")
    text = kwargs.get("activation_fn") if isinstance(kwargs, dict) else None
    if text is None:
        return "Tanh"
    match = re.fullmatch(r"<class '[\w.]*\.(\w+)'>", str(text))
    if match is None:
        raise PolicyFileError(f"unreadable activation {text!r} in the model's policy_kwargs")
    return match.group(1)


def _np(t) -> np.ndarray:
    if hasattr(t, "detach"):
        t = t.detach().cpu().numpy()
    return np.asarray(t, np.float32)


def read_zip_metadata(path: str) -> dict:
    """The ``allfives.json`` that training adds to a model zip ({} if absent)."""
    try:
        with zipfile.ZipFile(path) as zf:
            if METADATA_NAME in zf.namelist():
                return json.loads(zf.read(METADATA_NAME).decode())
    except (zipfile.BadZipFile, OSError, ValueError, RecursionError) as exc:
        raise PolicyFileError(f"not a readable policy file: {path} ({type(exc).__name__}: {str(exc)[:200]})") from None
    return {}


def check_layout(metadata: dict, obs_size: int, path: str) -> None:
    """Refuse a policy built for an observation layout this package does not build."""
    version = metadata.get("obs_version")
    if version is None:  # no metadata: the version the size implies (version 1 for a size of none)
        version = next((v for v, n in OBS_SIZES.items() if n == obs_size), OBS_VERSION)
    problem = layout_problem(version, obs_size)
    if problem is not None:
        raise PolicyFileError(f"{path} was built for {problem}")


_SHARED: dict[tuple, NumpyPolicy] = {}
_SHARED_MAX = 32


def load_shared(path) -> NumpyPolicy:
    """``NumpyPolicy.load(path)``, but one object per unchanged file (same path, size and time of
    change) for the whole process, so that many agents on one snapshot share it (and a vector of
    games asks it once for all of them). Policies are never changed after loading."""
    real = os.path.realpath(os.fspath(path))
    try:
        stat = os.stat(real)
    except OSError:
        return NumpyPolicy.load(path)  # its error names the file
    key = (real, stat.st_size, stat.st_mtime_ns)
    policy = _SHARED.get(key)
    if policy is None:
        policy = NumpyPolicy.load(path)
        if len(_SHARED) >= _SHARED_MAX:
            del _SHARED[next(iter(_SHARED))]
        _SHARED[key] = policy
    return policy


#: ``PPOAgent.act_games``' observers, per rules and observation version
_OBSERVERS: dict[tuple, GameObserver] = {}


class PPOAgent(Agent):
    """Plays the legal move with the highest logit of a trained policy (deterministic)."""

    name = "ppo"

    def __init__(self, path_or_policy, seed: int | None = None) -> None:
        super().__init__(seed)
        if isinstance(path_or_policy, NumpyPolicy):
            self.policy = path_or_policy
        else:
            self.policy = load_shared(path_or_policy)
            self.name = f"ppo:{path_or_policy}"

    def act(self, view) -> int:
        return self.act_batch([view])[0]

    @property
    def batch_key(self):
        """The vector environments' batch protocol (``allfives_env.vector``): agents on one network
        answer for each other's views."""
        return self.policy

    def act_batch(self, views) -> list[int]:
        """``[act(v) for v in views]``: one forward pass for all the views that have a choice, which
        scores their legal moves only (``NumpyPolicy.pair_logits``); the first of the best."""
        actions = [v.legal_actions[0] for v in views]
        chosen = [i for i, v in enumerate(views) if len(v.legal_actions) > 1]
        if chosen:
            obs = np.empty((len(chosen), self.policy.obs_size), np.float32)
            for row, i in enumerate(chosen):
                self.policy.encode(views[i], obs[row])
            for i, action in zip(chosen, self._best(obs, [views[i].legal_actions for i in chosen])):
                actions[i] = action
        return actions

    def act_games(self, games) -> list[int]:
        """``act_batch`` of the views of ``games``, pairs ``(game, seat)`` of engine games and the
        seat to move, without building the views: the observations and legal moves come from the
        engine's observer (``allfives_env.observation.GameObserver``, in C where it is built), the
        same bits as the views' (tests/test_game_moves.py)."""
        observed = [self._observer(game.rules)(game, seat) for game, seat in games]
        legal = [np.flatnonzero(mask) for _, mask in observed]
        for (game, seat), moves in zip(games, legal):
            if not len(moves):
                raise ValueError(f"seat {seat} has no move to choose: the game is over or seat {game.current_player} is to move")
        chosen = [i for i, moves in enumerate(legal) if len(moves) > 1]
        actions = [int(moves[0]) for moves in legal]
        if chosen:
            obs = np.stack([observed[i][0] for i in chosen])
            for i, action in zip(chosen, self._best(obs, [legal[i] for i in chosen])):
                actions[i] = int(action)
        return actions

    def _observer(self, rules) -> GameObserver:
        key = (rules, self.policy.obs_version)
        observer = _OBSERVERS.get(key)
        if observer is None:  # one per rules and version for the process: its rows follow each other in memory
            observer = _OBSERVERS[key] = GameObserver(rules, self.policy.obs_version)
        return observer

    def _best(self, obs: np.ndarray, legal: list) -> list[int]:
        """Per row of ``obs``, the first of its ``legal`` moves (ascending) with the highest logit."""
        counts = np.fromiter(map(len, legal), np.int64, len(legal))
        logits = self.policy.pair_logits(obs, np.repeat(np.arange(len(legal)), counts), np.concatenate(legal))
        starts = np.cumsum(counts) - counts
        return [legal[row][int(np.argmax(logits[start : start + count]))] for row, (start, count) in enumerate(zip(starts, counts))]
