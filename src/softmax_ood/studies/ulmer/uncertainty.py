"""The four uncertainty metrics of Ulmer & Cinà §3.3 and the norms of their input gradients.

Every metric takes per-sample **log**-probabilities ``log_probs`` of shape ``(S, N, C)`` (``S``
posterior samples / ensemble members, ``N`` points, ``C`` classes; ``S = 1`` for a single network)
and returns one value per point, shape ``(N,)``. With :math:`p^{(s)} = \\exp(\\log p^{(s)})` and the
MC mean :math:`\\bar p = \\frac1S \\sum_s p^{(s)}` (the paper's
:math:`\\mathbb{E}_{p(\\theta|\\mathcal{D})}[p_\\theta(y|x)]`):

* ``max_prob``: :math:`\\max_c \\bar p_c` (Hendrycks & Gimpel's baseline, applied to the mean);
* ``class_variance``: :math:`\\frac1C \\sum_{c=1}^C \\big(\\frac1S\\sum_s (p^{(s)}_c)^2 -
  \\bar p_c^2\\big) = \\frac1C \\sum_c \\frac1S \\sum_s (p^{(s)}_c - \\bar p_c)^2`, the
  (population, ``1/S``) variance of each class probability over the samples, averaged over
  classes; identically 0 for ``S = 1``;
* ``predictive_entropy``: :math:`\\mathbb{H}[\\bar p] = -\\sum_c \\bar p_c \\log \\bar p_c`
  (nats);
* ``mutual_information``: :math:`\\mathbb{H}[\\bar p] - \\frac1S \\sum_s \\mathbb{H}[p^{(s)}]`
  (total minus expected entropy; 0 when all samples agree, and for ``S = 1``).

Numerics: nothing is exponentiated and then logged. :math:`\\log \\bar p` is
``logsumexp_s(log p) - log S``; entropies are :math:`-\\sum_c e^{\\ell_c} \\ell_c` with the
log-probabilities :math:`\\ell` clamped below at the most negative finite number, so a
probability of exactly 0 contributes :math:`0 \\cdot \\ell = 0` (no ``0 * -inf = nan``, also in
the backward pass). Logits of size ``1e4`` or more therefore give finite metrics. Inputs are
promoted to ``float64``; the results are ``float64``. Mutual information is not clamped at 0, so
it can be :math:`-10^{-16}`-ish from rounding when the samples agree.

:see Paper: Ulmer & Cinà, "Know your limits", §3.3 (metrics), Lemmas 5-9 and Theorem 1 (their input
    gradients vanish as inputs are scaled), Appendix A.5-A.8.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import torch
from torch import Tensor

__all__ = [
    "METRICS",
    "mean_log_probs",
    "max_prob",
    "class_variance",
    "entropy_from_log_probs",
    "predictive_entropy",
    "expected_entropy",
    "mutual_information",
    "all_metrics",
    "metrics_and_gradients",
    "gradient_norm",
]


def _as_log_probs(log_probs: Tensor) -> Tensor:
    lp = torch.as_tensor(log_probs)
    if lp.dim() == 2:
        lp = lp.unsqueeze(0)
    if lp.dim() != 3:
        raise ValueError(f"expected log-probabilities of shape (S, N, C), got {tuple(lp.shape)}")
    if lp.dtype != torch.float64:
        lp = lp.to(torch.float64)
    return lp


def mean_log_probs(log_probs: Tensor) -> Tensor:
    """:math:`\\log \\bar p = \\operatorname{logsumexp}_s \\log p^{(s)} - \\log S`, shape ``(N, C)``."""
    lp = _as_log_probs(log_probs)
    return torch.logsumexp(lp, dim=0) - math.log(lp.shape[0])


def entropy_from_log_probs(log_probs: Tensor) -> Tensor:
    """Shannon entropy (nats) :math:`-\\sum_c e^{\\ell_c}\\ell_c` over the last axis.

    ``-inf`` log-probabilities (probability 0) contribute 0, with a zero gradient.
    """
    lp = log_probs.clamp(min=torch.finfo(log_probs.dtype).min)
    return -(lp.exp() * lp).sum(dim=-1)


def max_prob(log_probs: Tensor) -> Tensor:
    """Max softmax probability of the mean prediction, :math:`\\max_c \\bar p_c`, shape ``(N,)``."""
    return mean_log_probs(log_probs).amax(dim=-1).exp()


def class_variance(log_probs: Tensor) -> Tensor:
    """The paper's class variance :math:`\\bar\\sigma^2` (§3.3), shape ``(N,)``.

    .. math::
        \\bar\\sigma^2 = \\frac1C \\sum_{c=1}^C \\Big(\\mathbb{E}_s\\big[(p^{(s)}_c)^2\\big]
            - \\mathbb{E}_s\\big[p^{(s)}_c\\big]^2\\Big)
            = \\frac1C \\sum_{c=1}^C \\frac1S \\sum_{s=1}^S \\big(p^{(s)}_c - \\bar p_c\\big)^2

    computed in the second (cancellation-free) form. Probabilities are bounded, so ``exp`` of the
    log-probabilities is safe here.
    """
    lp = _as_log_probs(log_probs)
    p = lp.exp()
    p_bar = mean_log_probs(lp).exp()
    return ((p - p_bar.unsqueeze(0)) ** 2).mean(dim=0).mean(dim=-1)


def predictive_entropy(log_probs: Tensor) -> Tensor:
    """Entropy of the mean prediction :math:`\\mathbb{H}[\\bar p]` (total uncertainty), ``(N,)``."""
    return entropy_from_log_probs(mean_log_probs(log_probs))


def expected_entropy(log_probs: Tensor) -> Tensor:
    """Mean entropy of the samples :math:`\\frac1S\\sum_s \\mathbb{H}[p^{(s)}]` (data uncertainty)."""
    return entropy_from_log_probs(_as_log_probs(log_probs)).mean(dim=0)


def mutual_information(log_probs: Tensor) -> Tensor:
    """Approximate mutual information :math:`\\mathbb{H}[\\bar p] - \\mathbb{E}_s\\mathbb{H}[p^{(s)}]`."""
    lp = _as_log_probs(log_probs)
    return predictive_entropy(lp) - expected_entropy(lp)


METRICS: dict[str, Callable[[Tensor], Tensor]] = {
    "max_prob": max_prob,
    "class_variance": class_variance,
    "predictive_entropy": predictive_entropy,
    "mutual_information": mutual_information,
}
"""The metrics of Theorem 1, by name, in the paper's order."""


