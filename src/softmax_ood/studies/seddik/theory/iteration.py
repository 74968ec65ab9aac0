"""The fixed-point iteration both solvers share: Anderson acceleration with damped Picard
fallbacks (:func:`_iterate`) and the scaffolding that names a non-convergence and evaluates the
map's extras at the returned point (:func:`_solve`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .common import FixedPointError, _message


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
