r"""Deterministic theory of the L2-regularised softmax classifier (Seddik et al., Theorem 4.8).

Everything here is a function of the class statistics only: means ``means`` (k, p), covariances
``covs`` (k, p, p), proportions ``gammas`` (k,), the sample size ``n`` (p is ``means.shape[1]``)
and the regularisation ``lam``. Class ``0`` is the paper's :math:`\mathcal C_1`, class ``1`` its
:math:`\mathcal C_2`. Data points are rows; :math:`w` is a column vector.

The derivation (and each place the printed text slips): ``docs/studies/seddik.md``, section
*Derivation of Theorem 4.8's fixed point*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, softmax
from scipy.stats import norm, qmc

__all__ = [
    "BinaryTheory",
    "FixedPointError",
    "MulticlassTheory",
    "RidgeClosedForm",
    "ridge_closed_form",
    "solve_binary",
    "solve_multiclass",
]

SIGNS = np.array([1.0, -1.0])  # scalar label of class 0 (paper C_1) and class 1 (paper C_2)


class FixedPointError(ValueError):
    """The fixed point of Theorem 4.8 did not converge (one-sentence message)."""


# ----------------------------------------------------------------------------- inputs


def _check_stats(means, covs, gammas, n, lam, k: int | None = None):
    means = np.atleast_2d(np.asarray(means, dtype=float))
    covs = np.asarray(covs, dtype=float)
    gammas = np.asarray(gammas, dtype=float)
    kk, p = means.shape
    if k is not None and kk != k:
        raise ValueError(f"expected {k} class means, got {kk}")
    if covs.shape != (kk, p, p):
        raise ValueError(f"covs must have shape {(kk, p, p)}, got {covs.shape}")
    if gammas.shape != (kk,) or np.any(gammas <= 0) or abs(gammas.sum() - 1) > 1e-8:
        raise ValueError(f"gammas must be {kk} positive proportions summing to one, got {gammas}")
    if not n > 0 or not lam > 0:
        raise ValueError(f"n and lam must be positive, got n={n}, lam={lam}")
    return means, covs, gammas, kk, p


def _message(what: str, n: float, p: int, lam: float, it: int, res: float) -> str:
    return (
        f"The {what} fixed point did not converge for n={n:g}, p={p}, lam={lam:g} "
        f"after {it} iterations (last relative residual {res:.3g})."
    )


# ----------------------------------------------------------------------------- solver


def _iterate(
    G: Callable[[np.ndarray], np.ndarray],
    theta: np.ndarray,
    blocks: list[slice],
    valid: Callable[[np.ndarray], bool],
    rtol: float,
    max_iter: int,
    memory: int,
    fail: Callable[[int, float], str],
) -> tuple[np.ndarray, int, float]:
    """Anderson-accelerated fixed-point iteration ``theta = G(theta)``.

    The residual is the largest over ``blocks`` of ``|G(theta) - theta|_inf / |G(theta)|_inf``
    (an absolute floor of 1e-300 only avoids 0/0). Falls back to damped Picard steps when an
    extrapolated point is invalid or the residual grows."""
    xs: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    alpha, best, res = 1.0, np.inf, np.inf
    for it in range(1, max_iter + 1):
        g = G(theta)
        if not np.all(np.isfinite(g)):
            raise FixedPointError(fail(it, np.inf))
        r = g - theta
        scale = np.ones_like(g)
        for b in blocks:
            scale[b] = max(np.max(np.abs(g[b])), 1e-300)
        res = float(np.max(np.abs(r) / scale))
        if res < rtol:
            return g, it, res
        if res > 10 * best:  # diverging: restart the history, damp harder
            xs.clear()
            rs.clear()
            alpha = max(alpha / 2, 1 / 64)
        best = min(best, res)
        xs.append(theta)
        rs.append(r)
        del xs[: -memory - 1], rs[: -memory - 1]
        step = theta + alpha * r
        if len(rs) > 1:
            dr = np.stack([(rs[j + 1] - rs[j]) / scale for j in range(len(rs) - 1)], axis=1)
            dx = np.stack([xs[j + 1] - xs[j] for j in range(len(xs) - 1)], axis=1)
            dg = dx + np.stack([rs[j + 1] - rs[j] for j in range(len(rs) - 1)], axis=1)
            coef = np.linalg.lstsq(dr, r / scale, rcond=None)[0]
            cand = g - dg @ coef
            if np.all(np.isfinite(cand)) and valid(cand):
                step = cand
            else:
                xs.clear()
                rs.clear()
        theta = step
    raise FixedPointError(fail(max_iter, res))


def _solve(
    G: Callable[[np.ndarray], tuple[np.ndarray, dict]],
    theta0: np.ndarray,
    blocks: list[slice],
    valid: Callable[[np.ndarray], bool],
    *,
    rtol: float,
    max_iter: int,
    memory: int,
    what: str,
    n: float,
    p: int,
    lam: float,
) -> tuple[np.ndarray, int, float, dict]:
    """The scaffolding both solvers share: ``G(theta) -> (next theta, extras)`` iterated by
    :func:`_iterate` on its vector part (a non-convergence names ``what``, ``n``, ``p``,
    ``lam``), then evaluated once more at the returned point so that the extras (the weights'
    mean and covariance, the expectations) belong to it. Returns
    ``(theta, iterations, residual, extras)``."""
    theta, it, res = _iterate(
        lambda th: G(th)[0],
        theta0,
        blocks,
        valid,
        rtol,
        max_iter,
        memory,
        lambda i, r: _message(what, n, p, lam, i, r),
    )
    return theta, it, res, G(theta)[1]


# ----------------------------------------------------------------------------- binary


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


def _gh(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return x, w / w.sum()


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
    two-class softmax) or ``"squared"`` (ridge, the reference of :func:`ridge_closed_form`).
    Raises :class:`FixedPointError` when the iteration does not converge within ``max_iter``."""
    if loss not in ("logistic", "squared"):
        raise ValueError(f"loss must be 'logistic' or 'squared', got {loss!r}")
    means, covs, gammas, _, p = _check_stats(means, covs, gammas, n, lam, k=2)
    L = _BinaryLoss(loss, float(lam))
    nodes, weights = _gh(n_nodes)
    eye = np.eye(p)

    def expectations(theta):
        d, m, s = theta[0:2], theta[2:4], theta[4:6]
        out = np.empty((3, 2))
        for c in range(2):
            z = m[c] + s[c] * nodes
            t = L.prox(c, z, d[c])
            xi, fp = L.f(c, t), L.fprime(t)
            out[:, c] = weights @ xi, weights @ xi**2, weights @ (fp / (1.0 - d[c] * fp))
        return out

    def G(theta):
        e1, e2, e3 = expectations(theta)
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

    # start from the large-lambda limit: xi ~ f(0), K ~ 0
    f0 = np.array([L.f(0, 0.0), L.f(1, 0.0)])
    w0 = gammas * f0 @ means
    d0 = np.trace(covs, axis1=1, axis2=2) / n
    s0 = np.sqrt(
        np.einsum("i,cij,j->c", w0, covs, w0)
        + np.einsum("c,cij,dji->d", gammas * f0**2, covs, covs) / n
    )
    theta0 = np.concatenate([d0, means @ w0, np.maximum(s0, 1e-12)])

    def valid(th):
        return bool(np.all(th[0:2] >= 0) and np.all(th[4:6] > 0))

    theta, it, res, state = _solve(
        G,
        theta0,
        [slice(0, 2), slice(2, 6)],
        valid,
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
    tr_mean, tr_std = np.empty(2), np.empty(2)
    for c in range(2):
        t = L.prox(c, m[c] + s[c] * nodes, d[c])
        tr_mean[c] = weights @ t
        tr_std[c] = np.sqrt(max(weights @ t**2 - tr_mean[c] ** 2, 0.0))
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


# ----------------------------------------------------------------------------- k classes


@dataclass(frozen=True)
class MulticlassTheory:
    """Theorem 4.8 for the k-class softmax (block form derived in docs/studies/seddik.md).

    ``logit_mean[c]`` (k,) and ``logit_cov[c]`` (k, k): law of the logits :math:`W^\\top x` of a
    new point of class ``c`` (and of :math:`W_{-i}^\\top x_i`). ``delta[c]`` is the k×k matrix
    :math:`\\Delta_c`. ``w_mean`` (p, k); ``w_cov`` (pk, pk) over ``vec W = (w_1; ...; w_k)``."""

    n: float
    p: int
    k: int
    lam: float
    gammas: np.ndarray
    delta: np.ndarray
    logit_mean: np.ndarray
    logit_cov: np.ndarray
    n_iter: int
    residual: float
    w_mean: np.ndarray = field(repr=False)
    w_cov: np.ndarray = field(repr=False)
    test_accuracy_per_class: np.ndarray
    train_accuracy_per_class: np.ndarray

    @property
    def w_std(self) -> np.ndarray:
        """Predicted standard deviation of each weight, shape (p, k)."""
        return np.sqrt(np.maximum(np.diag(self.w_cov), 0.0)).reshape(self.k, self.p).T

    @property
    def test_accuracy(self) -> float:
        return float(self.gammas @ self.test_accuracy_per_class)

    @property
    def train_accuracy(self) -> float:
        return float(self.gammas @ self.train_accuracy_per_class)

    def sample_logits(self, cls: int, size: int, seed: int = 0) -> np.ndarray:
        """``size`` draws (size, k) of the predicted Gaussian logits of class ``cls``."""
        rng = np.random.default_rng(seed)
        return rng.multivariate_normal(
            self.logit_mean[cls], self.logit_cov[cls], size=size, method="eigh"
        )


def _sqrt_psd(S: np.ndarray, rel: float = 1e-9) -> np.ndarray:
    """``B`` (k, r) with ``B @ B.T = S`` on the eigen-directions above ``rel * max``."""
    ev, V = np.linalg.eigh((S + S.T) / 2)
    top = max(ev.max(), 0.0)
    keep = ev > rel * top if top > 0 else np.zeros_like(ev, dtype=bool)
    return V[:, keep] * np.sqrt(ev[keep])


def _gauss_rule(S: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Fixed nodes ``(T, k)`` (centred) and weights for ``N(0, S)``: tensor Gauss–Hermite up
    to rank 3, fixed scrambled Sobol draws above."""
    B = _sqrt_psd(S)
    r = B.shape[1]
    if r == 0:
        return np.zeros((1, S.shape[0])), np.ones(1)
    if r <= 3:
        x, w = _gh({1: 64, 2: 32, 3: 16}[r])
        grid = np.stack(np.meshgrid(*([x] * r), indexing="ij"), -1).reshape(-1, r)
        wts = np.prod(np.stack(np.meshgrid(*([w] * r), indexing="ij"), -1).reshape(-1, r), 1)
        return grid @ B.T, wts
    u = qmc.Sobol(r, scramble=True, seed=seed).random_base2(13)
    g = norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
    return g @ B.T, np.full(len(g), 1.0 / len(g))


def _softmax_prox(cls: int, z: np.ndarray, Delta: np.ndarray, lam: float):
    """Solve ``x = f(z + Delta x)``, ``f(t) = (e_cls - softmax(t)) / lam``, for rows of ``z``.

    Returns ``xi`` (T, k), ``t = z + xi Delta^T`` and ``dxi`` (T, k, k) = ``(I - J Delta)^-1 J``.
    Newton with backtracking on ``|x - f(z + Delta x)|^2`` (descent direction)."""
    T, k = z.shape
    e = np.zeros(k)
    e[cls] = 1.0
    eye = np.eye(k)

    def F(x):
        t = z + x @ Delta.T
        return (e - softmax(t, axis=1)) / lam, t

    x = F(np.zeros_like(z))[0]
    for _ in range(100):
        fx, t = F(x)
        g = x - fx
        s = softmax(t, axis=1)
        J = -(np.einsum("ti,ij->tij", s, eye) - s[:, :, None] * s[:, None, :]) / lam
        A = eye - J @ Delta
        step = -np.linalg.solve(A, g[..., None])[..., 0]
        nrm = np.sum(g**2, axis=1)
        if np.max(nrm) < 1e-28 / lam**2:
            break
        a = np.ones(T)
        for _ in range(30):
            trial = x + a[:, None] * step
            ok = np.sum((trial - F(trial)[0]) ** 2, axis=1) <= (1 - 1e-4 * a) * nrm
            if np.all(ok):
                break
            a = np.where(ok, a, a / 2)
        x = x + a[:, None] * step
    fx, t = F(x)
    s = softmax(t, axis=1)
    J = -(np.einsum("ti,ij->tij", s, eye) - s[:, :, None] * s[:, None, :]) / lam
    dxi = np.linalg.solve(eye - J @ Delta, J)
    return x, t, dxi


def solve_multiclass(
    means,
    covs,
    gammas,
    n: float,
    lam: float,
    *,
    rtol: float = 1e-8,
    max_iter: int = 300,
    memory: int = 5,
    accuracy_draws: int = 2**15,
    seed: int = 0,
) -> MulticlassTheory:
    """Block (k-class) version of Theorem 4.8 for the softmax with common ``lam``.

    ``means`` (k, p), ``covs`` (k, p, p), ``gammas`` (k,). Accuracies are integrated with
    ``accuracy_draws`` (rounded up to a power of two) fixed Sobol draws seeded by ``seed``."""
    means, covs, gammas, k, p = _check_stats(means, covs, gammas, n, lam)
    if k < 2:
        raise ValueError("need at least two classes")
    eye = np.eye(p * k)
    nd, nm = k * k * k, k * k

    def unpack(theta):
        return (
            theta[:nd].reshape(k, k, k),
            theta[nd : nd + nm].reshape(k, k),
            theta[nd + nm :].reshape(k, k, k),
        )

    def G(theta):
        Delta, M, S = unpack(theta)
        e1, e2, e3 = np.empty((k, k)), np.empty((k, k, k)), np.empty((k, k, k))
        for c in range(k):
            nodes, w = _gauss_rule(S[c])
            xi, _, dxi = _softmax_prox(c, M[c] + nodes, Delta[c], lam)
            e1[c], e2[c], e3[c] = (
                w @ xi,
                np.einsum("t,ta,tb->ab", w, xi, xi),
                (np.einsum("t,tab->ab", w, dxi)),
            )
        K = sum(g * np.kron(a, C) for g, a, C in zip(gammas, e3, covs, strict=True))
        R1 = np.linalg.inv(eye - K)
        mu_t = sum(g * np.kron(a, mu) for g, a, mu in zip(gammas, e1, means, strict=True))
        w_vec = R1 @ mu_t
        Ct = sum(g * np.kron(a, C) for g, a, C in zip(gammas, e2, covs, strict=True))
        w_cov = R1 @ Ct @ R1.T / n
        Wm = w_vec.reshape(k, p).T  # (p, k)
        R1b = R1.reshape(k, p, k, p)
        Cwb = w_cov.reshape(k, p, k, p)
        Delta_new = np.einsum("cij,ajbi->cab", covs, R1b) / n
        M_new = means @ Wm
        S_new = np.einsum("cij,aibj->cab", covs, Cwb) + np.einsum("ia,cij,jb->cab", Wm, covs, Wm)
        S_new = (S_new + S_new.transpose(0, 2, 1)) / 2
        theta_new = np.concatenate([Delta_new.ravel(), M_new.ravel(), S_new.ravel()])
        return theta_new, {"w_mean": Wm, "w_cov": w_cov}

    # large-lambda start: W ~ (1/lam) sum_c gamma_c mu_c (e_c - 1/k)^T
    W0 = np.einsum("c,cp,ca->pa", gammas, means, np.eye(k) - 1.0 / k) / lam
    D0 = np.einsum("c,ab->cab", np.trace(covs, axis1=1, axis2=2) / n, np.eye(k))
    S0 = np.einsum("ia,cij,jb->cab", W0, covs, W0) + np.einsum(
        "c,ab->cab", np.trace(covs, axis1=1, axis2=2) / (n * lam**2 * k), np.eye(k) - 1 / k
    )
    theta0 = np.concatenate([D0.ravel(), (means @ W0).ravel(), S0.ravel()])

    def valid(th):
        D, _, S = unpack(th)
        return all(np.linalg.eigvalsh((A + A.T) / 2).min() >= -1e-12 for A in (*D, *S))

    theta, it, res, state = _solve(
        G,
        theta0,
        [slice(0, nd), slice(nd, len(theta0))],
        valid,
        rtol=rtol,
        max_iter=max_iter,
        memory=memory,
        what=f"{k}-class softmax",
        n=n,
        p=p,
        lam=lam,
    )
    Delta, M, S = unpack(theta)
    test_acc, train_acc = np.empty(k), np.empty(k)
    m_log2 = int(np.ceil(np.log2(max(accuracy_draws, 2))))
    u = qmc.Sobol(k, scramble=True, seed=seed).random_base2(m_log2)
    g = norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
    for c in range(k):
        B = _sqrt_psd(S[c])
        z = M[c] + g[:, : B.shape[1]] @ B.T
        test_acc[c] = np.mean(np.argmax(z, axis=1) == c)
        _, t, _ = _softmax_prox(c, z, Delta[c], lam)
        train_acc[c] = np.mean(np.argmax(t, axis=1) == c)
    return MulticlassTheory(
        n=float(n),
        p=p,
        k=k,
        lam=float(lam),
        gammas=gammas,
        delta=Delta,
        logit_mean=M,
        logit_cov=S,
        n_iter=it,
        residual=res,
        w_mean=state["w_mean"],
        w_cov=state["w_cov"],
        test_accuracy_per_class=test_acc,
        train_accuracy_per_class=train_acc,
    )


# ----------------------------------------------------------------------------- ridge


@dataclass(frozen=True)
class RidgeClosedForm:
    """Deterministic-equivalent (Marchenko–Pastur type) statistics of two-class ridge.

    Same conventions as :class:`BinaryTheory`: ``m``, ``sigma`` of :math:`x^\\top w` for a new
    point of each class, ``w_mean`` the predicted mean of ``w = (S + lam I)^{-1} b`` with
    ``S = X^T X / n`` and ``b = X^T y / n`` (labels +1 / -1)."""

    n: float
    p: int
    lam: float
    gammas: np.ndarray
    delta: np.ndarray
    m: np.ndarray
    sigma: np.ndarray
    n_iter: int
    w_mean: np.ndarray = field(repr=False)

    @property
    def test_accuracy_per_class(self) -> np.ndarray:
        return norm.cdf(SIGNS * self.m / self.sigma)

    @property
    def test_accuracy(self) -> float:
        return float(self.gammas @ self.test_accuracy_per_class)


def ridge_closed_form(
    means, covs, gammas, n: float, lam: float, *, rtol: float = 1e-12, max_iter: int = 10_000
) -> RidgeClosedForm:
    """Ridge on a two-class Gaussian mixture from the resolvent's deterministic equivalent.

    With :math:`u_i=(x_i;\\tilde y_i)` and :math:`A(t)=\\frac1n\\sum_iu_iu_i^\\top +
    \\operatorname{diag}(\\lambda I - tC, 0)`, the Schur complement gives
    :math:`b^\\top(S+\\lambda I-tC)^{-1}b = 1 - 1/[A(t)^{-1}]_{p+1,p+1}` and
    :math:`w = -[A^{-1}]_{1:p,p+1}/[A^{-1}]_{p+1,p+1}`. :math:`A^{-1}` is replaced by
    :math:`\\bar A=(\\Gamma+\\sum_a\\gamma_a M_a/(1+\\tilde\\delta_a))^{-1}`,
    :math:`M_a=\\mathbb E[uu^\\top]`, :math:`\\tilde\\delta_a=\\frac1n\\operatorname{Tr}
    (\\hat C_a\\bar A)` (Couillet & Liao, mixture model); :math:`w^\\top C_\\ell w` is the
    t-derivative at 0, obtained from a k×k linear system for :math:`\\tilde\\delta'`."""
    means, covs, gammas, k, p = _check_stats(means, covs, gammas, n, lam, k=2)
    q = p + 1
    Mmat = np.zeros((k, q, q))
    Chat = np.zeros((k, q, q))
    for a in range(k):
        v = np.append(means[a], SIGNS[a])
        Mmat[a] = np.outer(v, v)
        Mmat[a, :p, :p] += covs[a]
        Chat[a, :p, :p] = covs[a]
    Gam = np.zeros((q, q))
    Gam[:p, :p] = lam * np.eye(p)

    def Abar(d):
        return np.linalg.inv(Gam + np.einsum("a,aij->ij", gammas / (1 + d), Mmat))

    d = np.trace(covs, axis1=1, axis2=2) / (n * lam)
    it, change = 0, np.inf
    while change > rtol:  # standard resolvent iteration (a contraction)
        if it == max_iter:
            raise FixedPointError(_message("ridge closed-form", n, p, lam, it, change))
        it += 1
        d_new = np.einsum("aij,ji->a", Chat, Abar(d)) / n
        change = float(np.max(np.abs(d_new - d)) / np.max(np.abs(d_new)))
        d = d_new
    A = Abar(d)
    a = A[p, p]
    w_mean = -A[:p, p] / a
    B = np.einsum("a,aij->aij", gammas / (1 + d) ** 2, Mmat)
    sig2 = np.empty(k)
    for ell in range(k):
        Cl = Chat[ell]
        ACA = A @ Cl @ A
        u = np.einsum("aij,ji->a", Chat, ACA) / n
        T = np.array([[np.sum(Chat[i] * (A @ B[j] @ A).T) / n for j in range(k)] for i in range(k)])
        dprime = np.linalg.solve(np.eye(k) - T, u)
        Adot = ACA + A @ np.einsum("b,bij->ij", dprime, B) @ A
        sig2[ell] = Adot[p, p] / a**2
    return RidgeClosedForm(
        n=float(n),
        p=p,
        lam=float(lam),
        gammas=gammas,
        delta=d,
        m=means @ w_mean,
        sigma=np.sqrt(sig2),
        n_iter=it,
        w_mean=w_mean,
    )
