"""The pixel-statistics floor: a detector built from pixel statistics alone (lit-pixel share,
mean intensity, border mass, and their Mahalanobis combination), scored on an ID/OOD split.

Its own module, importing no claims engine, so that the jobs that compute it beside their work
(Kang's discriminator, data reports) do not depend on the engine's code (code inputs are derived
from imports). :mod:`softmax_ood.analysis.premises` re-exports it with the premise it serves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import auroc, fpr_at_tpr

__all__ = ["PIXEL_STATISTICS", "floor_from_statistics", "pixel_floor", "pixel_statistics"]

PIXEL_STATISTICS = ("lit_pixels", "mean_intensity", "border_mass")


def _gray(images) -> np.ndarray:
    x = np.asarray(images, dtype=np.float64)
    if x.ndim == 4:  # (N, C, H, W) -> channel mean
        x = x.mean(axis=1)
    if x.ndim != 3:
        raise ValueError(f"pixel statistics need images of shape (N, [C,] H, W), not {x.shape}")
    return x


def pixel_statistics(images, reference) -> pd.DataFrame:
    """Per image: the share of lit pixels, mean intensity and the share of ink on the border
    ring (width ``max(1, H // 8)``), with "lit" and "ink" measured above the ``reference``
    images' darkest level (5 % of the reference's range)."""
    x, ref = _gray(images), _gray(reference)
    lo, hi = float(np.min(ref)), float(np.max(ref))
    span = hi - lo if hi > lo else 1.0
    ink = np.clip((x - lo) / span, 0.0, None)
    h, w = x.shape[1:]
    b = max(1, h // 8)
    ring = np.ones((h, w), dtype=bool)
    ring[b : h - b, b : w - b] = False
    total = ink.sum(axis=(1, 2))
    return pd.DataFrame(
        {
            "lit_pixels": (ink > 0.05).mean(axis=(1, 2)),
            "mean_intensity": ink.mean(axis=(1, 2)),
            "border_mass": np.where(
                total > 0, ink[:, ring].sum(axis=1) / np.maximum(total, 1e-12), 0.0
            ),
        }
    )


def pixel_floor(id_images, ood_images, reference=None) -> dict:
    """FPR95 (ID positive, in %) and AUROC of the best pixel-statistics detector on this split.

    Each statistic scores an image by minus its distance from the median of the ``reference``
    (ID training or validation images; default: ``id_images``), scaled by the reference's
    interquartile range; the fourth detector is minus the Mahalanobis distance over all three.
    Returns ``{"fpr95", "auroc", "detector", "per_detector": {name: (fpr95, auroc)}}``.
    """
    ref = id_images if reference is None else reference
    return floor_from_statistics(
        pixel_statistics(id_images, ref),
        pixel_statistics(ood_images, ref),
        pixel_statistics(ref, ref),
    )


def floor_from_statistics(s_id: pd.DataFrame, s_ood: pd.DataFrame, s_ref: pd.DataFrame) -> dict:
    """:func:`pixel_floor` from the images' :func:`pixel_statistics` (per image, so a resample
    of the images is the same rows of their statistics: a bootstrap computes them once)."""
    med = s_ref.median()
    iqr = (s_ref.quantile(0.75) - s_ref.quantile(0.25)).replace(0.0, np.nan)
    iqr = iqr.fillna(s_ref.std().replace(0.0, 1.0)).fillna(1.0)
    scores = {
        c: (-(s_id[c] - med[c]).abs() / iqr[c], -(s_ood[c] - med[c]).abs() / iqr[c])
        for c in PIXEL_STATISTICS
    }
    cov = np.cov(s_ref.to_numpy().T) + 1e-9 * np.eye(len(PIXEL_STATISTICS))
    prec = np.linalg.pinv(cov)
    mu = s_ref.mean().to_numpy()

    def maha(s):
        d = s.to_numpy() - mu
        return -np.sqrt(np.einsum("ij,jk,ik->i", d, prec, d))

    scores["mahalanobis"] = (maha(s_id), maha(s_ood))
    per = {
        k: (100.0 * fpr_at_tpr(np.asarray(a), np.asarray(b)), auroc(np.asarray(a), np.asarray(b)))
        for k, (a, b) in scores.items()
    }
    best = min(per, key=lambda k: (per[k][0], -per[k][1], k))
    return {"fpr95": per[best][0], "auroc": per[best][1], "detector": best, "per_detector": per}
