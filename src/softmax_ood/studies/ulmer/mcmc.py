"""MCMC, the third Bayesian family of Ulmer & Cinà §3.3: samples of the posterior over the weights
of the study's ReLU network, drawn by stochastic-gradient Langevin dynamics (SGLD), and the
averaged prediction of the kept samples.

The sampler (Welling & Teh 2011, the paper's reference [52]): with a Gaussian prior
:math:`\\mathcal{N}(0, \\sigma_p^2 I)` on every weight and bias and a minibatch :math:`B` of the
:math:`N` training points, each step is

.. math::
    \\theta \\leftarrow \\theta - \\frac{\\varepsilon}{2}\\Big(\\frac{\\theta}{\\sigma_p^2}
    + \\frac{N}{|B|}\\sum_{i \\in B} -\\nabla_\\theta \\log p(y_i | x_i, \\theta)\\Big)
    + \\sqrt{\\varepsilon}\\,\\xi, \\qquad \\xi \\sim \\mathcal{N}(0, I),

the posterior at temperature 1 (no cold posterior). The chain starts where the single network
of the same seed starts (``nn.Linear``'s initialisation from the seeded global RNG), discards
``burn_in`` steps and keeps every ``thin``-th step after them, ``n_samples`` samples in all;
the minibatches and the noise come from a ``torch.Generator`` seeded with the run seed, so the
chain is a deterministic function of (data, settings, seed). The prediction averages the kept
samples' softmax, as for the other averaged families (:class:`MCMCNet`; ``S`` = kept samples).

Where it departs from the paper: §3.3 names MCMC ("markov-chain Monte-Carlo procedures
[52, 42]") and gives no sampler settings. Welling & Teh anneal the step size
(:math:`\\varepsilon_t = a (b + t)^{-\\gamma}`); here it is constant (the usual
constant-step SGLD, which samples a perturbed posterior but keeps moving); the minibatch
gradient's own noise is not corrected, so where per-example gradients are large the chain runs
hotter than temperature 1; there is no Metropolis correction (unlike involutive MCMC, [42], or
HMC); one chain per run. Whether the
chain mixed over the kept samples is measured, not assumed: :func:`effective_sample_size` of its
training-loss trace (:meth:`MCMCNet.effective_samples`) and of the far-out votes
(:func:`softmax_ood.studies.ulmer.scaling.certainty_at_scale`), judged by the study's mixing
premise.

:see Paper: Ulmer & Cinà, "Know your limits", §3.3; Welling & Teh 2011 (SGLD).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from softmax_ood.studies.ulmer.base import UncertaintyModel, stacked_logits
from softmax_ood.train import NonFiniteLossError

__all__ = ["MCMCConfig", "MCMCNet", "effective_sample_size", "sample_posterior"]


@dataclass(frozen=True)
class MCMCConfig:
    """The SGLD chain's settings (no defaults: all from the config ``ulmer.model.mcmc``).

    :param step_size: the constant step :math:`\\varepsilon` (the noise variance per step).
    :param burn_in: steps discarded before the first kept sample.
    :param thin: steps between two kept samples.
    :param n_samples: samples kept: the family's ``K``.
    :param batch_size: minibatch size of the likelihood gradient (the whole training set when
        it is at least ``N``).
    """

    step_size: float
    burn_in: int
    thin: int
    n_samples: int
    batch_size: int

    def __post_init__(self):
        if not self.step_size > 0:
            raise ValueError(f"mcmc.step_size must be positive, got {self.step_size}")
        if self.burn_in < 0 or self.thin < 1 or self.n_samples < 1 or self.batch_size < 1:
            raise ValueError(
                "mcmc needs burn_in >= 0 and thin, n_samples, batch_size >= 1, got "
                f"{self.burn_in}, {self.thin}, {self.n_samples}, {self.batch_size}"
            )


def effective_sample_size(trace: np.ndarray | Sequence[float]) -> float:
    """Effective sample size of one chain's scalar ``trace``: ``n / tau`` with the integrated
    autocorrelation time :math:`\\tau = -1 + 2\\sum_m P_m` summed over Geyer's initial monotone
    sequence of autocorrelation pairs :math:`P_m = \\rho_{2m} + \\rho_{2m+1}` (stopped at the
    first negative pair). A constant trace (the chain did not move) counts as one sample; NaN
    for fewer than 4 values."""
    x = np.asarray(trace, dtype=np.float64)
    n = x.size
    if n < 4:
        return math.nan
    x = x - x.mean()
    spectrum = np.fft.rfft(x, 2 * n)
    acov = np.fft.irfft(spectrum * np.conj(spectrum))[:n] / n
    if not acov[0] > 1e-300:
        return 1.0
    pairs = (acov[: n - n % 2] / acov[0]).reshape(-1, 2).sum(axis=1)
    total, previous = 0.0, math.inf
    for p in pairs:
        if p < 0:
            break
        previous = min(p, previous)
        total += previous
    return float(n / max(2.0 * total - 1.0, 1.0 / n))


class MCMCNet(UncertaintyModel):
    """The kept samples of an MCMC chain over a ReLU MLP's weights; ``S`` = kept samples.

    Samples are stored as stacked weights ``(S, out, in)`` and biases ``(S, out)`` per layer
    (frozen parameters, so ``.to(dtype)`` converts them) and evaluated in one batched pass.
    ``k_samples`` (default: all) takes the *first* ``k`` samples of the chain: the K-sample
    model is the chain stopped after K kept samples, its 2K version the same chain run on.
    Prediction draws nothing: ``generator`` is ignored.

    :param weights: per layer, the kept samples' weights ``(S, out, in)``.
    :param biases: per layer, their biases ``(S, out)``.
    :param trace_nll: per kept sample of the whole chain, its mean training cross-entropy
        (the trace :meth:`effective_samples` reads; kept whole by :meth:`first`).
    """

    kind = "mcmc"

    def __init__(self, weights: Sequence[Tensor], biases: Sequence[Tensor], trace_nll: Tensor):
        super().__init__()
        self.weights = nn.ParameterList(nn.Parameter(w, requires_grad=False) for w in weights)
        self.biases = nn.ParameterList(nn.Parameter(b, requires_grad=False) for b in biases)
        self.register_buffer("trace_nll", torch.as_tensor(trace_nll, dtype=torch.float64))
        self.k_samples = int(weights[0].shape[0])

    def first(self, k: int) -> MCMCNet:
        """The chain's first ``k`` kept samples as a model of its own (the same trace)."""
        if not 1 <= k <= self.k_samples:
            raise ValueError(f"k must be in 1..{self.k_samples}, got {k}")
        return MCMCNet(
            [w[:k].clone() for w in self.weights],
            [b[:k].clone() for b in self.biases],
            self.trace_nll.clone(),
        )

    def sample_logits(self, x, k_samples=None, generator=None):
        k = int(k_samples or self.k_samples)
        if k > self.k_samples:
            raise ValueError(f"the chain kept {self.k_samples} samples, {k} were asked for")
        weights = [w[:k] for w in self.weights]
        biases = [b[:k] for b in self.biases]
        return stacked_logits(weights, biases, x.unsqueeze(0).expand(k, *x.shape))

    def training_logits(self, x):
        raise RuntimeError("MCMC samples are drawn by sample_posterior, not trained")

    def effective_samples(self) -> float:
        """:func:`effective_sample_size` of the whole chain's training-loss trace."""
        return effective_sample_size(self.trace_nll.numpy())


