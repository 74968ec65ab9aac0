"""The scaling experiment of Theorem 1 and the metric grids of Fig. 1.

Held-out points :math:`x'` are pushed away from the data by a factor :math:`\\alpha \\ge 1`
(§3.2, Lemmas 3-9: :math:`x = \\boldsymbol\\alpha \\odot x'` with :math:`\\alpha_d = \\alpha` for one
feature ``d`` and 1 elsewhere), and at every :math:`\\alpha` each uncertainty metric and the L2
norm of its gradient with respect to the input, evaluated at the scaled point, are recorded.
Theorem 1 predicts max prob -> 1, class variance / entropy / mutual information -> 0 and all
gradient norms -> 0 as :math:`\\alpha \\to \\infty`.

Models are evaluated on a ``float64`` copy by default, so that the far scales (``alpha >= 1e4``)
resolve probabilities near 1 and gradients down to ~1e-300 instead of rounding to 0 at ~1e-7.

:see Paper: Ulmer & Cinà, "Know your limits", §3.2, Lemmas 4-9, Theorem 1, Fig. 1.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from softmax_ood.studies.ulmer.base import UncertaintyModel, single_thread
from softmax_ood.studies.ulmer.mcmc import effective_sample_size
from softmax_ood.studies.ulmer.softmax_note import naive_softmax
from softmax_ood.studies.ulmer.uncertainty import (
    METRICS,
    all_metrics,
    mean_log_probs,
    metrics_and_gradients,
)

__all__ = [
    "Direction",
    "direction_set",
    "lda_slopes",
    "certainty_at_scale",
    "limiting_votes",
    "limiting_vote_ess",
    "log_alphas",
    "scale_inputs",
    "scaling_experiment",
    "grid_heatmap",
]

Feature = int | str | Sequence[float] | np.ndarray | None


def log_alphas(min_exponent: float, max_exponent: float, n: int) -> np.ndarray:
    """``np.logspace(min_exponent, max_exponent, n)``: ``n`` log-spaced scales."""
    if n < 2 or max_exponent <= min_exponent:
        raise ValueError(
            f"the alpha grid needs n >= 2 and max_exponent > min_exponent, got n = {n}, "
            f"exponents {min_exponent} .. {max_exponent}"
        )
    return np.logspace(float(min_exponent), float(max_exponent), int(n))


def scale_inputs(
    x: Tensor, alpha: float, feature: Feature = None, origin: np.ndarray | None = None
) -> Tensor:
    """Push ``x`` (``(N, D)``) away from the data by ``alpha``.

    With ``origin`` (a length-``D`` point, e.g. ``-mean / std`` = the raw-space zero of
    standardised data) the scaling is about that point: ``x -> origin + scale(x - origin)``.

    * ``feature = d`` (int): :math:`x_d \\mapsto \\alpha x_d`, other features unchanged (the paper's
      :math:`\\boldsymbol\\alpha \\odot x'` with :math:`\\alpha_{d'} = 1` for :math:`d' \\ne d`);
    * ``feature = None`` or ``"all"``: :math:`x \\mapsto \\alpha x`;
    * ``feature = u`` (a length-``D`` vector): the component along the unit vector
      :math:`\\hat u = u/\\lVert u\\rVert` is scaled,
      :math:`x \\mapsto x + (\\alpha - 1)(x^\\top \\hat u)\\hat u` (``u = e_d`` is the first case).

    ``alpha = 1`` returns ``x`` unchanged. A point whose scaled component is 0 does not move.
    """
    if origin is not None:
        o = torch.as_tensor(np.asarray(origin, dtype=np.float64), dtype=x.dtype)
        return o + scale_inputs(x - o, alpha, feature)
    if feature is None or (isinstance(feature, str) and feature == "all"):
        return x * alpha
    if isinstance(feature, str):
        raise ValueError(f"feature must be an index, 'all', None or a direction, got {feature!r}")
    if isinstance(feature, int | np.integer):
        out = x.clone()
        out[:, int(feature)] = x[:, int(feature)] * alpha
        return out
    u = torch.as_tensor(np.asarray(feature, dtype=np.float64), dtype=x.dtype)
    if u.shape != (x.shape[1],) or float(torch.linalg.vector_norm(u)) == 0.0:
        raise ValueError("a direction must be a non-zero vector with one entry per feature")
    u = u / torch.linalg.vector_norm(u)
    return x + (alpha - 1.0) * (x @ u).unsqueeze(1) * u


@dataclass(frozen=True)
class Direction:
    r"""A unit direction the held-out points are scaled along.

    :param name: an axis' feature name, or ``r<j>`` for the ``j``-th random direction.
    :param type: ``"axis"`` or ``"random"``.
    :param vector: the unit vector (length ``D``).
    :param min_cos: the smallest ``|cos|`` between the direction and the LDA log-odds slope
        :math:`\Sigma_w^{-1}(\mu_c - \mu_{c'})` of any class pair (see :func:`lda_slopes`).
    :param degenerate: ``min_cos`` below the configured tolerance: the direction is (nearly)
        parallel to a linear class boundary, so along it the log-odds of that pair do not change
        and the true class probabilities are not strictly monotonic (Assumption 1 fails).
    """

    name: str
    type: str
    vector: np.ndarray
    min_cos: float
    degenerate: bool


def lda_slopes(
    x: np.ndarray, y: np.ndarray, ridge: float = 1e-3
) -> dict[tuple[int, int], np.ndarray]:
    r"""The LDA log-odds slope :math:`w_{cc'} = (\Sigma_w + \lambda I)^{-1}(\mu_c - \mu_{c'})` of
    every class pair ``c < c'`` (pooled within-class covariance of ``x``, a small ridge
    ``lambda`` for collinear features). For Gaussian classes with a shared covariance the
    log-odds of ``c`` against ``c'`` change along ``u`` at the rate ``w . u``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    classes = np.unique(y)
    means = {c: x[y == c].mean(axis=0) for c in classes}
    centred = np.concatenate([x[y == c] - means[c] for c in classes])
    cov = centred.T @ centred / max(len(x) - len(classes), 1)
    cov = cov + ridge * np.eye(x.shape[1])
    return {
        (int(a), int(b)): np.linalg.solve(cov, means[a] - means[b])
        for i, a in enumerate(classes)
        for b in classes[i + 1 :]
    }


