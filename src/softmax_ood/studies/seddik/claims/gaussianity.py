"""Fig. 3's and Theorem 4.3's measurements: the input far from Gaussian (P4), the leave-one-out
scores Gaussian per class (C4), the weights' spread shrinking like n^(−1/2) (C5)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement
from ..shared import KURT_BAR, SKEW_BAR
from .common import RATE

#: seeded bootstrap resamples (over a class's points) of the scores' skewness and kurtosis
SCORE_BOOTSTRAP = 1000


def _moments(z: np.ndarray) -> tuple[float, float]:
    d = z - z.mean()
    m2 = float(np.mean(d * d))
    return float(np.mean(d**3) / m2**1.5), float(np.mean(d**4) / m2**2 - 3.0)


def input_far_from_gaussian(fig3: pd.DataFrame, alpha: float = 0.05) -> Measurement:
    """P4: per class, the median over the non-constant pixels of their distance from Gaussian
    in units of the bars (``input_gauss``, with its bootstrap SE over images
    ``input_gauss_se``, recorded by :func:`~.experiments.fig3_frame`); one-sided z-test that
    it exceeds 1 per class, p = the largest. The value: the smallest over classes."""
    if fig3 is None or "input_gauss" not in fig3.columns:
        return Measurement(math.nan, "the Fig. 3 frame does not record the input's shape")
    from scipy import stats

    per = fig3.groupby("cls")[["input_gauss", "input_gauss_se"]].first()
    ps, parts = [], []
    for c, r in per.iterrows():
        v, se = float(r["input_gauss"]), float(r["input_gauss_se"])
        ps.append(float(stats.norm.sf((v - 1.0) / se)) if se > 0 else float(v <= 1.0))
        parts.append(f"class {c}: median pixel {v:.3g} ± {se:.2g} bar units, p {ps[-1]:.2g}")
    n = int(fig3.groupby("cls").size().min())
    return Measurement(
        float(per["input_gauss"].min()),
        "distance from Gaussian = max(|skewness| / "
        f"{SKEW_BAR:g}, |excess kurtosis| / {KURT_BAR:g}) per pixel; " + "; ".join(parts),
        p_value=float(max(ps)),
        n=n,
        method="z",
    )


def scores_gaussian(fig3: pd.DataFrame, alpha: float = 0.05) -> Measurement:
    """C4, Fig. 3's Gaussianity as a test: per class, the leave-one-out scores
    ``loo_projection`` (x_i'w_-i)'s skewness and excess kurtosis, each in units of its bar
    (:data:`~.shared.SKEW_BAR`, :data:`~.shared.KURT_BAR`), with a seeded bootstrap
    SE over the class's points (valid whatever the scores' law); per (class, moment) the
    equivalence test (TOST) of "|moment| below its bar" with its ``1 − 2·alpha`` normal
    interval; intersection–union over the four: p = the largest, the interval handed to the
    engine that of a moment entirely outside the bar if there is one (the one with the largest
    |value|), else the hull. The value: the largest |moment| / bar (signed).

    Power: the smallest per-moment TOST power when the scores are exactly Gaussian, at the
    normal-theory SEs √(6/n) and √(24/n) (the all-moments test has at most that power).
    ``p_opposite``: the one-sided p that some moment lies beyond its bar (smallest × 4,
    Bonferroni). The detail adds the standard D'Agostino–Pearson K² test per class (H0:
    Gaussian, built from the same two moments; at these n it rejects deviations far inside
    the bars, so it is reported, not the verdict) and the measured mean and std against
    Theorem 4.8's predicted m, σ."""
    if fig3 is None or "loo_projection" not in fig3.columns or fig3.empty:
        return Measurement(math.nan, "no Fig. 3 frame with leave-one-out scores")
    from scipy import stats

    zq = float(stats.norm.ppf(1 - alpha))
    rng = np.random.default_rng(0)
    units, ses, ps, opp, powers, intervals, parts = {}, {}, {}, {}, {}, {}, []
    for c, g in fig3.groupby("cls", sort=True):
        z = g["loo_projection"].to_numpy(dtype=float)
        n = len(z)
        g1, g2 = _moments(z)
        boot = np.array([_moments(z[rng.integers(0, n, n)]) for _ in range(SCORE_BOOTSTRAP)])
        se1, se2 = np.std(boot, axis=0, ddof=1)
        k2 = stats.normaltest(z)
        parts.append(
            f"class {c} ({n} points): skewness {g1:+.3f} ± {se1:.3f}, excess kurtosis "
            f"{g2:+.3f} ± {se2:.3f} (bootstrap SE); D'Agostino–Pearson K² {k2.statistic:.1f}, "
            f"p {k2.pvalue:.2g}; mean {z.mean():.4g} vs predicted {g['theory_mean'].iloc[0]:.4g}"
            f", std {z.std():.4g} vs predicted {g['theory_std'].iloc[0]:.4g}"
        )
        for name, v, se, bar, se0 in (
            ("skewness", g1, se1, SKEW_BAR, math.sqrt(6 / n)),
            ("excess kurtosis", g2, se2, KURT_BAR, math.sqrt(24 / n)),
        ):
            key = f"class {c} {name}"
            u, su, s0 = v / bar, se / bar, se0 / bar
            units[key], ses[key] = u, su
            ps[key] = max(float(stats.norm.sf((u + 1) / su)), float(stats.norm.sf((1 - u) / su)))
            opp[key] = float(stats.norm.sf((abs(u) - 1) / su))
            intervals[key] = (u - zq * su, u + zq * su)
            powers[key] = max(0.0, float(stats.norm.cdf(1 / s0 - zq) - stats.norm.cdf(zq - 1 / s0)))
    worst = max(units, key=lambda k: abs(units[k]))
    outside = [k for k, (lo, hi) in intervals.items() if hi < -1 or lo > 1]
    if outside:
        pick = worst if worst in outside else max(outside, key=lambda k: abs(units[k]))
        interval, which = intervals[pick], f"{pick}'s (entirely outside its bar)"
    else:
        interval = (min(i[0] for i in intervals.values()), max(i[1] for i in intervals.values()))
        which = "the hull over classes and moments"
    return Measurement(
        units[worst],
        f"value: {worst} in bar units; " + "; ".join(parts) + f"; interval: {which}; the "
        "K² test (H0: Gaussian) is the standard test of the same two moments: at these n it "
        "rejects departures far inside the bars, so the verdict is the equivalence test",
        p_value=float(max(ps.values())),
        n=int(fig3.groupby("cls").size().min()),
        power=float(min(powers.values())),
        method="z",
        interval=interval,
        p_opposite=float(min(1.0, len(opp) * min(opp.values()))),
    )


