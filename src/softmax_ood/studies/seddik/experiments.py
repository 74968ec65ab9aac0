"""Tidy frames for Seddik et al.'s Figures 2-5, the validation checks and the solver timing.

Every function is deterministic given its arguments (seeded sampling, deterministic theory)
and returns a long :class:`pandas.DataFrame`; :mod:`.figures` draws them.

Common columns: ``source`` (``"theory"`` or ``"practice"``), ``split`` (``"train"`` or
``"test"``), ``cls`` (``"all"`` or the class index as a string), ``seed`` (nullable integer,
missing on theory rows).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.stats import kurtosis, norm, skew

from .practice import (
    class_statistics,
    fit_softmax,
    load_digits_pair,
    loo_projections,
    paper_mixture,
    structured_mixture,
)
from .shared import KURT_BAR, SKEW_BAR
from .theory import SIGNS, FixedPointError, ridge_closed_form, solve_binary, solve_multiclass

__all__ = [
    "binary_options",
    "fig2_frame",
    "fig3_frame",
    "fig4_frame",
    "fig5_frame",
    "fig5_networks",
    "cut_seed",
    "fit_test_split",
    "gauss_distance",
    "input_gauss_distance",
    "pool_parts",
    "timing",
    "validation_frame",
]


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
        from ...fashion import FASHION_CLASSES

        return [FASHION_CLASSES[int(c)] for c in pair]
    return [f"digit {int(c)}" for c in pair]


#: bootstrap resamples (over images) behind the standard error of the input's distance from
#: Gaussian
INPUT_BOOTSTRAP = 50


def gauss_distance(X: np.ndarray) -> np.ndarray:
    """Per column of ``X``: max(|skewness| / :data:`SKEW_BAR`, |excess kurtosis| /
    :data:`KURT_BAR`), the distance from Gaussian in units of the bars (below 1: within them);
    NaN for a constant column."""
    X = np.asarray(X, dtype=float)
    D = X - X.mean(0)
    D2 = D * D
    m2 = D2.mean(0)
    m3 = np.einsum("ij,ij->j", D2, D) / len(D)
    m4 = np.einsum("ij,ij->j", D2, D2) / len(D)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = m2 > 1e-24 * max(float(m2.max()), 1e-300)
        g1 = np.where(ok, m3 / m2**1.5, np.nan)
        g2 = np.where(ok, m4 / m2**2 - 3.0, np.nan)
    return np.maximum(np.abs(g1) / SKEW_BAR, np.abs(g2) / KURT_BAR)


def input_gauss_distance(X: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """``(median over the non-constant coordinates of their distance from Gaussian
    (:func:`gauss_distance`), its bootstrap SE over rows)``: how far the input itself is from
    Gaussian, coordinate by coordinate; the SE resamples rows (images, the independent units;
    the pixels of one image are not), ``INPUT_BOOTSTRAP`` times with ``default_rng([seed, 3])``."""
    X = np.asarray(X, dtype=np.float32)
    value = float(np.nanmedian(gauss_distance(X)))
    rng = np.random.default_rng([seed, 3])
    reps = [
        float(np.nanmedian(gauss_distance(X[rng.integers(0, len(X), len(X))])))
        for _ in range(INPUT_BOOTSTRAP)
    ]
    return value, float(np.std(reps, ddof=1))


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


def _normalise(X: np.ndarray, row_norm: float | None) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if row_norm is None:
        return X
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X * (row_norm * np.sqrt(X.shape[1]) / np.maximum(norms, 1e-300))


def fig5_frame(
    features_train,
    y_train,
    features_test,
    y_test,
    lam: float = 1.5,
    *,
    row_norm: float | None = 0.1,
    center: bool = False,
    stats_from: str = "all",
    features_stats=None,
    y_stats=None,
    seed: int = 0,
    k: int | None = None,
    solver: dict | None = None,
    train: dict | None = None,
) -> pd.DataFrame:
    """Fig. 5 for any feature matrices (rows = samples; labels ``0..k-1``, ``k >= 2``).

    Rows are rescaled to ``|x| = row_norm * sqrt(p)`` (the paper's 0.1; ``None`` keeps them),
    optionally centred by the training mean; the theory (k-class Theorem 4.8) uses the class
    means/covariances of ``stats_from``:

    * ``"independent"``: ``features_stats, y_stats``, points disjoint from the fit and test
      points (the paper's statistics come from many draws, independent of the classifier);
    * ``"train"``: the fit points themselves — the learned weights are then almost a function of
      those statistics, so the weights match is built in (r far below 1);
    * ``"all"``: fit and test points pooled (the test points then feed the theory too);

    and the training (fit) proportions and ``n`` in every case.

    Long frame, ``panel`` in:

    * ``"weights"``: ``source, output`` (class ``a`` of ``w_a``), ``index`` (coordinate),
      ``value``; theory rows carry ``theory_std`` (predicted std of that weight);
    * ``"logits"``: one row per test point and logit ``output``: practice logits
      :math:`W^\\top x` and, for the same ``true_class``, one draw of the predicted Gaussian;
    * ``"logit_moments"``: per ``true_class`` and logit ``output``, the mean (``value``) and
      standard deviation (``std``) of the test logits: theory (Theorem 4.8's Gaussian law) and
      practice (measured over the class's test points, ``n_points``);
    * ``"accuracy"``: ``source, split, cls, value`` (theory "all" uses the split's proportions)
      and, on practice rows, ``n_points`` (the points behind the accuracy, for its binomial
      interval);
    * ``"statistics"``: where the theory's class statistics come from (:func:`_statistics_rows`):
      ``split="stats"`` rows give the points behind them (``n_points``, per ``cls`` and "all");
      ``split="train"`` / ``"test"`` rows give in ``value`` how many of those points are also
      fit / test points (0 and 0 for ``"independent"``).
    """
    Xtr, Xte = _normalise(features_train, row_norm), _normalise(features_test, row_norm)
    ytr, yte = np.asarray(y_train, dtype=int), np.asarray(y_test, dtype=int)
    if stats_from == "independent":
        if features_stats is None or y_stats is None:
            raise ValueError("stats_from 'independent' needs features_stats and y_stats")
        Xst, yst = _normalise(features_stats, row_norm), np.asarray(y_stats, dtype=int)
    elif stats_from in ("all", "train"):
        if features_stats is not None or y_stats is not None:
            raise ValueError(f"stats_from {stats_from!r} takes no features_stats / y_stats")
        Xst, yst = None, None
    else:
        raise ValueError(f"stats_from must be 'independent', 'train' or 'all', got {stats_from!r}")
    if center:
        mean = Xtr.mean(0)
        Xtr, Xte = Xtr - mean, Xte - mean
        Xst = None if Xst is None else Xst - mean
    k = int(k if k is not None else max(ytr.max(), yte.max()) + 1)
    n, p = Xtr.shape
    if stats_from == "all":
        Xst, yst = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
        shared = {"train": len(ytr), "test": len(yte)}
    elif stats_from == "train":
        Xst, yst = Xtr, ytr
        shared = {"train": len(ytr), "test": 0}
    else:
        shared = {"train": 0, "test": 0}
    per_class = np.bincount(yst, minlength=k)[:k]
    if per_class.min() < 2:
        raise ValueError(
            f"the class statistics of Fig. 5 ({stats_from}) have {per_class.tolist()} points "
            "per class; each class needs at least 2 (raise seddik.fig5.stats_fraction or pool "
            "more splits)"
        )
    means, covs, _ = class_statistics(Xst, yst, k)
    gammas = np.bincount(ytr, minlength=k) / n
    th = _multiclass(
        f"Fig. 5 (features, k={k}, p={p}, n={n})",
        means,
        covs,
        gammas,
        n,
        lam,
        seed=seed,
        solver=solver,
    )
    fit = _fit(Xtr, ytr, lam, train, k=k)
    rows: list[dict] = []
    idx = np.arange(p)
    std = th.w_std
    for a in range(k):
        rows += [
            {"panel": "weights", "source": "practice", "output": a, "index": j, "value": v}
            for j, v in zip(idx, fit.weights[:, a], strict=True)
        ]
        rows += [
            {
                "panel": "weights",
                "source": "theory",
                "output": a,
                "index": j,
                "value": v,
                "theory_std": s,
            }
            for j, v, s in zip(idx, th.w_mean[:, a], std[:, a], strict=True)
        ]
    rng = np.random.default_rng(seed)
    L_prac = fit.logits(Xte)
    L_theo = np.empty_like(L_prac)
    for c in range(k):
        sel = np.flatnonzero(yte == c)
        L_theo[sel] = rng.multivariate_normal(
            th.logit_mean[c], th.logit_cov[c], size=len(sel), method="eigh"
        )
    for source, L in (("practice", L_prac), ("theory", L_theo)):
        for a in range(k):
            rows += [
                {
                    "panel": "logits",
                    "source": source,
                    "true_class": int(c),
                    "index": i,
                    "output": a,
                    "value": float(v),
                }
                for i, (c, v) in enumerate(zip(yte, L[:, a], strict=True))
            ]
    for c in range(k):  # the law of the logits: predicted vs measured mean and std per class
        sel = L_prac[yte == c]
        for a in range(k):
            rows.append(
                {
                    "panel": "logit_moments",
                    "source": "theory",
                    "true_class": c,
                    "output": a,
                    "value": float(th.logit_mean[c, a]),
                    "std": float(np.sqrt(max(th.logit_cov[c, a, a], 0.0))),
                }
            )
            rows.append(
                {
                    "panel": "logit_moments",
                    "source": "practice",
                    "true_class": c,
                    "output": a,
                    "value": float(sel[:, a].mean()),
                    "std": float(sel[:, a].std()),
                    "n_points": int(len(sel)),
                }
            )
    prop_te = np.bincount(yte, minlength=k) / len(yte)
    for split, A, b, per, w in (
        ("train", Xtr, ytr, th.train_accuracy_per_class, gammas),
        ("test", Xte, yte, th.test_accuracy_per_class, prop_te),
    ):
        for r in _accuracy_rows(fit, A, b, k, panel="accuracy", source="practice", split=split):
            rows.append({**r, "value": r.pop("accuracy")})
        for r in _theory_rows(per, w, panel="accuracy", source="theory", split=split):
            rows.append({**r, "value": r.pop("accuracy")})
    rows += _statistics_rows(per_class, shared)
    frame = pd.DataFrame(rows)
    frame["true_class"] = frame["true_class"].astype("Int64")
    frame["output"] = frame["output"].astype("Int64")
    frame["index"] = frame["index"].astype("Int64")
    frame.attrs.update(lam=lam, n=n, p=p, k=k, n_iter=th.n_iter, row_norm=row_norm)
    cols = [
        "panel",
        "source",
        "split",
        "cls",
        "true_class",
        "output",
        "index",
        "value",
        "theory_std",
        "std",
        "n_points",
    ]
    frame["n_points"] = frame["n_points"].astype("Int64")
    return frame[cols]


def _statistics_rows(per_class: np.ndarray, shared: dict) -> list[dict]:
    """The ``statistics`` panel: the points behind the theory's class statistics (``split =
    "stats"``, per class and "all", ``n_points``) and how many of them are also fit (``split =
    "train"``) and test (``"test"``) points (``value``), so the claims can tell statistics
    independent of the classifier from statistics that build the match in."""
    base = {"panel": "statistics", "source": "theory"}
    rows = [{**base, "split": "stats", "cls": "all", "n_points": int(per_class.sum())}]
    rows += [
        {**base, "split": "stats", "cls": str(c), "n_points": int(m)}
        for c, m in enumerate(per_class)
    ]
    rows += [
        {
            **base,
            "split": part,
            "cls": "all",
            "value": float(shared[part]),
            "n_points": int(per_class.sum()),
        }
        for part in ("train", "test")
    ]
    return rows


def fit_test_split(groups: np.ndarray, fit_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the fit half: within every group (e.g. (ID split, class)),
    ``round(fit_fraction * size)`` members drawn without replacement (seeded), so the fit and
    test parts are random draws from the same pool with the same mix of groups."""
    groups = np.asarray(groups)
    if not 0 < fit_fraction < 1:
        raise ValueError(f"fit_fraction must lie strictly between 0 and 1, got {fit_fraction}")
    rng = np.random.default_rng(seed)
    mask = np.zeros(len(groups), dtype=bool)
    for g in sorted(set(groups.tolist())):
        idx = np.flatnonzero(groups == g)
        mask[rng.choice(idx, int(round(fit_fraction * len(idx))), replace=False)] = True
    return mask


def pool_parts(
    groups: np.ndarray, fit_fraction: float, seed: int, stats_fraction: float | None = None
) -> np.ndarray:
    """The pool cut into disjoint parts, one label per member: ``"fit"``, ``"stats"``, ``"test"``.

    Within every group (e.g. (ID split, class)): the fit part is :func:`fit_test_split`'s
    (``round(fit_fraction * size)`` members, the same draw as without statistics); with
    ``stats_fraction``, ``round(stats_fraction * size)`` of the group's other members are drawn
    for the class statistics (a second seeded stream of ``seed``); the rest is the test part.
    The three parts are disjoint and together the whole group, so each is a random draw from
    one pool with the same mix of groups. ``stats_fraction`` ``None`` (or 0): fit and test
    only.

    :raises ValueError: a share outside (0, 1), or shares that leave no test part
        (``fit_fraction + stats_fraction >= 1``).
    """
    groups = np.asarray(groups)
    fit = fit_test_split(groups, fit_fraction, seed)
    parts = np.full(len(groups), "test", dtype="<U5")
    parts[fit] = "fit"
    if not stats_fraction:
        return parts
    if not 0 < stats_fraction < 1 or fit_fraction + stats_fraction >= 1:
        raise ValueError(
            f"stats_fraction must lie strictly between 0 and 1 - fit_fraction "
            f"({1 - fit_fraction:g}) so that a test part remains, got {stats_fraction}"
        )
    rng = np.random.default_rng([seed, 1])  # its own stream: the fit part stays fit_test_split's
    for g in sorted(set(groups.tolist())):
        rest = np.flatnonzero((groups == g) & ~fit)
        m = min(int(round(stats_fraction * int((groups == g).sum()))), len(rest))
        parts[rng.choice(rest, m, replace=False)] = "stats"
    return parts


#: how Fig. 5's pool is cut into statistics / fit / test parts across networks
CUTS = ("per_network", "shared")


def cut_seed(split_seed: int, network_seed: int) -> int:
    """The seed of network ``network_seed``'s own cut of the pool (``seddik.fig5.cut:
    per_network``): a 31-bit draw of ``SeedSequence([split_seed, network_seed])``, so each
    network's cut is an independent draw and the same network always gets the same cut."""
    state = np.random.SeedSequence([int(split_seed), int(network_seed)]).generate_state(1)
    return int(state[0] >> 1)


def fig5_networks(
    features: pd.DataFrame,
    *,
    fit_fraction: float = 0.5,
    split_seed: int = 0,
    classes=None,
    stats_from: str = "all",
    stats_fraction: float | None = None,
    cut: str = "per_network",
    **kwargs,
) -> pd.DataFrame:
    """:func:`fig5_frame` for every network of a features frame (one per training ``seed``,
    as written by :func:`~.features.extract_network_features`), concatenated with a ``seed``
    column.

    Per network, the pooled images of every ID split in the frame are cut by
    :func:`pool_parts` (stratified by ID split and class): fit, test and, with ``stats_from="independent"``, a ``stats_fraction``
    share for the theory's class statistics, disjoint from the other two — the paper's
    statistics come from many draws, independent of the classifier; statistics of the fit
    points (``"train"``) build the weights match in. Every part is a draw from one pool, which
    is what the theory assumes. ``stats_fraction`` applies to ``"independent"`` only (it is
    ignored otherwise).
    ``classes`` (a list of ID classes, or ``None`` for all) keeps those classes' images only,
    relabelled ``0..len(classes)-1`` in that order (Fig. 5's three classes).
    ``cut``: ``"per_network"`` (each network its own cut, seeded by :func:`cut_seed` of
    ``split_seed`` and the network's seed, so the networks are independent replicates of
    training *and* cut, the claims' unit of replication) or ``"shared"`` (one cut of seed
    ``split_seed`` for every network: the networks then share their statistics, fit and test
    parts, and the claims average them into one replicate). The ``cut`` column names each
    network's cut seed.
    ``kwargs`` go to :func:`fig5_frame`."""
    if cut not in CUTS:
        raise ValueError(f"seddik.fig5.cut is {cut!r}; expected one of {list(CUTS)}")
    independent = stats_from == "independent"
    if independent and stats_fraction is None:
        raise ValueError("stats_from 'independent' needs stats_fraction (the statistics' share)")
    from .features import network_features, num_classes

    k = num_classes(features)
    if classes is not None:
        classes = [int(c) for c in classes]
        valid = all(0 <= c < k for c in classes) and len(classes) >= 2
        if not valid or len(set(classes)) != len(classes):
            raise ValueError(
                f"seddik.fig5.classes is {classes}; expected at least two distinct classes "
                f"among the prepared data's 0..{k - 1}"
            )
    frames = []
    for seed in sorted(features["seed"].unique()):
        X, y, split = network_features(features, int(seed))
        if classes is not None:
            keep = np.isin(y, classes)
            relabel = {c: i for i, c in enumerate(classes)}
            X, split = X[keep], np.asarray(split)[keep]
            y = np.array([relabel[int(c)] for c in y[keep]], dtype=y.dtype)
            k = len(classes)
        groups = np.array([f"{s}/{c}" for s, c in zip(split, y, strict=True)])
        cseed = cut_seed(split_seed, int(seed)) if cut == "per_network" else int(split_seed)
        part = pool_parts(groups, fit_fraction, cseed, stats_fraction if independent else None)
        fit, test, st = part == "fit", part == "test", part == "stats"
        extra = {"features_stats": X[st], "y_stats": y[st]} if independent else {}
        f = fig5_frame(
            X[fit], y[fit], X[test], y[test], k=k, stats_from=stats_from, **extra, **kwargs
        )
        f.insert(0, "seed", int(seed))
        f.insert(1, "cut", cseed)
        frames.append(f)
    out = pd.concat(frames, ignore_index=True)
    out["seed"] = out["seed"].astype("Int64")
    out["cut"] = out["cut"].astype("Int64")
    return out


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
        # logistic
        th = _binary(
            f"Validation (logistic, lam={lam:g})",
            spec.means,
            spec.covs,
            spec.gammas,
            n,
            lam,
            solver=solver,
        )
        stats = {q: [] for q in ("m", "sigma", "test_accuracy", "train_accuracy")}
        ridge = {"m": [], "sigma": []}
        for seed in seeds:
            X, y = spec.sample(n, seed)
            Xt, yt = spec.sample(n_test, 10_000 + seed)
            fit = _fit(X, y, lam, train)
            s = Xt @ fit.w
            stats["m"].append([s[yt == c].mean() for c in range(2)])
            stats["sigma"].append([s[yt == c].std() for c in range(2)])
            stats["test_accuracy"].append(
                [np.mean(fit.predict(Xt[yt == c]) == c) for c in range(2)]
            )
            stats["train_accuracy"].append([np.mean(fit.predict(X[y == c]) == c) for c in range(2)])
            yl = np.where(y == 0, 1.0, -1.0)
            w = np.linalg.solve(X.T @ X / n + lam * np.eye(p), X.T @ yl / n)
            ridge["m"].append(spec.means @ w)
            ridge["sigma"].append([np.sqrt(w @ C @ w) for C in spec.covs])
        theo = {
            "m": th.m,
            "sigma": th.sigma,
            "test_accuracy": th.test_accuracy_per_class,
            "train_accuracy": th.train_accuracy_per_class,
        }
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
                        "reference_kind": f"practice (mean of {len(seeds)} seeds)",
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
                        "theory": spec.gammas @ theo[q],
                        "reference": spec.gammas @ ref,
                        "reference_kind": f"practice (mean of {len(seeds)} seeds)",
                        "n_iter": th.n_iter,
                    }
                )
        # ridge
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
        for q in ("m", "sigma"):
            sim = np.mean(ridge[q], axis=0)
            for c in range(2):
                for kind, ref in (
                    ("closed_form", getattr(cf, q)[c]),
                    (f"simulation (mean of {len(seeds)} seeds)", sim[c]),
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
    frame = pd.DataFrame(rows)
    for col in ("cls", "theory", "reference", "reference_kind", "n_iter", "note"):
        if col not in frame:
            frame[col] = pd.NA
    frame["abs_diff"] = (frame["theory"] - frame["reference"]).abs()
    frame["n_iter"] = frame["n_iter"].astype("Int64")
    cols = [
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
    return frame[cols]


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