def direction_set(
    x_train: np.ndarray,
    y_train: np.ndarray,
    feature_names: Sequence[str],
    *,
    n_random: int,
    seed: int,
    degenerate_cos: float,
) -> list[Direction]:
    """Every input axis, then ``n_random`` random unit directions (standard normal draws from
    ``numpy.random.default_rng(seed)``, normalised), each labelled degenerate when its smallest
    ``|cos|`` with a class pair's LDA slope (:func:`lda_slopes` on the training rows) is below
    ``degenerate_cos``."""
    d = np.asarray(x_train).shape[1]
    slopes = [w / np.linalg.norm(w) for w in lda_slopes(x_train, y_train).values()]
    rng = np.random.default_rng(int(seed))
    vectors = [(str(feature_names[i]), "axis", np.eye(d)[i]) for i in range(d)]
    for j in range(int(n_random)):
        u = rng.standard_normal(d)
        vectors.append((f"r{j}", "random", u / np.linalg.norm(u)))
    out = []
    for name, kind, u in vectors:
        cos = min(abs(float(u @ w)) for w in slopes) if slopes else 1.0
        out.append(Direction(name, kind, u, cos, cos < degenerate_cos))
    return out


def _vote_share(lp: Tensor) -> Tensor:
    """Per point, the share of the ``S`` samples whose arg-max is the mean prediction's."""
    mode = mean_log_probs(lp).argmax(dim=-1)
    return (lp.argmax(dim=-1) == mode.unsqueeze(0)).to(torch.float64).mean(dim=0)


def limiting_votes(lp: Tensor, lp_double: Tensor, alpha: float) -> Tensor:
    """Per point, the exact alpha -> infinity limit of the averaged prediction's max probability:
    the largest share of the ``S`` samples (members) whose *limiting* arg-max is one class.

    Along a ray a ReLU sample's logits are eventually affine in alpha, so its limiting class is
    the arg-max of the logits' slope, read from the log-probabilities at ``alpha`` and
    ``2 alpha`` drawn with the same samples (the log-softmax shifts every class by the same
    amount, so its slope has the logits' arg-max). Each sample's softmax tends to the one-hot
    vector of that class, so the mean prediction tends to the vote shares and its max
    probability to the largest share.

    :param lp: ``(S, N, C)`` log-probabilities at ``alpha``; ``lp_double`` the same samples at
        ``2 alpha``.
    """
    cls = _limiting_classes(lp, lp_double, alpha)
    counts = torch.nn.functional.one_hot(cls, lp.shape[-1]).to(torch.float64).sum(dim=0)
    return counts.amax(dim=-1) / lp.shape[0]