def all_metrics(log_probs: Tensor, names: Sequence[str] | None = None) -> dict[str, Tensor]:
    """``{name: METRICS[name](log_probs)}`` for ``names`` (default: all four)."""
    return {name: METRICS[name](log_probs) for name in (names or list(METRICS))}


def _generator(seed: int | None) -> torch.Generator | None:
    return None if seed is None else torch.Generator().manual_seed(int(seed))


def metrics_and_gradients(
    model,
    x: Tensor,
    metrics: Mapping[str, Callable[[Tensor], Tensor]] | Sequence[str] | None = None,
    *,
    k_samples: int | None = None,
    seed: int | None = 0,
) -> dict[str, tuple[Tensor, Tensor]]:
    """Each metric and the L2 norm of its input gradient, from one forward pass.

    ``x`` is detached, made a leaf with ``requires_grad``, and
    ``model.predict_log_probs(x, k_samples, generator)`` is evaluated once with
    ``generator = torch.Generator().manual_seed(seed)``: the dropout masks / weight samples are
    drawn once and held fixed, so each metric is a deterministic function of ``x`` whose gradient
    is well defined. Points do not interact, so the gradient of ``metric(x).sum()`` with respect
    to ``x[n]`` is the gradient of ``metric(x)[n]``.

    :param model: an object with ``predict_log_probs(x, k_samples, generator) -> (S, N, C)``.
    :param x: inputs ``(N, D)``; their dtype is kept (pass ``float64`` with a ``float64`` model
        for the far-out scales).
    :param metrics: names from :data:`METRICS` or a ``{name: fn}`` mapping; default all four.
    :param k_samples: forward samples (``None`` = the model's default).
    :param seed: seed of the prediction-time generator (``None`` = global RNG).
    :return: ``{name: (values (N,), grad_norms (N,))}``, detached ``float64`` tensors.
    """
    if metrics is None:
        metrics = METRICS
    elif not isinstance(metrics, Mapping):
        metrics = {name: METRICS[name] for name in metrics}
    x = x.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        log_probs = model.predict_log_probs(x, k_samples, _generator(seed))
        out: dict[str, tuple[Tensor, Tensor]] = {}
        names = list(metrics)
        for i, name in enumerate(names):
            values = metrics[name](log_probs)
            (grad,) = torch.autograd.grad(
                values.sum(), x, retain_graph=i < len(names) - 1, allow_unused=True
            )
            if grad is None:
                grad = torch.zeros_like(x)
            norms = torch.linalg.vector_norm(grad.to(torch.float64), dim=-1)
            out[name] = (values.detach().to(torch.float64), norms.detach())
    return out


def gradient_norm(
    metric_fn: Callable[[Tensor], Tensor] | str,
    model,
    x: Tensor,
    *,
    k_samples: int | None = None,
    seed: int | None = 0,
) -> Tensor:
    """:math:`\\lVert \\nabla_x \\mathrm{metric}(x) \\rVert_2` per point, shape ``(N,)``.

    ``metric_fn`` maps log-probabilities ``(S, N, C)`` to ``(N,)`` (or is a :data:`METRICS`
    name). Stochastic models use prediction-time randomness from a generator seeded with
    ``seed``, fixed across the forward pass (see :func:`metrics_and_gradients`).
    """
    fn = METRICS[metric_fn] if isinstance(metric_fn, str) else metric_fn
    return metrics_and_gradients(model, x, {"metric": fn}, k_samples=k_samples, seed=seed)[
        "metric"
    ][1]