def spread_rate(fig4: pd.DataFrame, alpha: float = 0.05) -> Measurement:
    """C5, Theorem 4.3 over Fig. 4's n: per seed, the least-squares slope of
    log(‖w − E w‖₂ / √(1 − n/pool_n)) against log n (``w_dev`` on the test split's
    ``cls="all"`` practice rows; E w: Theorem 4.8's predicted mean; the training points are
    drawn without replacement from a pool of ``pool_n``, whose finite-population factor is
    removed so the rate is the theorem's, for independent draws); samples: slope − (−1/2), one
    per seed (each seed an independent training draw at every n). The detail adds the slopes
    without the correction and Theorem 4.8's own predicted slope of √Tr C_w over the same n
    (``w_spread``: at fixed p the theorem's constant may drift with n/p)."""
    if fig4 is None or "w_dev" not in fig4.columns:
        return Measurement(math.nan, "the Fig. 4 frame records no weight deviations (w_dev)")
    sel = fig4[(fig4["split"] == "test") & (fig4["cls"] == "all")]
    pr = sel[sel["source"] == "practice"].dropna(subset=["w_dev"])
    dev = pr.pivot_table(index="seed", columns="n", values="w_dev").dropna()
    if dev.shape[1] < 2 or dev.shape[0] < 1:
        return Measurement(math.nan, "fewer than two n with weight deviations: no slope")
    ns = dev.columns.to_numpy(dtype=float)
    pool = float(pr["pool_n"].iloc[0]) if "pool_n" in pr.columns else math.nan
    fpc = np.sqrt(1 - ns / pool) if math.isfinite(pool) and pool > ns.max() else np.ones_like(ns)
    x = np.log(ns)
    slopes = np.array([np.polyfit(x, np.log(r / fpc), 1)[0] for r in dev.to_numpy(float)])
    raw = np.array([np.polyfit(x, np.log(r), 1)[0] for r in dev.to_numpy(float)])
    th = sel[sel["source"] == "theory"].dropna(subset=["w_spread"]).sort_values("n")
    th_slope = (
        float(np.polyfit(np.log(th["n"].astype(float)), np.log(th["w_spread"]), 1)[0])
        if len(th) >= 2
        else math.nan
    )
    sd = f" ± {slopes.std(ddof=1):.3f} (SD over seeds)" if len(slopes) > 1 else ""
    return Measurement(
        float(slopes.mean() - RATE),
        f"n = {', '.join(f'{v:g}' for v in ns)} (pool of {pool:g} points, drawn without "
        f"replacement); mean slope {slopes.mean():.3f}{sd} against Theorem 4.3's −1/2; per "
        "seed: "
        + ", ".join(f"{s}: {v:.3f}" for s, v in zip(dev.index, slopes, strict=True))
        + f"; without the finite-pool factor {raw.mean():.3f}; Theorem 4.8's predicted "
        f"√Tr C_w has slope {th_slope:.3f} over these n; unit of replication: the seed",
        samples=tuple(slopes - RATE),
    )
