"""What every Seddik frame shares: the solvers called with the configured options (a
non-convergence names the setting it was solving), the classifier trained with the configured
tolerance, and the accuracy rows of practice and theory."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kurtosis, norm, skew

from ..practice import fit_softmax
from ..theory import SIGNS, FixedPointError, solve_binary, solve_multiclass

_BINARY_KEYS = ("rtol", "max_iter", "n_nodes")
_MULTI_KEYS = {
    "multiclass_rtol": "rtol",
    "multiclass_max_iter": "max_iter",
    "accuracy_draws": "accuracy_draws",
}


def binary_options(solver: dict | None) -> dict:
    """Keyword arguments of :func:`~.theory.solve_binary` from a ``solver`` config dict."""
    return {k: v for k, v in (solver or {}).items() if k in _BINARY_KEYS}


def multiclass_options(solver: dict | None) -> dict:
    """Keyword arguments of :func:`~.theory.solve_multiclass` from a ``solver`` config dict."""
    return {
        new: v for old, new in _MULTI_KEYS.items() if (v := (solver or {}).get(old)) is not None
    }


def _named(where: str, err: FixedPointError) -> FixedPointError:
    """The solver's one-sentence message prefixed with the setting it was solving."""
    msg = str(err)
    return FixedPointError(f"{where}: {msg[:1].lower()}{msg[1:]}")


def _binary(where: str, *args, solver: dict | None = None, **kw):
    try:
        return solve_binary(*args, **binary_options(solver), **kw)
    except FixedPointError as err:
        raise _named(where, err) from None


def _multiclass(where: str, *args, solver: dict | None = None, **kw):
    try:
        return solve_multiclass(*args, **multiclass_options(solver), **kw)
    except FixedPointError as err:
        raise _named(where, err) from None


def _fit(X, y, lam, train: dict | None, **kw):
    """:func:`~.practice.fit_softmax` with the configured tolerance / iteration cap."""
    opts = {k: v for k, v in (train or {}).items() if k in ("tol", "max_iter")}
    return fit_softmax(X, y, lam, **opts, **kw)


def _accuracy_rows(fit, X, y, k: int, *, moments: bool = False, **keys) -> list[dict]:
    """Accuracy overall (``cls="all"``) and per class; ``n_points`` is the number of points
    behind each accuracy. With ``moments`` (two classes, scalar form ``w``), each class row also
    carries the measured moments of the score xᵀw (``score_mean``, ``score_std``,
    ``score_skew``, excess ``score_kurt``) and ``gauss_accuracy``, the accuracy a Gaussian with
    those two moments gives (Φ(±mean/std)); the "all" row's
    ``gauss_accuracy`` weights the classes by their share of ``y``."""
    rows = []
    pred = fit.predict(X)
    rows.append(
        {**keys, "cls": "all", "accuracy": float(np.mean(pred == y)), "n_points": int(len(y))}
    )
    gauss = []
    for c in range(k):
        sel = y == c
        row = {
            **keys,
            "cls": str(c),
            "accuracy": float(np.mean(pred[sel] == c)),
            "n_points": int(sel.sum()),
        }
        if moments:
            s = X[sel] @ fit.w
            mean, std = float(s.mean()), float(s.std())
            row.update(
                score_mean=mean,
                score_std=std,
                score_skew=float(skew(s)),
                score_kurt=float(kurtosis(s)),
                gauss_accuracy=float(norm.cdf(SIGNS[c] * mean / std)),
            )
            gauss.append(row["gauss_accuracy"] * sel.mean())
        rows.append(row)
    if moments:
        rows[0]["gauss_accuracy"] = float(sum(gauss))
    return rows


def _theory_rows(per_class: np.ndarray, weights: np.ndarray, th=None, **keys) -> list[dict]:
    """Theory rows; with ``th`` (a :class:`~.theory.BinaryTheory`) the class rows carry the
    predicted score moments (a Gaussian: skew and excess kurtosis 0) and ``gauss_accuracy``
    equal to the accuracy."""
    all_acc = float(weights @ per_class)
    rows = [{**keys, "cls": "all", "accuracy": all_acc}]
    if th is not None:
        rows[0]["gauss_accuracy"] = all_acc
    for c, a in enumerate(per_class):
        row = {**keys, "cls": str(c), "accuracy": float(a)}
        if th is not None:
            row.update(
                score_mean=float(th.m[c]),
                score_std=float(th.sigma[c]),
                score_skew=0.0,
                score_kurt=0.0,
                gauss_accuracy=float(a),
            )
        rows.append(row)
    return rows


def _finish(rows: list[dict], first: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if "seed" in frame:
        frame["seed"] = frame["seed"].astype("Int64")
    return frame[first + [c for c in frame.columns if c not in first]]
