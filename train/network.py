"""The torch modules of the project's policy network (needs torch; training and export use them).

``ScoringExtractor`` runs the policy MLP and the value MLP on the observation; the policy latent
is the MLP output followed by the observation itself, so that ``ActionScorer`` can build the
per-action features of ``allfives_agents.nets.action_features`` and score all 112 actions with one shared
network, conditioned on the MLP's summary of the position:

    context = W_c h + b_c                       (h: the policy MLP output)
    logit_a = w_o . relu(W_f x_a + context) + b_o + (W_b h + b_b)_a

Given the legal-action mask (training and sampling always have one), ``AllFivesPolicy`` scores only
the legal actions (about 3 of 112 on average) and holds its distribution over them alone
(``LegalCategorical``): the masked distribution, its gradients and the chosen actions are those of
scoring all 112 and masking (tests/test_network.py), at a fraction of the cost. Without a mask
(export, ``NumpyPolicy``) every action is scored. The rollouts' passes (under inference mode, on the
CPU) score and sample in numpy on the same weights (``rollout_forward``).

With ``net.critic: privileged`` (``privileged_size`` > 0) the training observations end with the
tiles hidden from the learner (``allfives_env.privileged``); only the value network reads them, so
the actor, and everything exported or played from it, is a function of the view alone
(tests/test_privileged_critic.py).
"""

from __future__ import annotations

import contextlib

import torch
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn
from torch.nn import functional as F

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OFFSETS, obs_version_of_size

from allfives_agents.nets import action_features as af

from .rollout_forward import RolloutForward


def mlp(sizes: list[int], activation) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


#: ``net.precision``: the dtype of the hidden layers' matrix products in training (``None``: float32).
#: The weights stay float32, and exported policies run in float32.
PRECISIONS = {"float32": None, "bfloat16": torch.bfloat16}


def in_float32(policy):
    """``policy`` with its hidden layers back in float32 (``net.precision`` is a training speed-up):
    how exports, parity checks and ``NumpyPolicy`` run it. Returns it."""
    extractor = getattr(policy, "mlp_extractor", None)
    if isinstance(extractor, ScoringExtractor):
        extractor.autocast = None
    return policy


