"""Figs. 2 and 4's measurements: the theory's accuracy curve against the trained classifier's at
every ``p`` (or ``n``), whether the comparison is informative, and the score's moments-vs-shape
split of the gap."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement, one_sided_t, t_interval, tost_power
from .common import _pm


def _test_rows(frame: pd.DataFrame, cls: str = "all", split: str = "test") -> pd.DataFrame:
    return frame[(frame["split"] == split) & (frame["cls"] == cls)]


def _gap_table(frame: pd.DataFrame, x: str, split: str = "test") -> pd.DataFrame:
    """Signed gaps theory − practice (points), seeds × values of ``x`` (values both sides have;
    seeds with every value), on the ``split`` points."""
    sel = _test_rows(frame, split=split)
    th = sel[sel["source"] == "theory"].groupby(x)["accuracy"].mean()
    pr = sel[sel["source"] == "practice"].pivot_table(index="seed", columns=x, values="accuracy")
    common = sorted(set(th.index) & set(pr.columns))
    if not common:
        return pd.DataFrame()
    return (100 * (th[common] - pr[common])).dropna()


def _tests_per_x(gaps: pd.DataFrame, b: float, alpha: float) -> dict:
    """Per value of ``x`` (a column of ``gaps``: the seeds' signed gaps): the mean, the
    ``1 − 2·alpha`` t interval, the TOST p at ± ``b``, the one-sided p beyond the bar on the
    mean's side, the TOST power at gap 0, and the detail's words."""
    per_x, intervals, ps, opp, powers, means = [], {}, {}, {}, {}, {}
    for v, g in gaps.items():
        xs = g.to_numpy(dtype=float)
        mean = float(xs.mean())
        se = float(xs.std(ddof=1) / math.sqrt(len(xs)))
        lo, hi = t_interval(xs, alpha)
        p = max(one_sided_t(xs, -b, ">"), one_sided_t(xs, b, "<")) if math.isfinite(b) else math.nan
        po = (
            (one_sided_t(xs, b, ">") if mean >= 0 else one_sided_t(xs, -b, "<"))
            if math.isfinite(b)
            else math.nan
        )
        means[v], intervals[v], ps[v], opp[v] = mean, (lo, hi), p, po
        powers[v] = (
            tost_power(b, float(xs.std(ddof=1)), len(xs), alpha) if math.isfinite(b) else math.nan
        )
        per_x.append(f"{v}: {_pm(mean, se)} (interval {lo:.2f} to {hi:.2f}, TOST p {p:.2g})")
    return {
        "words": per_x,
        "intervals": intervals,
        "ps": ps,
        "opp": opp,
        "powers": powers,
        "means": means,
    }


def _union_interval(means: dict, intervals: dict, b: float, x: str):
    """The value of ``x`` with the largest |mean gap|, and the interval handed to the engine
    with its words: a value's entirely outside the bar if there is one (that one when it is
    outside), else the hull over every value."""
    worst = max(means, key=lambda v: abs(means[v]))
    outside = [v for v, (lo, hi) in intervals.items() if hi < -b or lo > b]
    if outside:
        pick = worst if worst in outside else max(outside, key=lambda v: abs(means[v]))
        interval = intervals[pick]
        which = f"{x} = {pick}'s (entirely outside the bar)"
    else:
        interval = (min(i[0] for i in intervals.values()), max(i[1] for i in intervals.values()))
        which = "the hull over " + x + " (no value entirely outside the bar)"
    return worst, interval, which


def _moments_split_text(frame: pd.DataFrame, x: str, split: str) -> str:
    """The detail's split of the mean test gap into the score's moments and shape parts
    (:func:`score_moments`; "" on the training points or without score moments)."""
    moments = score_moments(frame, x) if split == "test" else pd.DataFrame()
    if moments.empty or not {"moments_part", "shape_part"} <= set(moments.columns):
        return ""
    allc = moments[moments["cls"] == "all"]
    return (
        f"; of the mean gap, {allc['moments_part'].mean():+.2f} points come from the "
        f"score's mean and spread (theory vs a Gaussian with the measured moments) and "
        f"{allc['shape_part'].mean():+.2f} from its shape (that Gaussian vs the measured "
        "accuracy)"
    )


def gap_over(
    frame: pd.DataFrame,
    x: str,
    bar_points: float = math.nan,
    alpha: float = 0.05,
    split: str = "test",
) -> Measurement:
    """Intersection–union equivalence test of the signed gap theory − practice of the
    ``split`` accuracy (points) at **every** value of ``x`` (the paper's curves match at each
    point: "a perfect match" over p in Fig. 2, "consistently estimated" over n in Fig. 4).

    Per value of ``x``: the seeds' signed gaps, their ``1 − 2·alpha`` t interval and TOST p at
    ± ``bar_points``. The claim holds only if every value's TOST holds: p = the largest; the
    interval handed to the engine is that of a value whose interval lies entirely outside the
    bar if there is one (the one with the largest |mean gap|), else the hull of all values'
    intervals (inside the bar iff every value's is; straddling when one value's does). The
    value is the mean gap at the value of ``x`` with the largest |mean gap| (signed; named in
    the detail, with the mean over every ``x`` and seed). ``p_opposite``: the one-sided t p that
    some value lies beyond the bar on its side, the smallest times the number of values
    (Bonferroni, capped at 1). Power: the smallest per-value TOST power when the theory is exact
    (gap 0) at that value's spread (the all-values test has at most that power)."""
    gaps = _gap_table(frame, x, split)
    if gaps.empty or len(gaps) < 2:
        return Measurement(
            math.nan,
            f"no {x} with both theory and practice {split} rows"
            if gaps.empty
            else f"one seed per {x}: no interval",
        )
    b = bar_points
    t = _tests_per_x(gaps, b, alpha)
    means, ps, opp = t["means"], t["ps"], t["opp"]
    worst, interval, which = _union_interval(means, t["intervals"], b, x)
    failing = [v for v in ps if not ps[v] < alpha]
    per_seed = gaps.mean(axis=1)
    overall_se = float(per_seed.std(ddof=1) / math.sqrt(len(per_seed)))
    detail = (
        f"{split} points; intersection–union over {len(means)} values of {x} (holds only if "
        f"every {x}'s TOST holds); value: the mean gap at {x} = {worst}, the largest |gap|; per "
        f"{x} (mean ± SE over {len(per_seed)} seeds): "
        + "; ".join(t["words"])
        + f"; interval: {which}"
        + (
            f"; {x} = " + ", ".join(str(v) for v in failing) + " not established on its own"
            if failing and math.isfinite(b)
            else ""
        )
        + f"; mean over every {x} and seed {_pm(float(per_seed.mean()), overall_se)}"
    ) + _moments_split_text(frame, x, split)
    finite = [v for v in ps.values() if math.isfinite(v)]
    return Measurement(
        means[worst],
        detail,
        p_value=float(max(ps.values())) if finite else math.nan,
        n=len(per_seed),
        power=float(min(t["powers"].values())),
        method="t",
        interval=interval,
        p_opposite=float(min(1.0, len(opp) * min(opp.values()))) if finite else math.nan,
    )


