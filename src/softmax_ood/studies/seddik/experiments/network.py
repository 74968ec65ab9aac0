"""Fig. 5: the k-class theory against a softmax classifier trained on feature matrices
(:func:`fig5_frame`), and on every network's penultimate features of a features frame, the pool
cut per network (:func:`fig5_networks`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..practice import class_statistics
from .common import _accuracy_rows, _fit, _multiclass, _theory_rows
from .pool import CUTS, cut_seed, pool_parts

#: the Fig. 5 frame's columns, in order
COLUMNS = [
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
    Xtr, ytr, Xte, yte, Xst, yst = _inputs(
        features_train,
        y_train,
        features_test,
        y_test,
        features_stats,
        y_stats,
        row_norm=row_norm,
        center=center,
        stats_from=stats_from,
    )
    k = int(k if k is not None else max(ytr.max(), yte.max()) + 1)
    n, p = Xtr.shape
    means, covs, per_class, shared = _class_stats(stats_from, Xtr, ytr, Xte, yte, Xst, yst, k)
    gammas = np.bincount(ytr, minlength=k) / n
    where = f"Fig. 5 (features, k={k}, p={p}, n={n})"
    th = _multiclass(where, means, covs, gammas, n, lam, seed=seed, solver=solver)
    fit = _fit(Xtr, ytr, lam, train, k=k)
    rows = _weight_rows(fit, th, k, p)
    L_prac = fit.logits(Xte)
    rows += _logit_rows(L_prac, _predicted_logits(th, yte, L_prac, k, seed), yte, k)
    rows += _logit_moment_rows(th, L_prac, yte, k)
    rows += _fig5_accuracy_rows(fit, th, Xtr, ytr, Xte, yte, gammas, k)
    rows += _statistics_rows(per_class, shared)
    return _table(rows, lam=lam, n=n, p=p, k=k, n_iter=th.n_iter, row_norm=row_norm)


def _inputs(
    features_train,
    y_train,
    features_test,
    y_test,
    features_stats,
    y_stats,
    *,
    row_norm: float | None,
    center: bool,
    stats_from: str,
):
    """``(Xtr, ytr, Xte, yte, Xst, yst)``: the fit, test and (``stats_from="independent"``)
    statistics points rescaled by :func:`_normalise` and, with ``center``, centred by the fit
    mean; ``Xst, yst`` are ``None`` for ``"all"`` and ``"train"``, which take no statistics
    points of their own."""
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
    return Xtr, ytr, Xte, yte, Xst, yst


def _class_stats(stats_from: str, Xtr, ytr, Xte, yte, Xst, yst, k: int):
    """``(means, covs, per_class, shared)``: the theory's class means and covariances from the
    points ``stats_from`` names (fit and test pooled, the fit points, or the statistics
    points), their count per class, and how many of them are fit / test points
    (:func:`_statistics_rows`). Each class needs at least two points."""
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
    return means, covs, per_class, shared


def _weight_rows(fit, th, k: int, p: int) -> list[dict]:
    """The ``weights`` panel: per output ``a`` and coordinate, the learned weight and the
    theory's predicted mean (with its predicted std, ``theory_std``)."""
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
    return rows


def _predicted_logits(th, yte: np.ndarray, L_prac: np.ndarray, k: int, seed: int) -> np.ndarray:
    """One draw of the predicted Gaussian logits per test point, for its true class
    (``default_rng(seed)``, class by class), shaped like the measured logits ``L_prac``."""
    rng = np.random.default_rng(seed)
    L_theo = np.empty_like(L_prac)
    for c in range(k):
        sel = np.flatnonzero(yte == c)
        L_theo[sel] = rng.multivariate_normal(
            th.logit_mean[c], th.logit_cov[c], size=len(sel), method="eigh"
        )
    return L_theo


def _logit_rows(L_prac: np.ndarray, L_theo: np.ndarray, yte: np.ndarray, k: int) -> list[dict]:
    """The ``logits`` panel: one row per test point and logit, measured and predicted."""
    rows: list[dict] = []
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
    return rows


def _logit_moment_rows(th, L_prac: np.ndarray, yte: np.ndarray, k: int) -> list[dict]:
    """The ``logit_moments`` panel, the law of the logits: predicted vs measured mean and std
    per true class and logit."""
    rows: list[dict] = []
    for c in range(k):
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
    return rows


def _fig5_accuracy_rows(fit, th, Xtr, ytr, Xte, yte, gammas, k: int) -> list[dict]:
    """The ``accuracy`` panel: per split, practice then theory rows (the theory's "all" weights
    the classes by the fit proportions on ``train``, the test proportions on ``test``)."""
    rows: list[dict] = []
    prop_te = np.bincount(yte, minlength=k) / len(yte)
    for split, A, b, per, w in (
        ("train", Xtr, ytr, th.train_accuracy_per_class, gammas),
        ("test", Xte, yte, th.test_accuracy_per_class, prop_te),
    ):
        for r in _accuracy_rows(fit, A, b, k, panel="accuracy", source="practice", split=split):
            rows.append({**r, "value": r.pop("accuracy")})
        for r in _theory_rows(per, w, panel="accuracy", source="theory", split=split):
            rows.append({**r, "value": r.pop("accuracy")})
    return rows


def _table(rows: list[dict], **attrs) -> pd.DataFrame:
    """The rows as the Fig. 5 frame: integer columns nullable, the setting (``attrs``: ``lam,
    n, p, k, n_iter, row_norm``) in ``frame.attrs``, columns in :data:`COLUMNS` order."""
    frame = pd.DataFrame(rows)
    frame["true_class"] = frame["true_class"].astype("Int64")
    frame["output"] = frame["output"].astype("Int64")
    frame["index"] = frame["index"].astype("Int64")
    frame.attrs.update(**attrs)
    frame["n_points"] = frame["n_points"].astype("Int64")
    return frame[COLUMNS]


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
    from ..features import network_features, num_classes

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