def _limiting_classes(lp: Tensor, lp_double: Tensor, alpha: float) -> Tensor:
    """``(S, N)``: each sample's limiting arg-max, the arg-max of its logits' slope."""
    return ((lp_double - lp) / float(alpha)).argmax(dim=-1)


def limiting_vote_ess(lp: Tensor, lp_double: Tensor, alpha: float) -> float:
    """How many independent draws the ``S`` samples' limiting votes are worth, in the order the
    samples come (a chain's order for MCMC): per point whose limiting votes split, the
    :func:`~softmax_ood.studies.ulmer.mcmc.effective_sample_size` of the series "this sample
    votes for the point's majority class", averaged over those points. NaN when no point's votes
    split (unanimous votes carry no Monte Carlo error) or ``S < 4``. Independent samples give
    about ``S``; a chain that moves slowly far out, much less."""
    cls = _limiting_classes(lp, lp_double, alpha)
    values = []
    for votes in cls.T.numpy():
        counts = np.bincount(votes)
        if counts.max() < votes.size:
            values.append(effective_sample_size(votes == counts.argmax()))
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def certainty_at_scale(
    models: Mapping[str, UncertaintyModel],
    x: np.ndarray | Tensor,
    directions: Sequence[Direction],
    alpha: float,
    *,
    origin: np.ndarray | None,
    seed: int,
    k_samples: Mapping[str, tuple[int, int]],
    confident: float,
    dtype: torch.dtype = torch.float64,
) -> pd.DataFrame:
    """The certainty statistics of every model at scale ``alpha`` along every direction, at the
    sample count ``K`` and at ``2K``.

    For a stochastic model ``k_samples[name] = (K, 2K)``: ``2K`` samples are drawn once (seeded by
    ``seed``; an ensemble's are its ``2K`` members) and the statistics are computed from the
    first ``K`` (``k_role = "K"``) and from all ``2K`` (``k_role = "2K"``). A deterministic model
    (``S = 1``) has the ``K`` rows only.

    :return: one row per model x direction x k_role: ``model, kind, direction, direction_type,
        degenerate, min_cos, k_role, k, alpha, mean_max_prob`` (mean over points of the max
        probability of the mean prediction), ``vote_share`` (mean over points of the share of
        samples voting for the mean prediction's class), ``share_certain`` (share of points with
        max probability above ``confident``), ``limit_max_prob`` (mean over points of the exact
        alpha -> infinity limit, :func:`limiting_votes`: the largest vote share of the samples'
        limiting arg-max from the logits' slopes), ``max_prob_gap`` (largest |max probability -
        its limit| over the points), ``vote_ess`` (:func:`limiting_vote_ess`: what the limiting
        votes are worth in independent draws; NaN for ``S = 1`` or unanimous votes),
        ``n_points``.
    """
    rows: list[dict] = []
    with single_thread(), torch.no_grad():
        for model_name, model in models.items():
            net = _prepare(model, dtype)
            x_t = torch.as_tensor(np.asarray(x), dtype=_model_dtype(net))
            k, k2 = k_samples.get(model_name, (1, 1))
            for direction in directions:
                x_a = scale_inputs(x_t, float(alpha), direction.vector, origin)
                lp = net.predict_log_probs(x_a, k2, torch.Generator().manual_seed(seed))
                x_2a = scale_inputs(x_t, 2.0 * float(alpha), direction.vector, origin)
                lp2 = net.predict_log_probs(x_2a, k2, torch.Generator().manual_seed(seed))
                roles = [("K", lp[:k], lp2[:k])] + ([("2K", lp, lp2)] if lp.shape[0] > k else [])
                for role, part, part2 in roles:
                    top = mean_log_probs(part).amax(dim=-1).exp()
                    limit = limiting_votes(part, part2, float(alpha))
                    rows.append(
                        {
                            "model": model_name,
                            "kind": model.kind,
                            "direction": direction.name,
                            "direction_type": direction.type,
                            "degenerate": bool(direction.degenerate),
                            "min_cos": float(direction.min_cos),
                            "k_role": role,
                            "k": int(part.shape[0]),
                            "alpha": float(alpha),
                            "mean_max_prob": float(top.mean()),
                            "vote_share": float(_vote_share(part).mean()),
                            "share_certain": float((top > confident).to(torch.float64).mean()),
                            "limit_max_prob": float(limit.mean()),
                            "max_prob_gap": float((top - limit).abs().max()),
                            "vote_ess": limiting_vote_ess(part, part2, float(alpha)),
                            "n_points": int(top.numel()),
                        }
                    )
    return pd.DataFrame(rows)


