"""Calibration: expected calibration error, NLL and temperature scaling.

* :func:`ece` / :func:`ece_from_logits` -- expected calibration error with ``M`` equal-width
  confidence bins on ``(0, 1]`` (Naeini et al. 2015; Guo et al. 2017, ``M = 15``). Bins are
  right-inclusive exactly like Guo's reference code, ``(conf > lo) & (conf <= hi)``; a confidence of
  exactly 0 falls in no bin (it still counts in the denominator). Returned as a fraction in
  ``[0, 1]`` -- multiply by 100 for the usual tables.
* :func:`nll` -- mean negative log-likelihood of ``softmax(logits / T)``.
* :func:`fit_temperature` -- temperature scaling (Guo et al. 2017): the single ``T > 0`` minimising
  the NLL on a **validation** split. Fit it on held-out validation logits and then apply the fixed
  ``T`` to the test logits; never fit on the test set, or the calibration numbers are optimistic.

All log-probabilities use the max-shifted (numerically stable) log-softmax with ``log1p``, in float64.

:see Paper: Guo, Pleiss, Sun & Weinberger, "On Calibration of Modern Neural Networks", ICML 2017;
    Naeini, Cooper & Hauskrecht, "Obtaining Well Calibrated Probabilities Using Bayesian
    Binning", AAAI 2015.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .softmax import log_softmax

__all__ = [
    "ece",
    "ece_from_logits",
    "reliability_bins",
    "nll",
    "fit_temperature",
    "T_BOUNDS",
]

T_BOUNDS = (0.01, 100.0)  #: search interval for the temperature (log-scale search)


# --------------------------------------------------------------------------- helpers


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor, without importing torch
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _check_logits_labels(logits, labels) -> tuple[np.ndarray, np.ndarray]:
    z = _to_numpy(logits)
    y = _to_numpy(labels)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D (N, C), got shape {z.shape}")
    if z.shape[0] == 0 or z.shape[1] == 0:
        raise ValueError(f"logits are empty (shape {z.shape})")
    if y.ndim != 1 or y.shape[0] != z.shape[0]:
        raise ValueError(f"labels must have shape ({z.shape[0]},), got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= z.shape[1]:
        raise ValueError(f"labels must lie in [0, {z.shape[1] - 1}]")
    z = z.astype(np.float64, copy=False)
    if not np.isfinite(z).all():
        raise ValueError("logits contain NaN or inf")
    return z, y.astype(np.int64, copy=False)


def _check_temperature(temperature: float) -> float:
    t = float(temperature)
    if not (t > 0.0 and math.isfinite(t)):
        raise ValueError(f"temperature must be a finite positive number, got {temperature!r}")
    return t


def _check_n_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    return int(n_bins)


# --------------------------------------------------------------------------- ECE


def reliability_bins(
    probs_or_confidences, predictions, labels, n_bins: int = 15
) -> dict[str, np.ndarray]:
    """Per-bin counts, accuracy and mean confidence (the data behind a reliability diagram).

    Bins are :math:`B_m = (\\tfrac{m-1}{M}, \\tfrac{m}{M}]`, :math:`m = 1..M`.

    :param probs_or_confidences: ``(N, C)`` class probabilities, or ``(N,)`` confidences of the
        predicted class.
    :param predictions: ``(N,)`` predicted labels, or ``None`` to use ``argmax`` of the ``(N, C)``
        probabilities (required when confidences are given). With ``(N, C)`` probabilities and
        explicit predictions the confidence is the probability of the predicted class.
    :param labels: ``(N,)`` true labels.
    :param n_bins: number ``M`` of equal-width bins.
    :return: dict with ``edges`` ``(M+1,)``, ``count`` ``(M,)`` int, ``accuracy`` ``(M,)`` and
        ``confidence`` ``(M,)`` (NaN for empty bins) and ``n`` (total sample count).
    """
    n_bins = _check_n_bins(n_bins)
    p = _to_numpy(probs_or_confidences)
    y = _to_numpy(labels)
    if p.ndim not in (1, 2):
        raise ValueError(f"probs_or_confidences must be (N,) or (N, C), got shape {p.shape}")
    n = p.shape[0]
    if n == 0:
        raise ValueError("empty input")
    if y.shape != (n,):
        raise ValueError(f"labels must have shape ({n},), got {y.shape}")
    if p.ndim == 2:
        if predictions is None:
            pred = np.argmax(p, axis=1)
        else:
            pred = _to_numpy(predictions)
            if pred.shape != (n,):
                raise ValueError(f"predictions must have shape ({n},), got {pred.shape}")
            if (
                not np.issubdtype(pred.dtype, np.integer)
                or pred.min() < 0
                or pred.max() >= p.shape[1]
            ):
                raise ValueError(f"predictions must be integers in [0, {p.shape[1] - 1}]")
        conf = p[np.arange(n), pred]
    else:
        if predictions is None:
            raise ValueError("predictions are required when per-sample confidences are given")
        pred = _to_numpy(predictions)
        if pred.shape != (n,):
            raise ValueError(f"predictions must have shape ({n},), got {pred.shape}")
        conf = p
    conf = conf.astype(np.float64, copy=False)
    if not np.isfinite(conf).all():
        raise ValueError("confidences contain NaN or inf")
    if conf.min() < 0.0 or conf.max() > 1.0:
        raise ValueError("confidences must lie in [0, 1]")

    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # searchsorted(side="left") - 1 = m  <=>  edges[m] < conf <= edges[m+1]; conf == 0 -> -1 (no bin)
    idx = np.searchsorted(edges, conf, side="left") - 1
    keep = idx >= 0
    idx = idx[keep]
    correct = (pred == y)[keep].astype(np.float64)
    count = np.bincount(idx, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.bincount(idx, weights=correct, minlength=n_bins) / count
        mean_conf = np.bincount(idx, weights=conf[keep], minlength=n_bins) / count
    return {"edges": edges, "count": count, "accuracy": acc, "confidence": mean_conf, "n": n}


def ece(probs_or_confidences, predictions, labels, n_bins: int = 15) -> float:
    """Expected calibration error with ``n_bins`` equal-width bins on ``(0, 1]``.

    .. math::
        \\mathrm{ECE} = \\sum_{m=1}^{M} \\frac{|B_m|}{N}\\,
        \\bigl|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)\\bigr|

    :param probs_or_confidences: ``(N, C)`` probabilities or ``(N,)`` confidences of the
        predictions (see :func:`reliability_bins`).
    :param predictions: ``(N,)`` predicted labels, or ``None`` with ``(N, C)`` probabilities.
    :param labels: ``(N,)`` true labels.
    :param n_bins: ``M`` (15 as in Guo et al. 2017).
    :return: ECE as a fraction in ``[0, 1]``.
    """
    r = reliability_bins(probs_or_confidences, predictions, labels, n_bins=n_bins)
    nonempty = r["count"] > 0
    gap = np.abs(r["accuracy"][nonempty] - r["confidence"][nonempty])
    return float(np.dot(r["count"][nonempty], gap) / r["n"])


def ece_from_logits(logits, labels, n_bins: int = 15, temperature: float = 1.0) -> float:
    """ECE of ``softmax(logits / temperature)`` with argmax predictions (see :func:`ece`)."""
    z, y = _check_logits_labels(logits, labels)
    t = _check_temperature(temperature)
    probs = np.exp(log_softmax(z / t, dim=1, precise=True))
    return ece(probs, None, y, n_bins=n_bins)


# --------------------------------------------------------------------------- NLL / temperature


def _nll(z: np.ndarray, y: np.ndarray, t: float) -> float:
    logp = log_softmax(z / t, dim=1, precise=True)
    return float(-np.mean(logp[np.arange(z.shape[0]), y]))


def nll(logits, labels, temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the labels under ``softmax(logits / T)``.

    .. math:: \\mathrm{NLL}(T) = -\\frac1N \\sum_i \\log \\operatorname{softmax}(z_i / T)_{y_i}
    """
    z, y = _check_logits_labels(logits, labels)
    return _nll(z, y, _check_temperature(temperature))


