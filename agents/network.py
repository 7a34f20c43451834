"""The torch modules of the project's policy network (needs torch; training and export use them).

``ScoringExtractor`` runs the policy MLP and the value MLP on the observation; the policy latent
is the MLP output followed by the observation itself, so that ``ActionScorer`` can build the
per-action features of ``agents.action_features`` and score all 112 actions with one shared
network, conditioned on the MLP's summary of the position:

    context = W_c h + b_c                       (h: the policy MLP output)
    logit_a = w_o . relu(W_f x_a + context) + b_o + (W_b h + b_b)_a
"""

from __future__ import annotations

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from allfives_env.engine.tiles import NUM_ACTIONS
from allfives_env.observation import OFFSETS, obs_version_of_size

from . import action_features as af


def mlp(sizes: list[int], activation) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class ScoringExtractor(nn.Module):
    """SB3 ``mlp_extractor``: ``(latent_pi, latent_vf) = ([mlp_pi(state), obs], mlp_vf(state))``,
    where ``state`` is the position part of the observation (``action_features.STATE_SIZE``)."""

    def __init__(self, feature_dim: int, pi: list[int], vf: list[int], activation) -> None:
        super().__init__()
        self.state_dim = af.STATE_SIZE[obs_version_of_size(feature_dim)]
        self.policy_net = mlp([self.state_dim, *pi], activation)
        self.value_net = mlp([self.state_dim, *vf], activation)
        self.hidden_dim = pi[-1] if pi else self.state_dim
        self.latent_dim_pi = self.hidden_dim + feature_dim
        self.latent_dim_vf = vf[-1] if vf else feature_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.policy_net(features[:, : self.state_dim]), features], dim=-1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features[:, : self.state_dim])


class ActionScorer(nn.Module):
    """SB3 ``action_net``: latent ``[h, obs]`` -> 112 logits (see the module docstring)."""

    def __init__(self, hidden_dim: int, width: int = 64, obs_version: int = 1) -> None:
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lookahead = obs_version == 2
        self.context = nn.Linear(hidden_dim, width)
        self.features = nn.Linear(af.N_FEATURES[obs_version], width, bias=False)
        self.out = nn.Linear(width, 1)
        self.base = nn.Linear(hidden_dim, NUM_ACTIONS)
        self.register_buffer("static", torch.from_numpy(af.STATIC.copy()))
        self.register_buffer("end_of_action", torch.from_numpy(af.END_OF_ACTION.copy()))
        self.register_buffer("expose", torch.from_numpy(af.EXPOSE.copy()))
        self.register_buffer("pip_of_tile", torch.from_numpy(af.PIP_OF_TILE.copy()))
        nn.init.orthogonal_(self.base.weight, gain=0.01)
        nn.init.zeros_(self.base.bias)
        nn.init.orthogonal_(self.out.weight, gain=0.01)
        nn.init.zeros_(self.out.bias)

    def action_features(self, obs: torch.Tensor) -> torch.Tensor:
        """Torch twin of ``agents.action_features.action_features``: ``(B, 112, F)``."""
        batch = obs.shape[0]
        mp, arm, unseen, hand = OFFSETS["move_points"], OFFSETS["arm_pip"], OFFSETS["unseen_pips"], OFFSETS["hand"]
        points = obs[:, mp : mp + NUM_ACTIONS].unsqueeze(-1)
        arm_pips = obs[:, arm : arm + 28].reshape(batch, 4, 7)[:, self.end_of_action, :]
        exposed = torch.einsum("bap,apq->baq", arm_pips, self.expose)
        unseen_exposed = torch.einsum("baq,bq->ba", exposed, obs[:, unseen : unseen + 7]).unsqueeze(-1)
        mine = obs[:, hand : hand + 28] @ self.pip_of_tile / 7.0
        mine_exposed = torch.einsum("baq,bq->ba", exposed, mine).unsqueeze(-1)
        static = self.static.unsqueeze(0).expand(batch, -1, -1)
        parts = [points, static, exposed, unseen_exposed, mine_exposed]
        if self.lookahead:
            parts += [obs[:, o : o + NUM_ACTIONS].unsqueeze(-1) for o in af.LOOKAHEAD_OFFSETS]
        return torch.cat(parts, dim=-1)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h = latent[:, : self.hidden_dim]
        obs = latent[:, self.hidden_dim :]
        x = self.action_features(obs)
        scores = torch.relu(self.features(x) + self.context(h).unsqueeze(1))
        return self.out(scores).squeeze(-1) + self.base(h)



class AllFivesPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy with the action-scoring head (``policy_kwargs``: ``net_arch``, ``scorer_width``)."""

    def __init__(self, *args, scorer_width: int = 64, **kwargs) -> None:
        self.scorer_width = scorer_width
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        arch = self.net_arch if isinstance(self.net_arch, dict) else {"pi": list(self.net_arch), "vf": list(self.net_arch)}
        self.mlp_extractor = ScoringExtractor(self.features_dim, list(arch.get("pi", [])), list(arch.get("vf", [])), self.activation_fn)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        version = obs_version_of_size(self.features_dim)
        self.action_net = ActionScorer(self.mlp_extractor.hidden_dim, self.scorer_width, version)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["scorer_width"] = self.scorer_width
        return data
