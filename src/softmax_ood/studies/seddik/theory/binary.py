"""Theorem 4.8 for two classes in its scalar-label form (``w = w_1 = -w_2`` of the softmax):
the fixed point ``(delta, m, sigma)`` and what follows from it (:func:`solve_binary`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from .common import SIGNS, _check_stats, _gh
from .iteration import _solve


@dataclass(frozen=True)
class _BinaryLoss:
    """Scalar-label two-class loss: ``f_l``, ``f'`` and the proximal point ``t(z)``."""

    name: str
    lam: float

    def f(self, cls: int, t):
        if self.name == "logistic":
            return ((1.0 if cls == 0 else 0.0) - expit(2.0 * t)) / self.lam
        return (SIGNS[cls] - t) / self.lam

    def fprime(self, t):
        if self.name == "logistic":
            s = expit(2.0 * t)
            return -2.0 * s * (1.0 - s) / self.lam
        return np.full_like(np.asarray(t, dtype=float), -1.0 / self.lam)

    def prox(self, cls: int, z: np.ndarray, delta: float) -> np.ndarray:
        """``t`` solving ``t - z - delta * f_cls(t) = 0`` (increasing in ``t``; unique)."""
        if self.name == "squared":
            return (self.lam * z + delta * SIGNS[cls]) / (self.lam + delta)
        # logistic: f_0 in (0, 1/lam), f_1 in (-1/lam, 0) -> root bracketed; safeguarded Newton
        lo = z + (0.0 if cls == 0 else -delta / self.lam)
        hi = z + (delta / self.lam if cls == 0 else 0.0)
        t = 0.5 * (lo + hi)
        dx_old = hi - lo
        for _ in range(200):
            h = t - z - delta * self.f(cls, t)
            hp = 1.0 - delta * self.fprime(t)
            lo = np.where(h < 0, t, lo)
            hi = np.where(h > 0, t, hi)
            newton = t - h / hp
            bisect = (newton <= lo) | (newton >= hi) | (np.abs(2 * h) > np.abs(dx_old * hp))
            t_new = np.where(bisect, 0.5 * (lo + hi), newton)
            dx_old = np.abs(t_new - t)
            t = t_new
            if np.all(dx_old <= 1e-13 * (1.0 + np.abs(t))):
                break
        return t


@dataclass(frozen=True)
class BinaryTheory:
    """Theorem 4.8, two classes, scalar-label form (``w = w_1 = -w_2`` of the softmax).

    ``m[l]``, ``sigma[l]``: mean and std of :math:`x^\\top w` for a *new* point of class ``l``,
    which is also the law of the leave-one-out projection :math:`x_i^\\top w_{-i}` (Fig. 3).
    ``train_score_mean/std``: moments of :math:`x_i^\\top w = z + \\delta\\xi(z)` for training
    points (not Gaussian). ``w_mean``/``w_cov``: predicted mean and covariance of ``w``."""

    loss: str
    n: float
    p: int
    lam: float
    gammas: np.ndarray
    delta: np.ndarray
    m: np.ndarray
    sigma: np.ndarray
    n_iter: int
    residual: float
    w_mean: np.ndarray = field(repr=False)
    w_cov: np.ndarray = field(repr=False)
    e_xi: np.ndarray
    e_xi2: np.ndarray
    e_dxi: np.ndarray
    train_score_mean: np.ndarray
    train_score_std: np.ndarray
    test_accuracy_per_class: np.ndarray
    train_accuracy_per_class: np.ndarray

    @property
    def test_score_mean(self) -> np.ndarray:
        return self.m

    @property
    def test_score_std(self) -> np.ndarray:
        return self.sigma

    loo_score_mean = test_score_mean
    loo_score_std = test_score_std

    @property
    def test_accuracy(self) -> float:
        return float(self.gammas @ self.test_accuracy_per_class)

    @property
    def train_accuracy(self) -> float:
        return float(self.gammas @ self.train_accuracy_per_class)


def _binary_expectations(theta: np.ndarray, L: _BinaryLoss, nodes, weights) -> np.ndarray:
    """Rows ``E[xi]``, ``E[xi^2]``, ``E[xi' / (1 - delta xi')]`` (columns: the two classes) at
    ``theta = (delta, m, sigma)``, by quadrature over ``z ~ N(m_c, sigma_c^2)``."""
    d, m, s = theta[0:2], theta[2:4], theta[4:6]
    out = np.empty((3, 2))
    for c in range(2):
        z = m[c] + s[c] * nodes
        t = L.prox(c, z, d[c])
        xi, fp = L.f(c, t), L.fprime(t)
        out[:, c] = weights @ xi, weights @ xi**2, weights @ (fp / (1.0 - d[c] * fp))
    return out