def _prepare(model: UncertaintyModel, dtype: torch.dtype | None) -> UncertaintyModel:
    if dtype is None:
        return model
    return copy.deepcopy(model).to(dtype).eval()


def _model_dtype(model: UncertaintyModel) -> torch.dtype:
    return next(model.parameters()).dtype


def scaling_experiment(
    models: Mapping[str, UncertaintyModel],
    x: np.ndarray | Tensor,
    alphas: Sequence[float] | np.ndarray,
    *,
    feature: Feature,
    seed: int,
    confident: float,
    origin: np.ndarray | None = None,
    k_samples: int | None = None,
    metrics: Sequence[str] | None = None,
    dtype: torch.dtype | None = torch.float64,
    reduce: bool = True,
) -> pd.DataFrame:
    """Every metric and its input-gradient norm at every scale, for every model.

    For each model and each ``alpha`` the points are scaled with :func:`scale_inputs`, one
    forward pass with a prediction-time generator seeded by ``seed`` is made (the same masks /
    weight samples at every ``alpha``: common random numbers along the curve), and
    :func:`~softmax_ood.studies.ulmer.uncertainty.metrics_and_gradients` gives the values and the
    gradient norms :math:`\\lVert\\nabla_x m(x)\\rVert_2` at :math:`x = \\alpha\\odot x'`.

    :param models: ``{name: trained model}``.
    :param x: held-out points ``(N, D)`` (in the models' input space, e.g. standardised).
    :param alphas: the scales, e.g. :func:`log_alphas`.
    :param feature: what is scaled, see :func:`scale_inputs`.
    :param origin: the point scaled about (see :func:`scale_inputs`; ``None`` = 0).
    :param seed: recorded in the ``seed`` column (use the training seed) and used for the
        prediction-time generator.
    :param k_samples: forward samples of the stochastic models (``None`` = model default).
    :param metrics: names from :data:`~softmax_ood.studies.ulmer.uncertainty.METRICS` (default all).
    :param confident: threshold of ``share_confident``.
    :param dtype: evaluate a copy of each model in this dtype (``None`` = as is).
    :param reduce: average over points (default) or return one row per point.
    :return: with ``reduce`` (tidy, one row per model x alpha x metric): ``model, kind, seed,
        alpha, metric, value, value_std, grad_norm, grad_norm_std, grad_norm_median,
        share_confident, max_abs_logit, naive_nan_share, n_points`` -- ``value`` / ``grad_norm``
        are means over points, ``*_std`` standard deviations over points (``ddof=0``),
        ``share_confident`` the share of points whose max probability exceeds ``confident``,
        ``max_abs_logit`` the largest ``|logit|`` of any sample at that scale and
        ``naive_nan_share`` the share of points where the naive ``exp(z) / sum exp(z)`` (float64)
        gives a NaN for some sample (the last three are the same on every metric row). Without
        ``reduce``: ``model, kind, seed, alpha, metric, point, value, grad_norm, max_prob``.
    """
    names = list(metrics or METRICS)
    rows: list[dict] = []
    with single_thread():
        for model_name, model in models.items():
            net = _prepare(model, dtype)
            x_t = torch.as_tensor(np.asarray(x), dtype=_model_dtype(net))
            for alpha in np.asarray(alphas, dtype=np.float64):
                x_a = scale_inputs(x_t, float(alpha), feature, origin)
                res = metrics_and_gradients(net, x_a, names, k_samples=k_samples, seed=seed)
                top, extra = _scale_extras(net, x_a, res, k_samples, seed)
                base = {"model": model_name, "kind": model.kind, "seed": seed, "alpha": alpha}
                for name in names:
                    values, grads = (t.numpy() for t in res[name])
                    if reduce:
                        rows.append(_reduced_row(base, name, values, grads, top, confident, extra))
                    else:
                        rows += _point_rows(base, name, values, grads, top)
    return pd.DataFrame(rows)


