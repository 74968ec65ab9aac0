"""Measurements that more than one study's claims take: a per-seed mean, and the separation of
two sets' discriminator repeats against a bar. Kang's claims and the cross-paper claims share them
here, so neither reads the other's private helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .claims import Measurement

__all__ = ["per_seed", "separation"]


def per_seed(measure: pd.Series, what: str) -> Measurement:
    """The mean of ``measure`` (one value per seed, indexed by seed) with the per-seed values
    as the measurement's samples (an empty series: undefined)."""
    if measure.empty:
        return Measurement(math.nan, f"{what}: undefined (constant series)")
    per = ", ".join(f"{s}: {v:.2f}" for s, v in measure.items())
    return Measurement(
        float(measure.mean()),
        f"{what}: mean {measure.mean():.3f} over {len(measure)} seed(s) (per seed {per})",
        samples=tuple(measure.to_numpy()),
    )


def separation(top: np.ndarray, zero: np.ndarray, bar: float, what: str) -> Measurement:
    """``score_separated``: mean OOD score of the top level minus level 0's, against ``bar``;
    one-sided Welch t-test over the two sets' discriminator repeats (the p's of both sides)."""
    from scipy import stats

    if len(top) < 2 or len(zero) < 2:
        return Measurement(math.nan, f"{what}: fewer than 2 discriminator repeats per set")
    diff = float(top.mean() - zero.mean())
    se = math.sqrt(top.var(ddof=1) / len(top) + zero.var(ddof=1) / len(zero))
    if se == 0:
        p = 0.0 if diff > bar else 1.0
        p_opp = 0.0 if diff < bar else 1.0
    else:
        p = float(stats.ttest_ind(top - bar, zero, equal_var=False, alternative="greater").pvalue)
        p_opp = float(stats.ttest_ind(top - bar, zero, equal_var=False, alternative="less").pvalue)
    return Measurement(
        diff,
        f"{what}: OOD score {top.mean():.4f} vs {zero.mean():.4f} (difference {diff:.4f}, "
        f"standard error {se:.4f} over {len(top)} and {len(zero)} discriminator repeats; "
        f"one-sided Welch t-test against the bar {bar:g})",
        p,
        n=len(top) + len(zero),
        p_opposite=p_opp,
    )
