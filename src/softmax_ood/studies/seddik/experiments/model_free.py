"""Figs. 2-4, functions of the config alone (no trained network): accuracy vs ``p`` on the
Gaussian mixture (Fig. 2), the leave-one-out projections on an image pair (Fig. 3) and accuracy
vs ``n`` on that pair (Fig. 4), theory vs trained classifiers."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..practice import load_digits_pair, loo_projections, paper_mixture
from .common import _accuracy_rows, _binary, _finish, _fit, _theory_rows
from .input_shape import input_gauss_distance


def fig2_frame(
    ps: Iterable[int] = (25, 50, 100, 200, 400, 800),
    seeds: Iterable[int] = range(5),
    *,
    n: int = 400,
    lam: float = 20.0,
    gammas=(1 / 3, 2 / 3),
    mean_norm: float = 0.5,
    n_test: int = 4000,
    solver: dict | None = None,
    train: dict | None = None,
) -> pd.DataFrame:
    """Fig. 2: accuracy vs ``p`` on the Gaussian mixture (``C = I``, ``mu_1 _|_ mu_2``,
    ``|mu| = mean_norm``), theory (Theorem 4.8) vs L-BFGS-trained classifiers, train and test.

    Columns: ``p, n, lam, source, split, seed, cls, accuracy, n_points`` and, on test rows, the
    score moments of :func:`_accuracy_rows` (practice: measured on the test points; theory: the
    predicted Gaussian ``N(m, sigma^2)``), which split a theory-practice gap into its moments
    part and its shape part. Practice test accuracies use
    ``n_test`` fresh points with the same proportions, one training/test draw per seed."""
    rows: list[dict] = []
    for p in ps:
        spec = paper_mixture(p, mean_norm=mean_norm, gammas=gammas)
        th = _binary(
            f"Fig. 2 (Gaussian mixture, p={p})",
            spec.means,
            spec.covs,
            spec.gammas,
            n,
            lam,
            solver=solver,
        )
        base = {"p": p, "n": n, "lam": lam}
        for split, acc in (
            ("train", th.train_accuracy_per_class),
            ("test", th.test_accuracy_per_class),
        ):
            rows += _theory_rows(
                acc,
                spec.gammas,
                th if split == "test" else None,
                **base,
                source="theory",
                split=split,
                seed=pd.NA,
            )
        for seed in seeds:
            X, y = spec.sample(n, seed)
            Xt, yt = spec.sample(n_test, 10_000 + seed)
            fit = _fit(X, y, lam, train)
            for split, (A, b) in (("train", (X, y)), ("test", (Xt, yt))):
                rows += _accuracy_rows(
                    fit,
                    A,
                    b,
                    2,
                    moments=split == "test",
                    **base,
                    source="practice",
                    split=split,
                    seed=seed,
                )
    return _finish(rows, ["p", "n", "lam", "source", "split", "seed", "cls", "accuracy"])


def fig3_frame(
    lam: float = 20.0,
    digits: tuple[int, int] = (1, 2),
    *,
    balance: bool = True,
    seed: int = 0,
    loo: str = "exact",
    source: str = "sklearn",
    per_class: int | None = None,
    solver: dict | None = None,
    train: dict | None = None,
) -> pd.DataFrame:
    """Fig. 3: leave-one-out projections :math:`x_i^\\top w_{-i}` on two image classes
    (:func:`load_digits_pair`: sklearn 8x8 digits or raw 28x28 Fashion-MNIST)
    per class, with the predicted Gaussian ``N(m_l, sigma_l^2)`` of Theorem 4.8.

    One row per training point: ``cls, digit`` (the class's index in its dataset), ``label``
    (its name: "Pullover", or "digit 1"), ``index, loo_projection, train_projection``
    (:math:`x_i^\\top w`), and the class's ``theory_mean, theory_std`` (law of the LOO
    projection) and ``theory_train_mean, theory_train_std`` (moments of :math:`x_i^\\top w`).
    ``loo`` is ``"exact"`` (refits) or ``"newton"`` (one-step approximation).

    The input's own shape (the paper: "even though the input data is far from Gaussian"):
    per class, ``input_gauss`` is the median over the class's non-constant coordinates (pixels)
    of their distance from Gaussian (:func:`gauss_distance`, in units of the bars), and
    ``input_gauss_se`` its bootstrap standard error over the class's images
    (:func:`input_gauss_distance`)."""
    d = load_digits_pair(digits, balance=balance, seed=seed, source=source, per_class=per_class)
    n = len(d.y)
    shape = {c: input_gauss_distance(d.X[d.y == c], seed) for c in range(2)}
    fit = _fit(d.X, d.y, lam, train)
    z = loo_projections(d.X, d.y, lam, method=loo, fit=fit)[:, 0]
    th = _binary(
        f"Fig. 3 (digits {digits[0]} vs {digits[1]}, n={n})",
        d.means,
        d.covs,
        d.gammas,
        n,
        lam,
        solver=solver,
    )
    return pd.DataFrame(
        {
            "cls": d.y,
            "digit": np.asarray(digits)[d.y],
            "label": np.asarray(_class_names(digits, source))[d.y],
            "index": np.arange(n),
            "loo_projection": z,
            "train_projection": d.X @ fit.w,
            "theory_mean": th.m[d.y],
            "theory_std": th.sigma[d.y],
            "theory_train_mean": th.train_score_mean[d.y],
            "theory_train_std": th.train_score_std[d.y],
            "input_gauss": np.array([shape[c][0] for c in range(2)])[d.y],
            "input_gauss_se": np.array([shape[c][1] for c in range(2)])[d.y],
            "lam": lam,
            "n": n,
            "p": d.X.shape[1],
        }
    )


def _class_names(pair, source: str) -> list[str]:
    """The two classes' names: Fashion-MNIST's (``source="fashion"``) or "digit d"."""
    if source == "fashion":
        from ....fashion import FASHION_CLASSES

        return [FASHION_CLASSES[int(c)] for c in pair]
    return [f"digit {int(c)}" for c in pair]


def fig4_frame(
    ns: Iterable[int] = (20, 40, 80, 120, 160, 200, 240),
    seeds: Iterable[int] = range(5),
    *,
    lam: float = 20.0,
    digits: tuple[int, int] = (1, 2),
    balance: bool = True,
    seed: int = 0,
    source: str = "sklearn",
    per_class: int | None = None,
    solver: dict | None = None,
    train: dict | None = None,
) -> pd.DataFrame:
    """Fig. 4: digits accuracy vs training size ``n`` (the paper fixes ``p`` and
    ``gamma = 1/2``), theory vs practice, train and test.

    Each seed draws ``n/2`` training points per class from the balanced pool and tests on the
    rest of the pool; the theory uses the pool's class means and covariances (as the paper
    uses whole-dataset statistics). Columns as :func:`fig2_frame` with ``n`` varying.

    Theorem 4.3's fluctuation (the spread of the trained weights around their deterministic
    limit, of order 1/√n): on the test split's ``cls="all"`` rows, practice rows carry
    ``w_dev`` = ‖w − E w‖₂, the seed's learned weights' distance from Theorem 4.8's predicted
    mean ``E w`` (a 1-Lipschitz function of ``w``), and theory rows ``w_spread`` = √Tr C_w, the
    predicted root-mean-square of that distance; both rows carry ``pool_n``, the pool the
    training points are drawn from without replacement (its finite-population factor
    ``1 − n/pool_n`` shrinks the measured spread at large ``n``)."""
    d = load_digits_pair(digits, balance=balance, seed=seed, source=source, per_class=per_class)
    p = d.X.shape[1]
    pool_n = len(d.y)
    rows: list[dict] = []
    for n in ns:
        half = n // 2
        base = {"p": p, "n": 2 * half, "lam": lam}
        th = _binary(
            f"Fig. 4 (digits {digits[0]} vs {digits[1]}, n={2 * half})",
            d.means,
            d.covs,
            [0.5, 0.5],
            2 * half,
            lam,
            solver=solver,
        )
        for split, acc in (
            ("train", th.train_accuracy_per_class),
            ("test", th.test_accuracy_per_class),
        ):
            rows += _theory_rows(
                acc,
                np.array([0.5, 0.5]),
                th if split == "test" else None,
                **base,
                source="theory",
                split=split,
                seed=pd.NA,
            )
        rows[-3].update(w_spread=float(np.sqrt(max(np.trace(th.w_cov), 0.0))), pool_n=pool_n)
        for seed in seeds:
            rng = np.random.default_rng(seed)
            train_idx = np.concatenate(
                [rng.choice(np.flatnonzero(d.y == c), half, replace=False) for c in range(2)]
            )
            test_idx = np.setdiff1d(np.arange(len(d.y)), train_idx)
            fit = _fit(d.X[train_idx], d.y[train_idx], lam, train)
            for split, idx in (("train", train_idx), ("test", test_idx)):
                rows += _accuracy_rows(
                    fit,
                    d.X[idx],
                    d.y[idx],
                    2,
                    moments=split == "test",
                    **base,
                    source="practice",
                    split=split,
                    seed=seed,
                )
            rows[-3].update(w_dev=float(np.linalg.norm(fit.w - th.w_mean)), pool_n=pool_n)
    return _finish(rows, ["p", "n", "lam", "source", "split", "seed", "cls", "accuracy"])
