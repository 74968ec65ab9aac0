"""Measurements that more than one study's claims take: a per-seed mean, and the separation of
two sets' discriminator repeats against a bar. Kang's claims and the cross-paper claims share them
here, so neither reads the other's private helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .claims import Measurement

__all__ = ["per_frame", "per_seed", "rows", "separation"]


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


#: per (frame identity, columns): the frame's row positions per value combination, while the
#: frame lives. Claims select one model's or one dataset's rows thousands of times over the same
#: frames; a boolean mask over the whole frame each time was most of their time.
_GROUPS: dict[tuple, tuple] = {}


def rows(frame: pd.DataFrame, **equal) -> pd.DataFrame:
    """``frame``'s rows whose columns equal ``equal`` (``rows(f, dataset="synthetic",
    kind="single")`` is ``f[(f.dataset == "synthetic") & (f.kind == "single")]``), found through
    a grouping built once per frame and set of columns. The frame must not change its rows or
    those columns while it is used (claims read their frames, never write them)."""
    import weakref

    cols = tuple(sorted(equal))
    key = (id(frame), cols)
    hit = _GROUPS.get(key)
    if hit is None or hit[0]() is not frame or hit[1] != len(frame):
        groups = frame.groupby(list(cols), sort=False, dropna=False).indices if len(frame) else {}
        found = {(k if isinstance(k, tuple) else (k,)): v for k, v in groups.items()}
        hit = (weakref.ref(frame, lambda _, k=key: _GROUPS.pop(k, None)), len(frame), found)
        _GROUPS[key] = hit
    pos = hit[2].get(tuple(equal[c] for c in cols))
    return frame.iloc[pos] if pos is not None else frame.iloc[:0]


_MEMO: dict[tuple, tuple] = {}


def per_frame(frame: pd.DataFrame, key: tuple, compute):
    """``compute()``, remembered for ``frame`` (by identity, while it lives and keeps its
    length) and ``key``: a statistic the claims read many times over one frame. Callers must
    not change what it returns."""
    import weakref

    k = (id(frame), key)
    hit = _MEMO.get(k)
    if hit is None or hit[0]() is not frame or hit[1] != len(frame):
        hit = (weakref.ref(frame, lambda _, k=k: _MEMO.pop(k, None)), len(frame), compute())
        _MEMO[k] = hit
    return hit[2]
