"""Theorem 4.8 for the k-class softmax in its block form (derived in docs/studies/seddik.md):
the fixed point ``(Delta_c, M_c, S_c)`` per class and what follows from it
(:func:`solve_multiclass`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import softmax
from scipy.stats import norm, qmc

from .common import _check_stats, _gh
from .iteration import _solve


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


def _unpack(theta: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Delta, M, S)`` of the flat ``theta``: (k, k, k), (k, k), (k, k, k)."""
    nd, nm = k * k * k, k * k
    return (
        theta[:nd].reshape(k, k, k),
        theta[nd : nd + nm].reshape(k, k),
        theta[nd + nm :].reshape(k, k, k),
    )


def _multiclass_expectations(Delta, M, S, lam: float, k: int):
    """Per class ``c``: ``E[xi]`` (k,), ``E[xi xi^T]`` and ``E[dxi]`` (k, k) over the logits
    ``z ~ N(M_c, S_c)`` (:func:`_gauss_rule`), stacked over the classes."""
    e1, e2, e3 = np.empty((k, k)), np.empty((k, k, k)), np.empty((k, k, k))
    for c in range(k):
        nodes, w = _gauss_rule(S[c])
        xi, _, dxi = _softmax_prox(c, M[c] + nodes, Delta[c], lam)
        e1[c], e2[c], e3[c] = (
            w @ xi,
            np.einsum("t,ta,tb->ab", w, xi, xi),
            np.einsum("t,tab->ab", w, dxi),
        )
    return e1, e2, e3


def _multiclass_map(theta, means, covs, gammas, n: float, lam: float, k: int, p: int, eye):
    """One application of the block fixed-point map: the next ``(Delta, M, S)`` (flat) and the
    extras at ``theta`` (the weights' mean (p, k) and covariance over ``vec W``)."""
    Delta, M, S = _unpack(theta, k)
    e1, e2, e3 = _multiclass_expectations(Delta, M, S, lam, k)
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


def _multiclass_start(means, covs, gammas, n: float, lam: float, k: int) -> np.ndarray:
    """The large-lambda start: ``W ~ (1/lam) sum_c gamma_c mu_c (e_c - 1/k)^T``."""
    W0 = np.einsum("c,cp,ca->pa", gammas, means, np.eye(k) - 1.0 / k) / lam
    D0 = np.einsum("c,ab->cab", np.trace(covs, axis1=1, axis2=2) / n, np.eye(k))
    S0 = np.einsum("ia,cij,jb->cab", W0, covs, W0) + np.einsum(
        "c,ab->cab", np.trace(covs, axis1=1, axis2=2) / (n * lam**2 * k), np.eye(k) - 1 / k
    )
    return np.concatenate([D0.ravel(), (means @ W0).ravel(), S0.ravel()])


def _multiclass_valid(th: np.ndarray, k: int) -> bool:
    """A point the iteration may step to: every ``Delta_c`` and ``S_c`` positive semidefinite."""
    D, _, S = _unpack(th, k)
    return all(np.linalg.eigvalsh((A + A.T) / 2).min() >= -1e-12 for A in (*D, *S))


def _multiclass_accuracy(Delta, M, S, lam: float, k: int, accuracy_draws: int, seed: int):
    """Test and training accuracy per class: the share of ``accuracy_draws`` (rounded up to a
    power of two) fixed Sobol draws of the predicted logits (test) and of their training
    counterparts ``t = z + Delta xi(z)`` whose largest entry is the true class's."""
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
    return test_acc, train_acc


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
    theta0 = _multiclass_start(means, covs, gammas, n, lam, k)
    theta, it, res, state = _solve(
        lambda th: _multiclass_map(th, means, covs, gammas, n, lam, k, p, eye),
        theta0,
        [slice(0, k * k * k), slice(k * k * k, len(theta0))],
        lambda th: _multiclass_valid(th, k),
        rtol=rtol,
        max_iter=max_iter,
        memory=memory,
        what=f"{k}-class softmax",
        n=n,
        p=p,
        lam=lam,
    )
    Delta, M, S = _unpack(theta, k)
    test_acc, train_acc = _multiclass_accuracy(Delta, M, S, lam, k, accuracy_draws, seed)
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
