"""How far the input itself is from Gaussian, coordinate by coordinate (Fig. 3's "even though
the input data is far from Gaussian"), in units of the study's bars."""

from __future__ import annotations

import numpy as np

from ..shared import KURT_BAR, SKEW_BAR

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
