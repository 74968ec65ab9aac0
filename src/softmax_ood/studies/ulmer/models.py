"""ReLU classifiers of the Ulmer & Cinà study and their stochastic variants.

All models share one interface (:class:`UncertaintyModel`):

* ``sample_logits(x, k_samples=None, generator=None) -> (S, N, C)`` logits, one slice per
  posterior sample / ensemble member (``S = 1`` for :class:`SingleNet`, ``S = K`` for
  :class:`MCDropoutNet` and :class:`BayesByBackpropNet`, ``S =`` number of members for
  :class:`DeepEnsemble`, ``S =`` kept chain samples for
  :class:`~softmax_ood.studies.ulmer.mcmc.MCMCNet`, the MCMC family of :mod:`.mcmc`);
* ``predict_log_probs(x, k_samples=None, generator=None) -> (S, N, C)``: ``log_softmax`` of those
  logits (stable for any logit size);
* ``predict_probs(...) -> (S, N, C)``: their ``exp``.

The predictions are differentiable in ``x`` (wrap calls in ``torch.no_grad()`` when only values
are needed). Randomness at prediction time (dropout masks, weight samples) is drawn from
``generator`` when one is given, so a seeded ``torch.Generator`` makes the stochastic models
deterministic functions of ``x`` (needed for input gradients, see
:func:`softmax_ood.studies.ulmer.uncertainty.gradient_norm`); without one the global RNG is used.

:see Paper: Ulmer & Cinà, "Know your limits", §3.3 (neural discriminator, Definitions 2-3; MC
    estimate of the predictive distribution with K samples from a variational posterior or an
    ensemble or MCMC). Gal & Ghahramani 2016 (MC dropout); Blundell et al. 2015 (Bayes by
    backprop); Lakshminarayanan et al. 2017 (deep ensembles); Welling & Teh 2011 (SGLD).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from softmax_ood.studies.ulmer.base import UncertaintyModel, single_thread, stacked_logits
from softmax_ood.studies.ulmer.mcmc import MCMCConfig, MCMCNet, sample_posterior
from softmax_ood.train import NonFiniteLossError, TrainConfig, build_optimizer

__all__ = [
    "KINDS",
    "MCMCNet",
    "ModelConfig",
    "UncertaintyModel",
    "ReLUMLP",
    "SingleNet",
    "MCDropoutNet",
    "BayesLinear",
    "BayesByBackpropNet",
    "DeepEnsemble",
    "ControlNet",
    "CONTROL_ACTIVATIONS",
    "build_model",
    "train_model",
    "single_thread",
]

KINDS = ("single", "mc_dropout", "bbb", "ensemble", "mcmc")
#: the control model's kind: outside the theorem's assumptions (see :class:`ControlNet`)
CONTROL = "control"
#: bounded smooth activations of the control's last hidden layer
CONTROL_ACTIVATIONS = {
    "gaussian": lambda t: torch.exp(-(t**2)),
    "tanh": torch.tanh,
}


@dataclass(frozen=True)
class ModelConfig:
    """Architecture and posterior settings of every model kind (no defaults: all from the config).

    Optimisation (epochs, batch size, optimiser, learning rate, weight decay) is the core's
    :class:`softmax_ood.train.TrainConfig`.

    :param hidden: hidden-layer widths of the ReLU MLP.
    :param dropout: dropout probability of ``mc_dropout`` (after every hidden ReLU).
    :param k_samples: forward samples at prediction (``mc_dropout``, ``bbb``): the paper's ``K``.
    :param n_members: members of a deep ensemble (its ``K``).
    :param prior_sigma: standard deviation of the zero-mean Gaussian prior of ``bbb`` and of
        the posterior ``mcmc`` samples.
    :param rho_init: initial :math:`\\rho` of ``bbb`` (std = softplus(rho), 0.0067 for -5).
    :param kl_weight: multiplier of the KL term of the ELBO (1 = the plain ELBO).
    :param control_activation: last hidden activation of the control model
        (:data:`CONTROL_ACTIVATIONS`).
    :param mcmc: the chain of ``mcmc`` (:class:`~softmax_ood.studies.ulmer.mcmc.MCMCConfig`, or
        its config mapping); its ``n_samples`` is the family's ``K``.
    """

    hidden: tuple[int, ...]
    dropout: float
    k_samples: int
    n_members: int
    prior_sigma: float
    rho_init: float
    kl_weight: float
    control_activation: str
    mcmc: MCMCConfig

    def __post_init__(self):
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        if not isinstance(self.mcmc, MCMCConfig):
            object.__setattr__(self, "mcmc", MCMCConfig(**self.mcmc))
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"hidden widths must be positive integers, got {self.hidden}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.k_samples < 1 or self.n_members < 1:
            raise ValueError("k_samples and n_members must be at least 1")


def _dropout(x: Tensor, p: float, generator: torch.Generator | None) -> Tensor:
    """Inverted dropout with masks drawn from ``generator``; the identity (no RNG use) if p = 0."""
    if p == 0.0:
        return x
    keep = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device) >= p
    return x * keep.to(x.dtype) / (1.0 - p)


class ReLUMLP(nn.Module):
    """``Linear -> ReLU [-> dropout]`` per hidden width, then a linear logit layer.

    :param in_dim: input features ``D``.
    :param n_classes: classes ``C``.
    :param hidden: hidden widths.
    :param dropout: dropout probability after every hidden ReLU, used only when ``forward`` is
        called with ``stochastic=True``.
    :param last_activation: activation of the last hidden layer: ``"relu"`` (every model of the
        paper) or a bounded smooth one of :data:`CONTROL_ACTIVATIONS` (the control model).
    """

    def __init__(
        self,
        in_dim: int,
        n_classes: int,
        hidden: Sequence[int],
        dropout: float = 0.0,
        last_activation: str = "relu",
    ):
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError("dropout must be in [0, 1)")
        if last_activation != "relu" and last_activation not in CONTROL_ACTIVATIONS:
            raise ValueError(
                f"unknown last activation {last_activation!r}; expected relu or one of "
                f"{', '.join(CONTROL_ACTIVATIONS)}"
            )
        self.last_activation = last_activation
        widths = [in_dim, *hidden]
        self.hidden = nn.ModuleList(
            nn.Linear(a, b) for a, b in zip(widths, widths[1:], strict=False)
        )
        self.out = nn.Linear(widths[-1], n_classes)
        self.dropout = float(dropout)

    def forward(
        self, x: Tensor, stochastic: bool = False, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits ``(N, C)``; dropout masks (if ``stochastic``) come from ``generator``."""
        last = len(self.hidden) - 1
        for i, layer in enumerate(self.hidden):
            if i == last and self.last_activation != "relu":
                x = CONTROL_ACTIVATIONS[self.last_activation](layer(x))
            else:
                x = F.relu(layer(x))
            if stochastic:
                x = _dropout(x, self.dropout, generator)
        return self.out(x)