def _scale_extras(net, x_a: Tensor, res: dict, k_samples, seed: int) -> tuple[np.ndarray, dict]:
    """``(max probability per point, extra columns)`` at one scale: the max probability (from
    ``res`` if it was asked for, else one forward pass with the same generator seed), the
    largest ``|logit|`` of any sample and the share of points where the naive float64 softmax
    gives a NaN for some sample."""
    if "max_prob" in res:
        top = res["max_prob"][0]
    else:
        with torch.no_grad():
            lp = net.predict_log_probs(x_a, k_samples, torch.Generator().manual_seed(seed))
            top = METRICS["max_prob"](lp)
    top = top.numpy()
    with torch.no_grad():
        logits = net.sample_logits(x_a, k_samples, torch.Generator().manual_seed(seed))
    z = logits.detach().to(torch.float64).numpy()
    naive_nan = np.isnan(naive_softmax(z)).any(axis=-1).any(axis=0)
    extra = {
        "max_abs_logit": float(np.abs(z).max()),
        "naive_nan_share": float(naive_nan.mean()),
    }
    return top, extra


def _reduced_row(base: dict, name: str, values, grads, top, confident: float, extra) -> dict:
    """One metric at one scale, averaged over points (``reduce``)."""
    return {
        **base,
        "metric": name,
        "value": float(values.mean()),
        "value_std": float(values.std()),
        "grad_norm": float(grads.mean()),
        "grad_norm_std": float(grads.std()),
        "grad_norm_median": float(np.median(grads)),
        "share_confident": float((top > confident).mean()),
        **extra,
        "n_points": int(values.size),
    }


def _point_rows(base: dict, name: str, values, grads, top) -> list[dict]:
    """One metric at one scale, one row per point (no ``reduce``)."""
    return [
        {
            **base,
            "metric": name,
            "point": i,
            "value": float(values[i]),
            "grad_norm": float(grads[i]),
            "max_prob": float(top[i]),
        }
        for i in range(values.size)
    ]


def grid_heatmap(
    model: UncertaintyModel,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    n: int,
    *,
    seed: int,
    name: str | None = None,
    metrics: Sequence[str] | None = None,
    k_samples: int | None = None,
    dtype: torch.dtype | None = torch.float64,
) -> pd.DataFrame:
    """Metric values of a 2-D model on an ``n x n`` grid (Fig. 1).

    The grid is ``np.linspace(*xlim, n) x np.linspace(*ylim, n)``; choose limits well beyond the
    data (e.g. 3-5x its range) to show the open-ended certain regions.

    :param model: a model with 2 input features.
    :param xlim: ``(min, max)`` of the first feature.
    :param ylim: ``(min, max)`` of the second feature.
    :param n: points per axis.
    :param name: value of the ``model`` column (default ``model.kind``).
    :param metrics: names from :data:`~softmax_ood.studies.ulmer.uncertainty.METRICS` (default all).
    :param k_samples: forward samples (``None`` = model default).
    :param seed: prediction-time generator seed.
    :param dtype: evaluate a copy of the model in this dtype (``None`` = as is).
    :return: long frame ``model, kind, x1, x2, metric, value`` (``n * n`` rows per metric, ``x1``
        varying fastest).
    """
    names = list(metrics or METRICS)
    gx = np.linspace(xlim[0], xlim[1], n)
    gy = np.linspace(ylim[0], ylim[1], n)
    xx, yy = np.meshgrid(gx, gy)  # row = x2 index, column = x1 index
    points = np.stack([xx.ravel(), yy.ravel()], axis=1)
    with single_thread(), torch.no_grad():
        net = _prepare(model, dtype)
        pts = torch.as_tensor(points, dtype=_model_dtype(net))
        lp = net.predict_log_probs(pts, k_samples, torch.Generator().manual_seed(seed))
        values = all_metrics(lp, names)
    label = name if name is not None else model.kind
    frames = [
        pd.DataFrame(
            {
                "model": label,
                "kind": model.kind,
                "x1": points[:, 0],
                "x2": points[:, 1],
                "metric": metric,
                "value": values[metric].numpy(),
            }
        )
        for metric in names
    ]
    return pd.concat(frames, ignore_index=True)