def _binary_map(theta, L: _BinaryLoss, nodes, weights, means, covs, gammas, n, eye):
    """One application of the fixed-point map: the next ``(delta, m, sigma)`` and the extras
    at ``theta`` (the weights' mean and covariance, the expectations)."""
    e1, e2, e3 = _binary_expectations(theta, L, nodes, weights)
    K = np.einsum("c,cij->ij", gammas * e3, covs)
    R1 = np.linalg.inv(eye - K)
    w_mean = R1 @ (gammas * e1 @ means)
    Ct = np.einsum("c,cij->ij", gammas * e2, covs)
    w_cov = R1 @ Ct @ R1.T / n
    delta = np.einsum("cij,ji->c", covs, R1) / n
    m = means @ w_mean
    var = np.einsum("cij,ij->c", covs, w_cov) + np.einsum("i,cij,j->c", w_mean, covs, w_mean)
    theta_new = np.concatenate([delta, m, np.sqrt(np.maximum(var, 0.0))])
    return theta_new, {"w_mean": w_mean, "w_cov": w_cov, "e": (e1, e2, e3)}


def _binary_start(L: _BinaryLoss, means, covs, gammas, n) -> tuple[np.ndarray, np.ndarray]:
    """``(theta0, f0)``: the large-lambda limit (xi ~ f(0), K ~ 0) the iteration starts from,
    and ``f0 = (f_0(0), f_1(0))``."""
    f0 = np.array([L.f(0, 0.0), L.f(1, 0.0)])
    w0 = gammas * f0 @ means
    d0 = np.trace(covs, axis1=1, axis2=2) / n
    s0 = np.sqrt(
        np.einsum("i,cij,j->c", w0, covs, w0)
        + np.einsum("c,cij,dji->d", gammas * f0**2, covs, covs) / n
    )
    return np.concatenate([d0, means @ w0, np.maximum(s0, 1e-12)]), f0


def _binary_valid(th: np.ndarray) -> bool:
    """A point the iteration may step to: ``delta >= 0`` and ``sigma > 0``."""
    return bool(np.all(th[0:2] >= 0) and np.all(th[4:6] > 0))


def _training_scores(L: _BinaryLoss, d, m, s, nodes, weights) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std per class of the training projections ``t = z + delta xi(z)`` (not
    Gaussian), by quadrature."""
    tr_mean, tr_std = np.empty(2), np.empty(2)
    for c in range(2):
        t = L.prox(c, m[c] + s[c] * nodes, d[c])
        tr_mean[c] = weights @ t
        tr_std[c] = np.sqrt(max(weights @ t**2 - tr_mean[c] ** 2, 0.0))
    return tr_mean, tr_std


def solve_binary(
    means,
    covs,
    gammas,
    n: float,
    lam: float,
    *,
    loss: str = "logistic",
    rtol: float = 1e-9,
    max_iter: int = 500,
    n_nodes: int = 64,
    memory: int = 5,
) -> BinaryTheory:
    """Fixed point ``(delta, m, sigma)`` of Theorem 4.8 for two classes (scalar-label form).

    ``means`` (2, p), ``covs`` (2, p, p), ``gammas`` (2,); ``loss`` is ``"logistic"`` (the
    two-class softmax) or ``"squared"`` (ridge, the reference of :func:`~.ridge.ridge_closed_form`).
    Raises :class:`~.common.FixedPointError` when the iteration does not converge within ``max_iter``."""
    if loss not in ("logistic", "squared"):
        raise ValueError(f"loss must be 'logistic' or 'squared', got {loss!r}")
    means, covs, gammas, _, p = _check_stats(means, covs, gammas, n, lam, k=2)
    L = _BinaryLoss(loss, float(lam))
    nodes, weights = _gh(n_nodes)
    eye = np.eye(p)
    theta0, f0 = _binary_start(L, means, covs, gammas, n)
    theta, it, res, state = _solve(
        lambda th: _binary_map(th, L, nodes, weights, means, covs, gammas, n, eye),
        theta0,
        [slice(0, 2), slice(2, 6)],
        _binary_valid,
        rtol=rtol,
        max_iter=max_iter,
        memory=memory,
        what=f"two-class {loss}",
        n=n,
        p=p,
        lam=lam,
    )
    d, m, s = theta[0:2], theta[2:4], theta[4:6]
    e1, e2, e3 = state["e"]
    # training projections t = z + delta xi(z): moments by quadrature, accuracy via threshold
    tr_mean, tr_std = _training_scores(L, d, m, s, nodes, weights)
    zstar = -d * f0
    test_acc = norm.cdf(SIGNS * m / s)
    train_acc = norm.cdf(SIGNS * (m - zstar) / s)
    return BinaryTheory(
        loss=loss,
        n=float(n),
        p=p,
        lam=float(lam),
        gammas=gammas,
        delta=d,
        m=m,
        sigma=s,
        n_iter=it,
        residual=res,
        w_mean=state["w_mean"],
        w_cov=state["w_cov"],
        e_xi=e1,
        e_xi2=e2,
        e_dxi=e3,
        train_score_mean=tr_mean,
        train_score_std=tr_std,
        test_accuracy_per_class=test_acc,
        train_accuracy_per_class=train_acc,
    )
