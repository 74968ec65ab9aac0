"""The fixed point's wall time and iterations at the paper's size (Sec. 4.3: "converges in a
few iterations")."""

from __future__ import annotations

import time
from collections.abc import Iterable

import pandas as pd

from ..practice import structured_mixture
from .common import _binary, _multiclass


def timing(
    p: int = 512,
    n: int = 3000,
    *,
    ks: Iterable[int] = (2, 3),
    lam: float = 1.0,
    seed: int = 0,
    solver: dict | None = None,
) -> pd.DataFrame:
    """Wall time and iterations of the fixed point for ``p``, ``n`` on
    :func:`~.practice.structured_mixture` (non-identity covariances, no special-casing).

    ``k = 2`` uses the scalar form (:func:`~.theory.solve_binary`), ``k > 2`` the block form.
    Columns: ``solver, k, p, n, lam, seconds, n_iter, residual``."""
    rows = []
    for k in ks:
        spec = structured_mixture(p, k=k, seed=seed)
        t0 = time.perf_counter()
        if k == 2:
            where = f"Timing (k=2, p={p}, n={n})"
            th = _binary(where, spec.means, spec.covs, spec.gammas, n, lam, solver=solver)
            name = "solve_binary"
        else:
            where = f"Timing (k={k}, p={p}, n={n})"
            th = _multiclass(where, spec.means, spec.covs, spec.gammas, n, lam, solver=solver)
            name = "solve_multiclass"
        rows.append(
            {
                "solver": name,
                "k": k,
                "p": p,
                "n": n,
                "lam": lam,
                "seconds": time.perf_counter() - t0,
                "n_iter": th.n_iter,
                "residual": th.residual,
            }
        )
    return pd.DataFrame(rows)