def _potential(layers: Sequence[nn.Linear], x: Tensor, y: Tensor, n: int, prior_sigma: float):
    """:math:`U(\\theta) = -\\frac{N}{|B|}\\sum_B \\log p(y|x,\\theta) + \\lVert\\theta\\rVert^2
    / (2\\sigma_p^2)` on the minibatch ``(x, y)`` of a training set of ``n`` points."""
    h = x
    for layer in layers[:-1]:
        h = F.relu(layer(h))
    nll = F.cross_entropy(layers[-1](h), y, reduction="sum") * (n / y.shape[0])
    prior = sum((p**2).sum() for layer in layers for p in layer.parameters())
    return nll + prior / (2.0 * prior_sigma**2)


def sample_posterior(
    x: Tensor, y: Tensor, hidden: Sequence[int], prior_sigma: float, cfg: MCMCConfig, seed: int
) -> MCMCNet:
    """Run the SGLD chain (module docstring) on ``(x, y)`` and keep its samples.

    The initial weights come from the global torch RNG (seeded by the caller,
    :func:`softmax_ood.studies.ulmer.models.train_model`); minibatches (drawn without
    replacement, ``cfg.batch_size`` per step) and the noise from a generator seeded with
    ``seed``.

    :raises NonFiniteLossError: the potential became non-finite (the step is too large).
    """
    n, n_classes = x.shape[0], int(y.max()) + 1
    widths = [x.shape[1], *hidden, n_classes]
    layers = [nn.Linear(a, b) for a, b in zip(widths, widths[1:], strict=False)]
    params = [p for layer in layers for p in layer.parameters()]
    gen = torch.Generator().manual_seed(int(seed))
    batch = min(int(cfg.batch_size), n)
    eps = float(cfg.step_size)
    kept: list[list[Tensor]] = []
    for step in range(cfg.burn_in + cfg.n_samples * cfg.thin):
        idx = torch.randperm(n, generator=gen)[:batch] if batch < n else slice(None)
        u = _potential(layers, x[idx], y[idx], n, prior_sigma)
        if not torch.isfinite(u):
            raise NonFiniteLossError(
                f"sampling mcmc stopped at step {step}: the potential became {u.item()} "
                "(lower ulmer.model.mcmc.step_size)"
            )
        grads = torch.autograd.grad(u, params)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
                p.add_(-0.5 * eps * g + math.sqrt(eps) * noise)
        if step >= cfg.burn_in and (step - cfg.burn_in + 1) % cfg.thin == 0:
            kept.append([p.detach().clone() for p in params])
    weights = [torch.stack([s[2 * i] for s in kept]) for i in range(len(layers))]
    biases = [torch.stack([s[2 * i + 1] for s in kept]) for i in range(len(layers))]
    with torch.no_grad():
        logits = stacked_logits(weights, biases, x.unsqueeze(0).expand(len(kept), *x.shape))
        nll = F.cross_entropy(logits.transpose(1, 2), y.expand(len(kept), n), reduction="none")
    return MCMCNet(weights, biases, nll.mean(dim=1).to(torch.float64))