def fit_temperature(logits, labels, *, max_iter: int = 500, xatol: float = 1e-7) -> float:
    """Temperature scaling: :math:`T^* = \\arg\\min_{T>0} \\mathrm{NLL}(T)` on a validation split.

    Fit on **validation** logits only (never on the test set) and apply the returned ``T`` to test
    logits via ``softmax(logits / T)``.

    The NLL is convex in :math:`\\beta = 1/T` (a log-sum-exp minus a linear term), hence unimodal in
    :math:`\\log T`; it is minimised over :math:`\\log T \\in [\\log 0.01, \\log 100]` by bounded
    Brent search (``scipy.optimize.minimize_scalar``), in float64 -- deterministic, and
    well-behaved both for LogitNorm-trained nets (small logits, :math:`T^* < 1`) and for
    cross-entropy nets (large logits, :math:`T^* > 1`). If the optimum lies outside the interval
    the nearest bound is returned (e.g. separable data with every prediction correct drives
    :math:`T \\to 0`).

    :param logits: ``(N, C)`` validation logits.
    :param labels: ``(N,)`` validation labels.
    :param max_iter: maximum number of Brent iterations.
    :param xatol: absolute tolerance on :math:`\\log T`.
    :return: the fitted temperature ``T > 0`` as a Python float.
    """
    z, y = _check_logits_labels(logits, labels)
    lo, hi = math.log(T_BOUNDS[0]), math.log(T_BOUNDS[1])
    from scipy.optimize import minimize_scalar  # lazy: the Snakefile imports this module's users

    res = minimize_scalar(
        lambda u: _nll(z, y, math.exp(u)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": xatol, "maxiter": int(max_iter)},
    )
    u = float(res.x)
    # Brent never evaluates the end points exactly; snap to a bound if that is better.
    best_t, best_f = math.exp(u), float(res.fun)
    for t_bound in T_BOUNDS:
        f_bound = _nll(z, y, t_bound)
        if f_bound < best_f:
            best_t, best_f = t_bound, f_bound
    return float(min(max(best_t, T_BOUNDS[0]), T_BOUNDS[1]))
