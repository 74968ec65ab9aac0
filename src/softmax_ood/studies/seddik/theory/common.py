"""What both solvers and the ridge reference share: the labels' signs, the error a
non-converging fixed point raises, the statistics' checks and the Gauss–Hermite rule."""

from __future__ import annotations

import numpy as np

SIGNS = np.array([1.0, -1.0])  # scalar label of class 0 (paper C_1) and class 1 (paper C_2)


class FixedPointError(ValueError):
    """The fixed point of Theorem 4.8 did not converge (one-sentence message)."""


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


def _gh(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    return x, w / w.sum()