class ScoringExtractor(nn.Module):
    """SB3 ``mlp_extractor``: ``(latent_pi, latent_vf) = ([mlp_pi(state), view], mlp_vf(state))``,
    where ``view`` is the observation the policy plays on (the first ``view_dim`` values) and ``state``
    its position part (``action_features.STATE_SIZE``).

    With ``privileged_size`` > 0 (``net.critic: privileged``) the features end with that many
    privileged values (``allfives_env.privileged``): the critic reads ``[state, privileged]``, the
    actor never reads them, so the policy is a function of the view alone and runs on the view
    alone (``forward_actor`` takes either width)."""

    def __init__(self, feature_dim: int, pi: list[int], vf: list[int], activation, precision: str = "float32", privileged_size: int = 0) -> None:
        super().__init__()
        self.autocast = PRECISIONS[precision]
        self.view_dim = feature_dim - privileged_size
        self.privileged_size = privileged_size
        self.state_dim = af.STATE_SIZE[obs_version_of_size(self.view_dim)]
        self.policy_net = mlp([self.state_dim, *pi], activation)
        self.value_net = mlp([self.state_dim + privileged_size, *vf], activation)
        self.hidden_dim = pi[-1] if pi else self.state_dim
        self.latent_dim_pi = self.hidden_dim + self.view_dim
        self.latent_dim_vf = vf[-1] if vf else self.state_dim + privileged_size

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def hidden_and_value(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(h, view, latent_vf)``: the policy MLP's output, the view it plays on and the value MLP's
        output, the latents of ``forward`` without the copy of the view into ``latent_pi``."""
        return (*self._actor(features), self.forward_critic(features))

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat(self._actor(features), dim=-1)

    def _actor(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(h, view)``: the policy MLP's output and the view it plays on (without the privileged values)."""
        view = features if not self.privileged_size else features[:, : self.view_dim]
        return self._hidden(self.policy_net, view[:, : self.state_dim]), view

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        if not self.privileged_size:
            return self._hidden(self.value_net, features[:, : self.state_dim])
        if features.shape[-1] != self.view_dim + self.privileged_size:
            raise ValueError(f"the privileged critic reads {self.view_dim + self.privileged_size} values (the view's {self.view_dim} and "
                             f"{self.privileged_size} privileged); got {features.shape[-1]}: only training builds them, play needs the actor alone")
        return self._hidden(self.value_net, torch.cat([features[:, : self.state_dim], features[:, self.view_dim :]], dim=-1))

    def _hidden(self, net: nn.Sequential, inputs: torch.Tensor) -> torch.Tensor:
        """``net`` on ``inputs``, its matrix products in ``precision`` (the result in float32)."""
        if self.autocast is None:
            return net(inputs)
        if torch.is_inference_mode_enabled():
            return self._hidden_inference(net, inputs)
        with torch.autocast(inputs.device.type, dtype=self.autocast):
            return net(inputs).float()

    def _hidden_inference(self, net: nn.Sequential, inputs: torch.Tensor) -> torch.Tensor:
        """``_hidden`` without autocast's bookkeeping, for the rollouts' passes: the same casts and
        products (the same values exactly). The weights are cast at every call: the fused Adam
        changes them in place without a version count that a cache could watch."""
        x = inputs.to(self.autocast)
        for layer in net:
            if isinstance(layer, nn.Linear):
                x = F.linear(x, layer.weight.to(self.autocast), None if layer.bias is None else layer.bias.to(self.autocast))
            else:
                x = layer(x)
        return x.float()


class ActionScorer(nn.Module):
    """SB3 ``action_net``: latent ``[h, obs]`` -> 112 logits (see the module docstring)."""

    def __init__(self, hidden_dim: int, width: int = 64, obs_version: int = 1) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.context = nn.Linear(hidden_dim, width)
        self.features = nn.Linear(af.N_FEATURES[obs_version], width, bias=False)
        self.out = nn.Linear(width, 1)
        self.base = nn.Linear(hidden_dim, NUM_ACTIONS)
        # saved with every policy since the first (loading checks the names), though the lookups below replace static and expose
        self.register_buffer("static", torch.from_numpy(af.STATIC.copy()))
        self.register_buffer("end_of_action", torch.from_numpy(af.END_OF_ACTION.copy()))
        self.register_buffer("expose", torch.from_numpy(af.EXPOSE.copy()))
        self.register_buffer("pip_of_tile", torch.from_numpy(af.PIP_OF_TILE.copy()))
        self.register_buffer("static_exposed", torch.from_numpy(af.STATIC_EXPOSED.copy()), persistent=False)
        self.register_buffer("exposed_pip", torch.from_numpy(af.EXPOSED_PIP.copy()).flatten(), persistent=False)
        self.register_buffer("pip_and_any", torch.stack([torch.arange(7.0), torch.ones(7)], 1), persistent=False)
        self.register_buffer("per_action", torch.tensor([OFFSETS["move_points"], *af.FEATURE_OFFSETS[obs_version]]), persistent=False)
        self.register_buffer("every_action", torch.arange(NUM_ACTIONS).unsqueeze(0), persistent=False)
        nn.init.orthogonal_(self.base.weight, gain=0.01)
        nn.init.zeros_(self.base.bias)
        nn.init.orthogonal_(self.out.weight, gain=0.01)
        nn.init.zeros_(self.out.bias)

    def action_features(self, obs: torch.Tensor) -> torch.Tensor:
        """Torch twin of ``allfives_agents.nets.action_features.action_features``: ``(B, 112, F)``."""
        return self.legal_features(obs, self.every_action.expand(obs.shape[0], -1))

    def legal_features(self, obs: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """The features of the actions ``idx`` ``(B, K)`` only: ``(B, K, F)``."""
        rows = torch.arange(obs.shape[0], device=obs.device).unsqueeze(1).expand_as(idx)
        return self.pair_features(obs, rows.flatten(), idx.flatten()).unflatten(0, idx.shape)

    def pair_features(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The features of action ``actions[n]`` in position ``obs[rows[n]]``: ``(N, F)``. The arms'
        one-hot pips become pip numbers (7: no arm), so that the exposed pip and features 1-13 are
        lookups (``af.EXPOSED_PIP``, ``af.STATIC_EXPOSED``): the same values as the numpy products on
        any observation, whose ``arm_pip`` is one-hot or zeros per arm."""
        arm, unseen, hand = OFFSETS["arm_pip"], OFFSETS["unseen_pips"], OFFSETS["hand"]
        pip_and_any = obs[:, arm : arm + 28].reshape(-1, 7) @ self.pip_and_any  # per arm: its pip if one is shown, and whether one is
        shown = torch.where(pip_and_any[:, 1] > 0, pip_and_any[:, 0].long(), 7)  # (B * 4)
        row = actions * 8 + shown.index_select(0, rows * 4 + self.end_of_action.index_select(0, actions))  # (N)
        at = (rows * obs.shape[1] + actions).unsqueeze(-1) + self.per_action
        per_action = obs.reshape(-1).index_select(0, at.flatten()).view(at.shape)  # (N, 1 + lookahead)
        mine = obs[:, hand : hand + 28] @ self.pip_of_tile / 7.0
        zero = obs.new_zeros(obs.shape[0], 1)
        pips = torch.cat([obs[:, unseen : unseen + 7], zero, mine, zero], 1).flatten()  # per row: unseen, none, mine, none
        exposed = rows * 16 + self.exposed_pip.index_select(0, row)  # pip 7: none
        return torch.cat([per_action[:, :1], self.static_exposed.index_select(0, row), pips.index_select(0, exposed).unsqueeze(-1),
                          pips.index_select(0, exposed + 8).unsqueeze(-1), per_action[:, 1:]], dim=-1)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        """All 112 logits (export, ``NumpyPolicy``); with a mask the policy asks ``legal_logits``."""
        h = latent[:, : self.hidden_dim]
        x = self.action_features(latent[:, self.hidden_dim :].detach())
        return self.out(torch.relu(self.features(x) + self.context(h).unsqueeze(1))).squeeze(-1) + self.base(h)

    def legal_logits(self, latent: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``score_legal`` of the latent ``[h, obs]``."""
        return self.score_legal(latent[:, : self.hidden_dim], latent[:, self.hidden_dim :], legal)

    def score_legal(self, h: torch.Tensor, obs: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The logits of the legal actions of each row, the most in the batch (``K``) per row:
        ``(logits, idx, valid)``, each ``(B, K)``; ``idx`` holds each row's legal actions in
        increasing order, then -1, and ``valid`` marks the legal ones. Only the legal (row, action)
        pairs are scored (about 3 a row where ``K`` is often 11 or more)."""
        obs = obs.detach()  # the raw observation: no parameter below it
        counts = legal.sum(1)
        k = max(int(counts.max()), 1)
        rows, actions = legal.nonzero(as_tuple=True)  # row by row, each row's actions in increasing order
        at = rows * k + torch.arange(len(rows), device=rows.device) - (counts.cumsum(0) - counts)[rows]  # (row, slot) flattened
        x = self.pair_features(obs, rows, actions)
        base = (h.index_select(0, rows) * self.base.weight.index_select(0, actions)).sum(-1) + self.base.bias.index_select(0, actions)
        scores = self.out(torch.relu(self.features(x) + self.context(h).index_select(0, rows))).squeeze(-1) + base
        logits = scores.new_zeros(len(h) * k).index_copy(0, at, scores).view(-1, k)
        idx = actions.new_full((len(h) * k,), -1).index_copy_(0, at, actions).view(-1, k)
        return logits, idx, idx >= 0


class LegalCategorical(MaskableCategoricalDistribution):
    """SB3's masked categorical distribution, held over the legal actions alone when the policy
    had the mask (``proba_legal``): the same probabilities, log-probabilities and entropy as masking
    all 112 logits (an illegal action's probability is exactly 0 there too), for a fraction of the
    work. Without a mask (``proba_distribution``) it is SB3's own."""

    def __init__(self, action_dim: int) -> None:
        super().__init__(action_dim)
        self.idx: torch.Tensor | None = None

    def proba_distribution(self, action_logits: torch.Tensor):
        self.idx = None
        return super().proba_distribution(action_logits)

    def proba_legal(self, logits: torch.Tensor, idx: torch.Tensor, valid: torch.Tensor):
        """The distribution over the actions ``idx`` with ``logits``, the ``valid`` ones only, the
        others padding of action -1 (see ``ActionScorer.score_legal``)."""
        self.idx, self.valid = idx, valid
        self.log_p = torch.log_softmax(logits.masked_fill(~valid, _MASKED), dim=1)
        self.distribution = None
        return self

    def apply_masking(self, masks) -> None:
        if self.idx is None:  # held over the legal actions, the mask is applied already
            super().apply_masking(masks)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        if self.idx is None:
            return super().log_prob(actions)
        hit = self.idx == actions.long().reshape(-1, 1)  # never on a padded slot (-1)
        if not bool(hit.any(1).all()):
            raise ValueError("log_prob of an action that is not legal in its position")
        return torch.where(hit, self.log_p, 0.0).sum(1)

    def entropy(self) -> torch.Tensor:
        if self.idx is None:
            return super().entropy()
        return -torch.where(self.valid, self.log_p.exp() * self.log_p, 0.0).sum(1)

    def sample(self) -> torch.Tensor:
        if self.idx is None:
            return super().sample()
        return self.idx.gather(1, torch.multinomial(self.log_p.exp(), 1)).squeeze(1)

    def mode(self) -> torch.Tensor:
        if self.idx is None:
            return super().mode()
        return self.idx.gather(1, self.log_p.argmax(1, keepdim=True)).squeeze(1)


#: the logit SB3 gives a masked action (its probability underflows to exactly 0)
_MASKED = -1e8


class AllFivesPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the action-scoring head (``policy_kwargs``: ``net_arch``, ``scorer_width``,
    ``precision``: ``PRECISIONS``, ``privileged_size``: the privileged values at the end of each
    observation that only the critic reads, 0 for none; see ``ScoringExtractor``)."""

    def __init__(self, *args, scorer_width: int = 64, precision: str = "float32", privileged_size: int = 0, **kwargs) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        self.scorer_width = scorer_width
        self.precision = precision
        self.privileged_size = privileged_size
        self._legal_mask = None
        self._rollout_forward = RolloutForward(self)  # the passes under inference mode
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch if isinstance(self.net_arch, dict) else {"pi": list(self.net_arch), "vf": list(self.net_arch)}
        self.mlp_extractor = ScoringExtractor(self.features_dim, list(arch.get("pi", [])), list(arch.get("vf", [])), self.activation_fn, self.precision, self.privileged_size)

    @property
    def view_size(self) -> int:
        """The observation the actor plays on: the standard vector, without the privileged values."""
        return self.features_dim - self.privileged_size

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        version = obs_version_of_size(self.view_size)
        self.action_net = ActionScorer(self.mlp_extractor.hidden_dim, self.scorer_width, version)
        self.action_dist = LegalCategorical(NUM_ACTIONS)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **optimizer_kwargs(self.optimizer_class, self.optimizer_kwargs, self.device))

    # SB3 hands the mask to the distribution after the logits; the scorer takes it before, so
    # that it scores the legal actions only.
    def forward(self, obs, deterministic: bool = False, action_masks=None):
        if not torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
            with torch.inference_mode():  # the rollouts' passes (SB3 calls them under no_grad): no view or version tracking, numpy's scorer
                return self.forward(obs, deterministic, action_masks)
        if action_masks is None or not self.share_features_extractor:
            with self._legal(action_masks):
                return super().forward(obs, deterministic, action_masks)
        if torch.is_inference_mode_enabled() and self.device.type == "cpu":
            actions, values, log_prob = self._rollout_forward(obs, action_masks, deterministic)
            return actions.reshape((-1, *self.action_space.shape)), values, log_prob
        distribution, values = self._legal_distribution(obs, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions.reshape((-1, *self.action_space.shape)), values, distribution.log_prob(actions)

    def evaluate_actions(self, obs, actions, action_masks=None):
        if action_masks is None or not self.share_features_extractor:
            with self._legal(action_masks):
                return super().evaluate_actions(obs, actions, action_masks)
        distribution, values = self._legal_distribution(obs, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def _legal_distribution(self, obs, action_masks) -> tuple[LegalCategorical, torch.Tensor]:
        """SB3's ``forward`` and ``evaluate_actions`` up to the distribution and the values, on the
        extractor's ``hidden_and_value``: the scorer takes ``h`` and the view as they are, where the
        latent ``[h, view]`` would copy the view in and its gradient back out."""
        legal = torch.as_tensor(action_masks, device=self.device).reshape(-1, NUM_ACTIONS).bool()
        h, view, latent_vf = self.mlp_extractor.hidden_and_value(self.extract_features(obs))
        return self.action_dist.proba_legal(*self.action_net.score_legal(h, view, legal)), self.value_net(latent_vf)

    def get_distribution(self, obs, action_masks=None):
        with self._legal(action_masks):
            return super().get_distribution(obs, action_masks)

    def _get_action_dist_from_latent(self, latent_pi: torch.Tensor):
        if self._legal_mask is None:
            return self.action_dist.proba_distribution(action_logits=self.action_net(latent_pi))
        return self.action_dist.proba_legal(*self.action_net.legal_logits(latent_pi, self._legal_mask))

    @contextlib.contextmanager
    def _legal(self, action_masks):
        self._legal_mask = None if action_masks is None else torch.as_tensor(action_masks, device=self.device).reshape(-1, NUM_ACTIONS).bool()
        try:
            yield
        finally:
            self._legal_mask = None

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["scorer_width"] = self.scorer_width
        data["precision"] = self.precision
        if self.privileged_size:
            data["privileged_size"] = self.privileged_size
        return data


def _fused_adam_runs_on_cpu() -> bool:
    try:
        torch.optim.Adam([nn.Parameter(torch.zeros(1))], fused=True)
    except (RuntimeError, TypeError, ValueError):
        return False
    return True


#: whether this torch has the fused Adam on the CPU (2.4 and later): one kernel per step for all the
#: parameters, where the default runs a few per tensor (about 7% of an update of the 2p recipe)
FUSED_ADAM = _fused_adam_runs_on_cpu()


def optimizer_kwargs(optimizer_class, kwargs: dict, device) -> dict:
    """``kwargs`` for ``optimizer_class``, with Adam's fused step where this torch runs it on ``device``
    (and the caller chose no implementation)."""
    if (optimizer_class is torch.optim.Adam and FUSED_ADAM and torch.device(device).type == "cpu"
            and not {"fused", "foreach"} & set(kwargs)):
        return {**kwargs, "fused": True}
    return dict(kwargs)


def view_size(policy) -> int:
    """The observation size an SB3 policy plays on: ``AllFivesPolicy.view_size`` (without the privileged
    values its critic reads), else its whole observation."""
    return getattr(policy, "view_size", None) or int(policy.features_dim)


#: where ``AllFivesPolicy`` lived before: in ``agents.network`` until the agents package moved into
#: rooms, then in ``train.network`` until the folders installed under ``allfives_*`` names
LEGACY_MODULES = ("agents.network", "train.network")


def _policy_class_entry(path) -> dict:
    import json
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("data")).get("policy_class") or {}


def legacy_objects(path) -> dict:
    """``custom_objects`` for ``MaskablePPO.load`` of a zip that names ``AllFivesPolicy`` by its old
    module (``LEGACY_MODULES``): this class in its place. Empty for any other zip."""
    try:
        module = _policy_class_entry(path).get("__module__")
    except Exception:  # not a readable zip: the loader says so itself
        return {}
    return {"policy_class": AllFivesPolicy} if module in LEGACY_MODULES else {}


def load_ppo(path, **kwargs):
    """``MaskablePPO.load`` that also reads zips saved when the policy class lived in another module (``LEGACY_MODULES``)."""
    from sb3_contrib import MaskablePPO

    objects = {**legacy_objects(path), **kwargs.pop("custom_objects", {})}
    return MaskablePPO.load(path, custom_objects=objects, **kwargs)


def rename_policy_class(path) -> bool:
    """Rewrite a zip that names ``AllFivesPolicy`` by an old module so that it names this one
    (``allfives_train.network``), every other member byte for byte as it was; ``True`` if it changed."""
    import base64
    import json
    import os
    import zipfile

    import cloudpickle

    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info.filename)) for info in zf.infolist()]
    data = json.loads(dict((i.filename, b) for i, b in members)["data"])
    entry = data.get("policy_class") or {}
    if entry.get("__module__") not in LEGACY_MODULES:
        return False
    entry[":serialized:"] = base64.b64encode(cloudpickle.dumps(AllFivesPolicy)).decode()
    entry["__module__"] = AllFivesPolicy.__module__
    text = json.dumps(data, indent=4).encode()
    tmp = f"{path}.tmp"
    with zipfile.ZipFile(tmp, "w") as out:
        for info, payload in members:
            out.writestr(info, text if info.filename == "data" else payload)
    os.replace(tmp, path)
    return True
