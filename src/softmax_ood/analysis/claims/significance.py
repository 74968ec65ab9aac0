"""The tests behind a row's p: the one-sample t-test and the exact sign test of per-seed
samples, the t interval of their mean, and the exact or t-approximate Spearman test; with the
measurements built on them (:func:`paired` differences, :func:`spearman` rank correlations) and
the ``mean ± std`` a detail shows."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from ..seeds import summarise
from .spec import EXACT_RANK_MAX_N, Measurement


def fmt_mean_std(values: pd.Series, unit: str = "") -> str:
    mean, std, _ = summarise(values)
    s = "n/a" if math.isnan(std) else f"{std:.2f}"
    return f"{mean:.2f} ± {s}{unit}"


def one_sided_t(samples: Sequence[float], threshold: float, direction: str) -> float:
    """p of the one-sample t-test of ``samples`` against ``threshold``, alternative: the mean
    lies on the ``direction`` side. With all samples equal there is no t statistic: the exact
    sign test's ``0.5 ** n`` when they lie strictly on the claimed side (a sample equal to the
    threshold is not on it), 1 otherwise. NaN for fewer than 2 samples."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    if len(x) < 2 or not np.all(np.isfinite(x)):
        return math.nan
    greater = direction in (">", ">=")
    if float(x.max() - x.min()) <= 1e-12 * max(1.0, float(np.abs(x).max())):
        # no spread, no t statistic: the exact sign test (every sample strictly on the side)
        strictly = x[0] > threshold if greater else x[0] < threshold
        return 0.5 ** len(x) if strictly else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_1samp(x, threshold, alternative="greater" if greater else "less")
    return float(r.pvalue)


def sign_test(samples: Sequence[float], threshold: float, direction: str) -> float:
    """Exact one-sided sign test: p of at least as many samples strictly on the ``direction``
    side of ``threshold`` under Binomial(n, 1/2), samples equal to the threshold dropped (the
    usual convention). NaN without samples off the threshold."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x) & (x != threshold)]
    if len(x) == 0:
        return math.nan
    greater = direction in (">", ">=")
    k = int((x > threshold).sum() if greater else (x < threshold).sum())
    return float(stats.binom.sf(k - 1, len(x), 0.5))


def t_interval(samples: Sequence[float], alpha: float) -> tuple[float, float]:
    """The ``1 − 2·alpha`` t interval of the samples' mean (the interval of the TOST at level
    ``alpha``); a point for samples without spread, NaNs for fewer than 2."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    if len(x) < 2 or not np.all(np.isfinite(x)):
        return math.nan, math.nan
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    half = float(stats.t.ppf(1 - alpha, len(x) - 1)) * sd / math.sqrt(len(x))
    return mean - half, mean + half


def paired(
    high: pd.Series, low: pd.Series, *, names: tuple[str, str] = ("A", "B"), percent: bool = False
) -> Measurement:
    """``high - low`` over the seeds both have (indexes are seeds): the mean difference, with the
    per-seed differences as ``samples`` (the engine tests them against the claim's threshold,
    usually 0 with direction ``">"``: "high > low")."""
    seeds = sorted(set(high.dropna().index) & set(low.dropna().index))
    if not seeds:
        raise ValueError(f"{names[0]} and {names[1]} share no seed, so no paired comparison.")
    a, b = high.loc[seeds].astype(float), low.loc[seeds].astype(float)
    diff = a - b
    mean_diff, n = float(diff.mean()), len(seeds)
    unit, dunit = (" %", " pp") if percent else ("", "")
    per_seed = ", ".join(f"{s}: {d:.2f}" for s, d in zip(seeds, diff, strict=True))
    detail = (
        f"{names[0]} {fmt_mean_std(a, unit)} vs {names[1]} {fmt_mean_std(b, unit)}; "
        f"paired difference {mean_diff:.2f}{dunit} over {n} seed(s) (per seed {per_seed})"
    )
    return Measurement(mean_diff, detail, samples=tuple(diff.to_numpy()))


@lru_cache(maxsize=4)
def _permutations(n: int) -> np.ndarray:
    """Every permutation of ``range(n)`` as an ``(n!, n)`` int8 array (n ≤ 10: 3.6 M rows)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def spearman_exact_p(x, y, alternative: str = "greater") -> float:
    """Exact one-sided p of Spearman's rho under the permutation null (every pairing of ``y``
    with ``x`` equally likely), by enumerating all ``n!`` permutations (``n`` ≤
    :data:`EXACT_RANK_MAX_N`); ties use average ranks. p = P(rho_perm ≥ rho) (``"greater"``)
    or P(rho_perm ≤ rho) (``"less"``). E.g. n = 4, rho = 1: 1/24; rho = 0.8: 4/24."""
    return _spearman_exact(x, y)[0 if alternative == "greater" else 1]


def _spearman_exact(x, y) -> tuple[float, float]:
    """(P(rho_perm ≥ rho), P(rho_perm ≤ rho)) by enumeration, in chunks (memory stays small)."""
    from scipy import stats

    rx = stats.rankdata(np.asarray(x, dtype=float))
    ry = stats.rankdata(np.asarray(y, dtype=float))
    n = len(rx)
    if n > EXACT_RANK_MAX_N:
        raise ValueError(
            f"exact Spearman p enumerates n! permutations; n = {n} > {EXACT_RANK_MAX_N}"
        )
    cx, cy = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float((cx**2).sum() * (cy**2).sum()))
    if denom == 0:
        return math.nan, math.nan
    observed = float(cx @ cy) / denom
    perms = _permutations(n)
    ge = le = 0
    tol = 1e-9
    for i in range(0, len(perms), 250_000):
        null = (cy[perms[i : i + 250_000]] @ cx) / denom
        ge += int((null >= observed - tol).sum())
        le += int((null <= observed + tol).sum())
    return ge / len(perms), le / len(perms)


def spearman(x, y, *, what: str = "", alternative: str = "greater") -> Measurement:
    """Spearman rank correlation of ``x`` and ``y`` with its one-sided p (``alternative``:
    ``"greater"`` for a claimed rise, ``"less"`` for a claimed fall), ``n`` points. Up to
    :data:`EXACT_RANK_MAX_N` points both one-sided p's are exact (permutation distribution,
    :func:`spearman_exact_p`); beyond, scipy's t approximation."""
    from scipy import stats

    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative {alternative!r} is not 'greater' or 'less'")
    x, y = pd.Series(x, dtype=float).to_numpy(), pd.Series(y, dtype=float).to_numpy()
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return Measurement(math.nan, f"{what}too few distinct points ({len(x)}) for Spearman")
    other = "less" if alternative == "greater" else "greater"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.spearmanr(x, y, alternative=alternative)
        if len(x) <= EXACT_RANK_MAX_N:
            ge, le = _spearman_exact(x, y)
            p, p_opp = (ge, le) if alternative == "greater" else (le, ge)
            how = "exact permutation p"
        else:
            p = float(r.pvalue)
            p_opp = float(stats.spearmanr(x, y, alternative=other).pvalue)
            how = "t-approximate p"
    return Measurement(
        float(r.statistic),
        f"{what}Spearman rho {r.statistic:.3f} over {len(x)} points "
        f"(one-sided {how} = {p:.3g}, alternative rho {'>' if alternative == 'greater' else '<'} 0)",
        p,
        n=len(x),
        method="spearman",
        p_opposite=p_opp,
    )
