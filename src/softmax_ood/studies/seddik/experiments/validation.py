"""Checks of Theorem 4.8 where an answer is known (not in the paper): at small ``lam`` on a
mixture with two different non-identity covariances, the logistic fixed point against
classifiers trained to convergence, and the squared-loss fixed point against ridge's closed form
and simulated ridge."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..practice import structured_mixture
from ..theory import FixedPointError, ridge_closed_form
from .common import _binary, _fit, _named

#: the validation frame's columns, in order
COLUMNS = [
    "check",
    "lam",
    "p",
    "n",
    "cls",
    "quantity",
    "theory",
    "reference",
    "reference_kind",
    "abs_diff",
    "n_iter",
    "note",
]


def validation_frame(
    lams: Iterable[float] = (0.01, 0.05, 0.1, 0.5),
    seeds: Iterable[int] = range(4),
    *,
    p: int = 100,
    n: int = 400,
    mean_norm: float = 1.0,
    gammas=(0.4, 0.6),
    n_test: int = 4000,
    solver: dict | None = None,
    train: dict | None = None,
) -> pd.DataFrame:
    """Validation at small ``lam`` on a mixture with two different non-identity covariances
    (:func:`~.practice.structured_mixture`).

    ``check="logistic"``: theory vs classifiers trained to convergence (mean over ``seeds``):
    ``quantity`` in ``m, sigma`` (per class: mean/std of :math:`x^\\top w` on a fresh test
    set), ``test_accuracy``, ``train_accuracy``. ``check="ridge"``: the same machinery with
    the squared loss (``theory``) vs :func:`~.theory.ridge_closed_form` (``reference_kind =
    "closed_form"``) and vs simulated ridge (``"simulation"``). A fixed point that does not
    converge raises :class:`~.theory.FixedPointError` naming the setting (the run stops).

    Columns: ``check, lam, p, n, cls, quantity, theory, reference, reference_kind, abs_diff,
    n_iter, note``."""
    spec = structured_mixture(p, mean_norm=mean_norm, gammas=gammas)
    seeds = list(seeds)
    rows: list[dict] = []
    for lam in lams:
        base = {"lam": lam, "p": p, "n": n}
        th = _binary(
            f"Validation (logistic, lam={lam:g})",
            spec.means,
            spec.covs,
            spec.gammas,
            n,
            lam,
            solver=solver,
        )
        stats, ridge = _measured(spec, seeds, p, n, n_test, lam, train)
        rows += _logistic_rows(th, stats, spec.gammas, len(seeds), base)
        rt = _binary(
            f"Validation (squared loss, lam={lam:g})",
            spec.means,
            spec.covs,
            spec.gammas,
            n,
            lam,
            loss="squared",
            solver=solver,
        )
        try:
            cf = ridge_closed_form(spec.means, spec.covs, spec.gammas, n, lam)
        except FixedPointError as err:
            raise _named(f"Validation (ridge closed form, lam={lam:g})", err) from None
        rows += _ridge_rows(rt, cf, ridge, len(seeds), base)
    return _table(rows)


def _measured(spec, seeds: list[int], p: int, n: int, n_test: int, lam: float, train):
    """Per seed (one training and one fresh test draw): the trained classifier's per-class test
    score mean and std (``m``, ``sigma``) and test and training accuracies, and simulated
    ridge's (labels +1 / -1) ``m`` and ``sigma`` under the mixture's means and covariances.
    Returns ``(stats, ridge)``, lists of per-class values keyed by quantity."""
    stats = {q: [] for q in ("m", "sigma", "test_accuracy", "train_accuracy")}
    ridge = {"m": [], "sigma": []}
    for seed in seeds:
        X, y = spec.sample(n, seed)
        Xt, yt = spec.sample(n_test, 10_000 + seed)
        fit = _fit(X, y, lam, train)
        s = Xt @ fit.w
        stats["m"].append([s[yt == c].mean() for c in range(2)])
        stats["sigma"].append([s[yt == c].std() for c in range(2)])
        stats["test_accuracy"].append([np.mean(fit.predict(Xt[yt == c]) == c) for c in range(2)])
        stats["train_accuracy"].append([np.mean(fit.predict(X[y == c]) == c) for c in range(2)])
        yl = np.where(y == 0, 1.0, -1.0)
        w = np.linalg.solve(X.T @ X / n + lam * np.eye(p), X.T @ yl / n)
        ridge["m"].append(spec.means @ w)
        ridge["sigma"].append([np.sqrt(w @ C @ w) for C in spec.covs])
    return stats, ridge


def _logistic_rows(th, stats: dict, gammas: np.ndarray, n_seeds: int, base: dict) -> list[dict]:
    """``check="logistic"`` rows: the fixed point against the seeds' mean per class, and for the
    accuracies also over all classes (weighted by ``gammas``)."""
    theo = {
        "m": th.m,
        "sigma": th.sigma,
        "test_accuracy": th.test_accuracy_per_class,
        "train_accuracy": th.train_accuracy_per_class,
    }
    rows = []
    for q, vals in stats.items():
        ref = np.mean(vals, axis=0)
        for c in range(2):
            rows.append(
                {
                    **base,
                    "check": "logistic",
                    "cls": str(c),
                    "quantity": q,
                    "theory": theo[q][c],
                    "reference": ref[c],
                    "reference_kind": f"practice (mean of {n_seeds} seeds)",
                    "n_iter": th.n_iter,
                }
            )
        if q.endswith("accuracy"):
            rows.append(
                {
                    **base,
                    "check": "logistic",
                    "cls": "all",
                    "quantity": q,
                    "theory": gammas @ theo[q],
                    "reference": gammas @ ref,
                    "reference_kind": f"practice (mean of {n_seeds} seeds)",
                    "n_iter": th.n_iter,
                }
            )
    return rows


def _ridge_rows(rt, cf, ridge: dict, n_seeds: int, base: dict) -> list[dict]:
    """``check="ridge"`` rows: the squared-loss fixed point ``rt`` against the closed form
    ``cf`` and the seeds' simulated ridge (``m``, ``sigma``), and its test accuracy against the
    closed form's."""
    rows = []
    for q in ("m", "sigma"):
        sim = np.mean(ridge[q], axis=0)
        for c in range(2):
            for kind, ref in (
                ("closed_form", getattr(cf, q)[c]),
                (f"simulation (mean of {n_seeds} seeds)", sim[c]),
            ):
                rows.append(
                    {
                        **base,
                        "check": "ridge",
                        "cls": str(c),
                        "quantity": q,
                        "theory": getattr(rt, q)[c],
                        "reference": ref,
                        "reference_kind": kind,
                        "n_iter": rt.n_iter,
                    }
                )
    for c in range(2):
        rows.append(
            {
                **base,
                "check": "ridge",
                "cls": str(c),
                "quantity": "test_accuracy",
                "theory": rt.test_accuracy_per_class[c],
                "reference": cf.test_accuracy_per_class[c],
                "reference_kind": "closed_form",
                "n_iter": rt.n_iter,
            }
        )
    return rows


def _table(rows: list[dict]) -> pd.DataFrame:
    """The rows as the validation frame: missing columns filled with NA, ``abs_diff`` the
    absolute theory-reference gap, columns in :data:`COLUMNS` order."""
    frame = pd.DataFrame(rows)
    for col in ("cls", "theory", "reference", "reference_kind", "n_iter", "note"):
        if col not in frame:
            frame[col] = pd.NA
    frame["abs_diff"] = (frame["theory"] - frame["reference"]).abs()
    frame["n_iter"] = frame["n_iter"].astype("Int64")
    return frame[COLUMNS]