def informative(frame: pd.DataFrame, x: str, k: int = 2) -> Measurement:
    """Per seed, the mean over ``x`` of the measured test accuracy's distance (points) from the
    nearer trivial prediction: guessing (100/k %) or perfect (100 %)."""
    sel = _test_rows(frame)
    pr = sel[sel["source"] == "practice"].pivot_table(index="seed", columns=x, values="accuracy")
    if pr.empty:
        return Measurement(math.nan, "no practice test accuracy rows")
    acc = 100 * pr
    dist = np.minimum(acc - 100 / k, 100 - acc).mean(axis=1)
    lo, hi = float(acc.min().min()), float(acc.max().max())
    return Measurement(
        float(dist.mean()),
        f"measured test accuracy {lo:.2f}–{hi:.2f} % over {x} and {len(pr)} seeds; distance "
        f"from the nearer of guessing ({100 / k:.1f} %) and 100 %, per seed: "
        + ", ".join(f"{s}: {d:.2f}" for s, d in dist.items()),
        samples=tuple(dist.to_numpy()),
    )


def score_moments(frame: pd.DataFrame, x: str) -> pd.DataFrame:
    """Moments-vs-shape breakdown of the theory–practice gap per value of ``x`` and class.

    Columns: ``x``, ``cls``; ``theory_mean``, ``theory_std`` (Theorem 4.8's m, σ of the score
    xᵀw), ``measured_mean``, ``measured_std`` (mean over seeds of the test points' moments) with
    their standard errors, ``skew`` and excess ``kurtosis`` (mean over seeds), ``theory_acc``,
    ``gauss_acc`` (the accuracy a Gaussian with the measured moments gives), ``practice_acc``
    (all in %), ``moments_part`` = theory − gauss and ``shape_part`` = gauss − practice (points;
    they add up to the gap). Class ``"all"`` rows carry the accuracies only. Empty when the
    frame has no score moments (e.g. the Fig. 5 frame)."""
    sel = frame[frame["split"] == "test"]
    if "score_mean" not in sel.columns or "gauss_accuracy" not in sel.columns:
        return pd.DataFrame()
    th = sel[sel["source"] == "theory"].set_index([x, "cls"])
    pr = sel[sel["source"] == "practice"]
    rows = []
    for (v, c), g in pr.groupby([x, "cls"], sort=True):
        if (v, c) not in th.index:
            continue
        t = th.loc[(v, c)]
        n = len(g)

        def se(col, g=g, n=n):
            return float(g[col].std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan

        row = {
            x: v,
            "cls": c,
            "seeds": n,
            "theory_acc": 100 * float(t["accuracy"]),
            "gauss_acc": 100 * float(g["gauss_accuracy"].mean()),
            "practice_acc": 100 * float(g["accuracy"].mean()),
        }
        if c != "all":
            row.update(
                theory_mean=float(t["score_mean"]),
                measured_mean=float(g["score_mean"].mean()),
                measured_mean_se=se("score_mean"),
                theory_std=float(t["score_std"]),
                measured_std=float(g["score_std"].mean()),
                measured_std_se=se("score_std"),
                skew=float(g["score_skew"].mean()),
                kurtosis=float(g["score_kurt"].mean()),
            )
        row["moments_part"] = row["theory_acc"] - row["gauss_acc"]
        row["shape_part"] = row["gauss_acc"] - row["practice_acc"]
        rows.append(row)
    cols = [
        x,
        "cls",
        "seeds",
        "theory_mean",
        "measured_mean",
        "measured_mean_se",
        "theory_std",
        "measured_std",
        "measured_std_se",
        "skew",
        "kurtosis",
        "theory_acc",
        "gauss_acc",
        "practice_acc",
        "moments_part",
        "shape_part",
    ]
    out = pd.DataFrame(rows)
    return out.reindex(columns=cols)