class SingleNet(UncertaintyModel):
    """One deterministic ReLU network; ``S = 1`` whatever ``k_samples`` is."""

    kind = "single"

    def __init__(self, in_dim: int, n_classes: int, hidden: Sequence[int]):
        super().__init__()
        self.net = ReLUMLP(in_dim, n_classes, hidden)

    def sample_logits(self, x, k_samples=None, generator=None):
        return self.net(x).unsqueeze(0)

    def training_logits(self, x):
        return self.net(x)


class MCDropoutNet(UncertaintyModel):
    """A ReLU network whose dropout stays active at prediction: ``K`` masks -> ``K`` samples.

    With ``dropout = 0`` every sample equals the deterministic network (no RNG is consumed), so
    the model is then identical to :class:`SingleNet` with the same weights.
    """

    kind = "mc_dropout"

    def __init__(
        self, in_dim: int, n_classes: int, hidden: Sequence[int], dropout: float, k_samples: int
    ):
        super().__init__()
        self.net = ReLUMLP(in_dim, n_classes, hidden, dropout)
        self.k_samples = int(k_samples)

    def sample_logits(self, x, k_samples=None, generator=None):
        k = int(k_samples or self.k_samples)
        # one pass over K stacked copies: masks of shape (K, N, H) drawn at once
        return self.net(x.unsqueeze(0).expand(k, *x.shape), stochastic=True, generator=generator)

    def training_logits(self, x):
        return self.net(x, stochastic=True)


