"""Data for the Ulmer & Cinà study: seeded 2-D Gaussian blobs (the paper's Fig. 1 toy problem)
and the Wisconsin breast-cancer table (a real tabular task with features that are monotonically
related to the label, the setting of Assumption 1).

Everything is deterministic given ``seed``; arrays are ``float32`` features and ``int64`` labels.

:see Paper: Ulmer & Cinà, "Know your limits", §3.2 (covariate shift by scaling), §3.4 / Assumption 1
    (monotonic feature-label relation), §6 (monotone features in practice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

__all__ = [
    "TabularSplit",
    "synthetic_2d",
    "synthetic_split",
    "breast_cancer",
    "monotonicity_scores",
    "most_monotonic_feature",
]


@dataclass(frozen=True)
class TabularSplit:
    """A standardised, stratified train/test split.

    ``x_*`` are standardised with the *train* mean and standard deviation (``mean``, ``std``,
    one entry per feature), so ``x_raw = x * std + mean``.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray

    @property
    def n_classes(self) -> int:
        """Number of classes (labels are ``0 .. n_classes - 1``)."""
        return int(max(self.y_train.max(), self.y_test.max())) + 1


def synthetic_2d(
    n_per_class: int,
    n_classes: int,
    seed: int,
    *,
    radius: float,
    std: float,
    shuffle: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Isotropic 2-D Gaussian blobs with centres evenly spaced on a circle.

    Class ``k`` is drawn from :math:`\\mathcal{N}(\\mu_k, \\mathrm{std}^2 I_2)` with
    :math:`\\mu_k = r(\\cos(2\\pi k/C), \\sin(2\\pi k/C))`.

    :param n_per_class: points per class.
    :param n_classes: number of classes ``C >= 2``.
    :param seed: seed of ``numpy.random.default_rng``.
    :param radius: radius ``r`` of the circle of centres.
    :param std: standard deviation of every blob.
    :param shuffle: shuffle the rows (otherwise sorted by class).
    :return: ``(x, y)``: ``float32`` array ``(C * n_per_class, 2)`` and ``int64`` labels.
    """
    if n_classes < 2 or n_per_class < 1:
        raise ValueError("need n_classes >= 2 and n_per_class >= 1")
    rng = np.random.default_rng(seed)
    angles = 2.0 * np.pi * np.arange(n_classes) / n_classes
    centres = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    y = np.repeat(np.arange(n_classes, dtype=np.int64), n_per_class)
    x = centres[y] + std * rng.standard_normal((y.size, 2))
    if shuffle:
        order = rng.permutation(y.size)
        x, y = x[order], y[order]
    return x.astype(np.float32), y


def synthetic_split(
    n_train_per_class: int,
    n_test_per_class: int,
    n_classes: int,
    seed: int,
    *,
    radius: float,
    std: float,
) -> TabularSplit:
    """Training and held-out draws of :func:`synthetic_2d` (independent seeds derived from
    ``seed``), kept in raw coordinates (``mean = 0``, ``std = 1``) so the Fig. 1 grid and the
    scaled points live in the plane the data were drawn in.
    """
    train_seed, test_seed = np.random.SeedSequence([int(seed), 2]).generate_state(2)
    x_tr, y_tr = synthetic_2d(n_train_per_class, n_classes, int(train_seed), radius=radius, std=std)
    x_te, y_te = synthetic_2d(n_test_per_class, n_classes, int(test_seed), radius=radius, std=std)
    return TabularSplit(
        x_train=x_tr,
        y_train=y_tr,
        x_test=x_te,
        y_test=y_te,
        feature_names=("x1", "x2"),
        mean=np.zeros(2),
        std=np.ones(2),
    )


def breast_cancer(seed: int, test_fraction: float) -> TabularSplit:
    """The Wisconsin diagnostic breast-cancer data (569 x 30, binary) from scikit-learn.

    Stratified, seeded split (``sklearn.model_selection.train_test_split(stratify=y,
    random_state=seed)``), then standardisation with the training mean and (population) standard
    deviation. Labels are scikit-learn's: 0 = malignant, 1 = benign.

    :param seed: split seed.
    :param test_fraction: share of rows held out, in ``(0, 1)``.
    :return: a :class:`TabularSplit`.
    """
    bunch = load_breast_cancer()
    x = np.asarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target, dtype=np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_fraction, stratify=y, random_state=seed
    )
    mean = x_tr.mean(axis=0)
    std = x_tr.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return TabularSplit(
        x_train=((x_tr - mean) / std).astype(np.float32),
        y_train=y_tr,
        x_test=((x_te - mean) / std).astype(np.float32),
        y_test=y_te,
        feature_names=tuple(str(n) for n in bunch.feature_names),
        mean=mean,
        std=std,
    )


def monotonicity_scores(x: np.ndarray, y: np.ndarray, method: str = "spearman") -> np.ndarray:
    """How monotonic each feature's relation to the label is, one score in ``[0, 1]`` per column.

    * ``"spearman"``: :math:`|\\rho_S(x_d, y)|`, the absolute Spearman rank correlation between
      feature ``d`` and the (integer) label;
    * ``"auroc"`` (binary labels only): :math:`2\\,|\\mathrm{AUROC}(x_d \\to y) - 0.5|`, how well
      thresholding the feature alone separates the classes, whatever the direction.

    For binary labels both rank the features identically (Spearman's rho with a 0/1 variable is an
    increasing function of the Mann-Whitney U statistic). A constant feature scores 0.

    :param x: features ``(N, D)`` (use the *training* rows).
    :param y: integer labels ``(N,)``.
    :param method: ``"spearman"`` or ``"auroc"``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    scores = np.zeros(x.shape[1])
    for d in range(x.shape[1]):
        col = x[:, d]
        if np.ptp(col) == 0:
            continue
        if method == "spearman":
            scores[d] = abs(spearmanr(col, y).statistic)
        elif method == "auroc":
            if np.unique(y).size != 2:
                raise ValueError("method='auroc' needs binary labels")
            scores[d] = 2.0 * abs(roc_auc_score(y, col) - 0.5)
        else:
            raise ValueError(f"unknown method {method!r}; expected 'spearman' or 'auroc'")
    return np.nan_to_num(scores)


def most_monotonic_feature(
    x: np.ndarray,
    y: np.ndarray,
    feature_names: Sequence[str] | None = None,
    method: str = "spearman",
) -> tuple[int, str]:
    """The feature with the largest :func:`monotonicity_scores` (first one on ties).

    :param x: training features ``(N, D)``.
    :param y: training labels ``(N,)``.
    :param feature_names: ``D`` names; defaults to ``"x0", "x1", ...``.
    :param method: see :func:`monotonicity_scores`.
    :return: ``(index, name)``.
    """
    scores = monotonicity_scores(x, y, method)
    index = int(np.argmax(scores))
    names = (
        list(feature_names) if feature_names is not None else [f"x{d}" for d in range(len(scores))]
    )
    return index, str(names[index])
