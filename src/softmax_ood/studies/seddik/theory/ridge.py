"""The reference the squared-loss solver is checked against: two-class ridge on a Gaussian
mixture from the resolvent's deterministic equivalent (:func:`ridge_closed_form`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import norm

from .common import SIGNS, FixedPointError, _check_stats, _message


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