class BayesLinear(nn.Module):
    """Linear layer with a mean-field Gaussian posterior over weights and biases.

    :math:`w = \\mu + \\operatorname{softplus}(\\rho) \\odot \\varepsilon`,
    :math:`\\varepsilon \\sim \\mathcal{N}(0, I)` (reparameterisation trick); prior
    :math:`\\mathcal{N}(0, \\sigma_p^2 I)`.

    :param in_features: inputs.
    :param out_features: outputs.
    :param prior_sigma: prior standard deviation :math:`\\sigma_p`.
    :param rho_init: initial :math:`\\rho` of every weight and bias.
    """

    def __init__(self, in_features: int, out_features: int, prior_sigma: float, rho_init: float):
        super().__init__()
        ref = nn.Linear(in_features, out_features)  # nn.Linear's initialisation for the means
        self.weight_mu = nn.Parameter(ref.weight.detach().clone())
        self.bias_mu = nn.Parameter(ref.bias.detach().clone())
        self.weight_rho = nn.Parameter(torch.full_like(ref.weight, rho_init))
        self.bias_rho = nn.Parameter(torch.full_like(ref.bias, rho_init))
        self.prior_sigma = float(prior_sigma)

    def forward(self, x: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """``x W^T + b`` with fresh weight samples: one shared by the batch for ``x`` of shape
        ``(N, in)``; one per leading slice for ``x`` of shape ``(K, N, in)`` (``K`` samples drawn
        at once)."""
        lead = x.shape[:1] if x.dim() == 3 else ()
        w_eps = torch.randn((*lead, *self.weight_mu.shape), generator=generator, dtype=x.dtype)
        b_eps = torch.randn((*lead, *self.bias_mu.shape), generator=generator, dtype=x.dtype)
        w = self.weight_mu + F.softplus(self.weight_rho) * w_eps
        b = self.bias_mu + F.softplus(self.bias_rho) * b_eps
        if lead:
            return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        return F.linear(x, w, b)

    def kl(self) -> Tensor:
        """Closed-form :math:`\\mathrm{KL}(q \\,\\|\\, p)` summed over weights and biases.

        .. math::
            \\mathrm{KL} = \\sum_i \\log\\frac{\\sigma_p}{\\sigma_i}
                + \\frac{\\sigma_i^2 + \\mu_i^2}{2\\sigma_p^2} - \\frac12 \\;\\ge 0,
            \\quad = 0 \\iff \\mu_i = 0,\\ \\sigma_i = \\sigma_p.
        """
        total = self.weight_mu.new_zeros(())
        for mu, rho in ((self.weight_mu, self.weight_rho), (self.bias_mu, self.bias_rho)):
            sigma = F.softplus(rho)
            var_ratio = (sigma / self.prior_sigma) ** 2
            total = (
                total
                + 0.5
                * (var_ratio + (mu / self.prior_sigma) ** 2 - 1.0 - torch.log(var_ratio)).sum()
            )
        return total


class BayesByBackpropNet(UncertaintyModel):
    """A ReLU MLP of :class:`BayesLinear` layers; ``K`` weight samples at prediction.

    Trained on the negative ELBO per training point,
    :math:`\\frac1N \\sum_n -\\log p(y_n | x_n, w) + \\beta\\,\\mathrm{KL}(q \\| p) / N_\\text{train}`,
    with one weight sample per step (``beta = kl_weight``).
    """

    kind = "bbb"

    def __init__(
        self,
        in_dim: int,
        n_classes: int,
        hidden: Sequence[int],
        prior_sigma: float,
        rho_init: float,
        k_samples: int,
    ):
        super().__init__()
        widths = [in_dim, *hidden, n_classes]
        self.layers = nn.ModuleList(
            BayesLinear(a, b, prior_sigma, rho_init)
            for a, b in zip(widths, widths[1:], strict=False)
        )
        self.k_samples = int(k_samples)

    def _forward(self, x: Tensor, generator: torch.Generator | None) -> Tensor:
        for layer in self.layers[:-1]:
            x = F.relu(layer(x, generator))
        return self.layers[-1](x, generator)

    def sample_logits(self, x, k_samples=None, generator=None):
        k = int(k_samples or self.k_samples)
        return self._forward(x.unsqueeze(0).expand(k, *x.shape), generator)

    def training_logits(self, x):
        return self._forward(x, None)

    def kl(self) -> Tensor:
        """Total :math:`\\mathrm{KL}(q \\| p)` of all layers (``>= 0``)."""
        return sum(
            (layer.kl() for layer in self.layers), start=self.layers[0].weight_mu.new_zeros(())
        )


class DeepEnsemble(UncertaintyModel):
    """``M`` independently initialised and trained :class:`SingleNet` members; ``S = M``.

    ``k_samples`` is ignored: every member contributes one sample.
    """

    kind = "ensemble"

    def __init__(self, members: Sequence[SingleNet]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)
        self.k_samples = len(members)

    def sample_logits(self, x, k_samples=None, generator=None):
        return torch.stack([m.net(x) for m in self.members])

    def training_logits(self, x):
        raise RuntimeError("ensemble members are trained one by one (see train_model)")

    def first(self, k: int) -> DeepEnsemble:
        """The first ``k`` members as an ensemble of their own (the K-member ensemble of a
        2K-member run: members are seeded one by one)."""
        return DeepEnsemble(list(self.members)[:k])


class ControlNet(UncertaintyModel):
    r"""The control: a single network whose last hidden layer has a bounded smooth activation, so
    its logits stay bounded along every ray and Theorem 1's proof (Lemmas 2-3: logit differences
    growing without bound) does not apply to it. ``S = 1``.

    With the Gaussian activation :math:`e^{-t^2}` every last-layer unit whose pre-activation grows
    along the ray goes to 0, so the logits tend to the output bias and the prediction to
    :math:`\mathrm{softmax}(b)`, fixed before any data are seen to be far from certain for
    balanced classes. With ``tanh`` the units go to :math:`\pm 1` (a corner of the hidden cube),
    whose prediction can be as confident as a training point's: bounded logits alone do not
    prevent certainty.
    """

    kind = CONTROL

    def __init__(self, in_dim: int, n_classes: int, hidden: Sequence[int], activation: str):
        super().__init__()
        self.net = ReLUMLP(in_dim, n_classes, hidden, last_activation=activation)

    def sample_logits(self, x, k_samples=None, generator=None):
        return self.net(x).unsqueeze(0)

    def training_logits(self, x):
        return self.net(x)


def build_model(kind: str, in_dim: int, n_classes: int, cfg: ModelConfig) -> UncertaintyModel:
    """An untrained model of ``kind`` (one of :data:`KINDS`), initialised from the global RNG.

    An ensemble built this way has ``cfg.n_members`` members initialised one after the other;
    :func:`train_model` instead seeds every member independently. ``mcmc`` has no untrained
    form (its samples are drawn by :func:`train_model`).
    """
    if kind == "single":
        return SingleNet(in_dim, n_classes, cfg.hidden)
    if kind == "mc_dropout":
        return MCDropoutNet(in_dim, n_classes, cfg.hidden, cfg.dropout, cfg.k_samples)
    if kind == "bbb":
        return BayesByBackpropNet(
            in_dim, n_classes, cfg.hidden, cfg.prior_sigma, cfg.rho_init, cfg.k_samples
        )
    if kind == "ensemble":
        return DeepEnsemble(
            [SingleNet(in_dim, n_classes, cfg.hidden) for _ in range(cfg.n_members)]
        )
    if kind == CONTROL:
        return ControlNet(in_dim, n_classes, cfg.hidden, cfg.control_activation)
    if kind == "mcmc":
        raise ValueError("mcmc samples are drawn by train_model; there is no untrained model")
    raise ValueError(f"unknown model kind {kind!r}; expected one of {(*KINDS, CONTROL)}")


def _member_seed(seed: int, member: int) -> int:
    """Independent, reproducible seed of ensemble member ``member`` of run ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(member)]).generate_state(1)[0])


def _fit(
    model: UncertaintyModel, x: Tensor, y: Tensor, cfg: ModelConfig, optim: TrainConfig
) -> None:
    """The core optimiser (:func:`softmax_ood.train.build_optimizer`) on the cross-entropy (plus
    the scaled KL for ``bbb``, whose prior replaces weight decay) for ``optim.epochs`` epochs."""
    is_bbb = isinstance(model, BayesByBackpropNet)
    if is_bbb:
        optim = replace(optim, weight_decay=0.0)
    n = x.shape[0]
    batch = min(int(optim.batch_size), n)
    steps = -(-n // batch)
    opt, schedule = build_optimizer(model, optim, steps)
    model.train()
    for _ in range(optim.epochs):
        order = torch.randperm(n) if batch < n else None
        for start in range(0, n, batch):
            idx = order[start : start + batch] if order is not None else slice(None)
            loss = F.cross_entropy(model.training_logits(x[idx]), y[idx])
            if is_bbb:
                loss = loss + cfg.kl_weight * model.kl() / n
            if not torch.isfinite(loss):
                raise NonFiniteLossError(
                    f"training {model.kind} stopped: the loss became {loss.item()}"
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            schedule.step()
    model.eval()


class _Stacked(nn.Module):
    """``M`` ReLU MLPs of one shape as stacked weights ``(M, out, in)``: one batched pass."""

    def __init__(self, members: Sequence[SingleNet]):
        super().__init__()
        layers = [*members[0].net.hidden, members[0].net.out]
        self.weights = nn.ParameterList(
            nn.Parameter(torch.stack([self._layers(m)[i].weight.detach() for m in members]))
            for i in range(len(layers))
        )
        self.biases = nn.ParameterList(
            nn.Parameter(torch.stack([self._layers(m)[i].bias.detach() for m in members]))
            for i in range(len(layers))
        )

    @staticmethod
    def _layers(member: SingleNet) -> list[nn.Linear]:
        return [*member.net.hidden, member.net.out]

    def forward(self, x: Tensor) -> Tensor:
        """``x`` of shape ``(M, B, D)`` -> logits ``(M, B, C)``."""
        return stacked_logits(self.weights, self.biases, x)

    def write_back(self, members: Sequence[SingleNet]) -> None:
        with torch.no_grad():
            for m, member in enumerate(members):
                for i, layer in enumerate(self._layers(member)):
                    layer.weight.copy_(self.weights[i][m])
                    layer.bias.copy_(self.biases[i][m])


def _fit_members(
    members: Sequence[SingleNet], x: Tensor, y: Tensor, optim: TrainConfig, seeds: Sequence[int]
) -> None:
    """Train ensemble members side by side: stacked weights, each member's own minibatch order
    (``torch.randperm`` from a generator seeded with its seed), the loss summed over members (so
    each member's gradient is its own mean cross-entropy's). The optimisers of the core are
    elementwise, so every member follows the update it would follow alone."""
    stacked = _Stacked(members)
    n = x.shape[0]
    batch = min(int(optim.batch_size), n)
    steps = -(-n // batch)
    opt, schedule = build_optimizer(stacked, optim, steps)
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
    for _ in range(optim.epochs):
        orders = torch.stack([torch.randperm(n, generator=g) for g in gens])
        for start in range(0, n, batch):
            idx = orders[:, start : start + batch]
            logits = stacked(x[idx])
            loss = (
                F.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), y[idx].reshape(-1), reduction="sum"
                )
                / idx.shape[1]
            )
            if not torch.isfinite(loss):
                raise NonFiniteLossError(
                    f"training ensemble stopped: the loss became {loss.item()}"
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            schedule.step()
    stacked.write_back(members)
    for member in members:
        member.eval()


def train_model(
    kind: str,
    x: np.ndarray | Tensor,
    y: np.ndarray | Tensor,
    cfg: ModelConfig,
    optim: TrainConfig,
    seed: int,
) -> UncertaintyModel:
    """Train a model of ``kind`` on ``(x, y)`` deterministically.

    The global torch RNG is forked (the caller's RNG state is untouched) and seeded with
    ``torch.manual_seed(seed)``; initialisation, minibatch order, dropout masks and weight
    samples during training all come from it. Ensemble member ``m`` is initialised from its own
    seed derived from ``(seed, m)`` and sees its own minibatch order (a generator with that seed);
    the members are trained side by side (:func:`_fit_members`), each exactly as if alone.
    ``mcmc`` is sampled, not trained (:func:`~softmax_ood.studies.ulmer.mcmc.sample_posterior`:
    its chain starts at the seeded initialisation, ``optim`` is not used). Runs on CPU in
    ``float32`` with one thread.

    :param kind: ``"single"``, ``"mc_dropout"``, ``"bbb"``, ``"ensemble"``, ``"mcmc"`` or
        ``"control"``.
    :param x: features ``(N, D)``.
    :param y: integer labels ``(N,)`` in ``0 .. C-1`` (``C`` = ``max(y) + 1``).
    :param cfg: the architecture / posterior settings.
    :param optim: the core training settings (epochs, batch size, optimiser, lr, weight decay).
    :param seed: run seed.
    :return: the trained model in eval mode.
    """
    if kind not in (*KINDS, CONTROL):
        raise ValueError(f"unknown model kind {kind!r}; expected one of {(*KINDS, CONTROL)}")
    xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    yt = torch.as_tensor(np.asarray(y), dtype=torch.long)
    in_dim, n_classes = xt.shape[1], int(yt.max()) + 1
    with single_thread(), torch.random.fork_rng(devices=[]):
        if kind == "ensemble":
            members = []
            for m in range(cfg.n_members):
                torch.manual_seed(_member_seed(seed, m))
                members.append(SingleNet(in_dim, n_classes, cfg.hidden))
            _fit_members(
                members, xt, yt, optim, [_member_seed(seed, m) for m in range(len(members))]
            )
            model: UncertaintyModel = DeepEnsemble(members)
        elif kind == "mcmc":
            torch.manual_seed(seed)
            model = sample_posterior(xt, yt, cfg.hidden, cfg.prior_sigma, cfg.mcmc, seed)
        else:
            torch.manual_seed(seed)
            model = build_model(kind, in_dim, n_classes, cfg)
            _fit(model, xt, yt, cfg, optim)
    model.eval()
    return model
