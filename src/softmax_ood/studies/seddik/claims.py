"""Seddik et al.'s claims as data, measured on the study's frames and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`).

The paper's claims are matches: Theorem 4.8's predicted test accuracy lies on the trained
classifier's (Figs. 2, 4, 5). A match is an **equivalence** statement, so each is judged by the engine's equivalence test
(``ClaimSpec(test="equivalence")``) against the bar ``b`` (``claims.max_gap_points``, accuracy
points): "holds" when the ``1 − 2·alpha`` interval of the signed gap lies inside ``± b``, "does
not hold" when it lies entirely outside, "not established" when it straddles the bar (a
borderline gap is not evidence against the theory). Power is the whole TOST's (both one-sided
tests must reject: :func:`softmax_ood.analysis.claims.tost_power`) when the theory is exact
(true gap 0: the spec's ``effect``).

* ``P1``, ``P2``, ``P3`` (premises, one per claim): the comparison is informative — the measured
  test accuracy lies more than ``b`` away from both trivial predictions, guessing (100/k %) and
  perfect (100 %). A classifier at 99.6 % would be "predicted within 2 points" by anyone
  predicting 100 %, so a match there says nothing about the theory.
* ``S1`` (sanity): with the squared loss the fixed point reproduces the ridge closed form
  (Marchenko–Pastur) up to O(1/n). Both sides are deterministic computations (no sample), so it
  is a check of the implementation, true by construction when the code is right: a sanity row.
* ``S2`` (sanity): Fig. 5's class statistics are independent of the classifier and of its test
  points: none of the points behind the theory's class means and covariances is a fit or test
  point (``statistics`` panel of the Fig. 5 frame). True by construction with
  ``seddik.fig5.stats_from: independent``; with ``train`` the learned weights are almost a
  function of the statistics (r far below 1: the weights match is built in), with ``all`` the
  test points feed the theory too, so C3-weights, C3-logits and C3 rest on S2 and read
  "cannot test" there.
* ``C1``: Fig. 2, Gaussian mixtures: the signed gap theory − practice of the test accuracy at
  **every** ``p`` (the paper: "a perfect match"): per ``p`` a TOST over seeds (each seed draws
  every training and test set anew), intersection–union over ``p`` (:func:`gap_over`): holds
  only if every ``p``'s TOST holds, "not established" when one ``p``'s interval straddles.
* ``C1-train``: the same on the training points (the paper: "both for training and test
  data").
* ``C2``: the same on digits (Fig. 4, "consistently estimated") at every training size ``n``.
  The population is the balanced digit pool (its class statistics feed the theory); a seed
  draws the training points and tests on the rest. (Fig. 4's training accuracy is not claimed
  in the text, so it is not tested.)
* ``C3-weights``: Fig. 5 (left), network features: the learned weights against the theory's
  predicted mean and spread. Per network (seed) ``r = ‖w − E w‖₂ / √(Σ Var w)`` over every class
  and coordinate, the error in units of the theory's own predicted fluctuation: if the theory's
  mean and covariance are right, ``E r² = 1`` (``r ≈ 1``); with statistics estimated from
  ``n_stats`` independent points the predicted mean carries their sampling error too, about
  ``r ≈ √(1 + n/n_stats)`` (√2 for as many statistics as fit points, on a Gaussian mixture
  where the theory is exact: ``test_independent_statistics_put_r_near_sqrt2``). Claim: the mean ``r`` over networks
  lies below :data:`WEIGHT_RATIO_BAR` (twice the predicted fluctuation), one-sided t-test over
  cuts of the pool (samples: one ``r`` per cut, :func:`per_cut`; with ``seddik.fig5.cut:
  per_network`` each network has its own cut, so one ``r`` per network; networks sharing a cut
  share its statistics, fit and test points and count once, issue 42); the effect at which the power is computed: the
  ``r`` an exact theory gives with the frame's own sizes, ``√(1 + n_fit/n_stats)``
  (:func:`expected_weight_ratio`: ``n_fit`` from the fit part's accuracy row, ``n_stats`` from
  the ``statistics`` panel), i.e. ``bar − √(1 + n_fit/n_stats)`` below the bar (undefined, so
  no power, when the statistics are not independent of the classifier). The detail gives per
  network the correlation of the learned with the predicted weights and their relative L2
  error.
* ``C3-logits``: Fig. 5 (middle, right): the law of the test logits. Per network, the mean over
  (true class, logit) of ``|measured mean − predicted mean| / predicted std`` of the test
  logits (``logit_moments`` panel). Claim: below :data:`LOGIT_GAP_BAR` (half a predicted standard
  deviation), one-sided t-test over cuts of the pool (as C3-weights); the paper's effect: 0 (the theory exact: the
  measured mean then differs from the predicted one by sampling noise only), i.e. the bar's
  distance from 0. The detail gives the mean ratio measured / predicted std.
* ``C3``: an additional check, not drawn in Fig. 5 (the paper plots weights and logits, not
  the accuracy): network features (k classes), one trained network per seed: per network an
  exact binomial TOST of its test accuracy against the network's own theory ± ``b``, with its
  ``1 − 2·alpha`` exact (Clopper–Pearson) interval of the gap; the claim holds for the networks
  only if it holds for each (intersection–union test: p = the largest network p, valid whatever
  the networks' correlation). The interval handed to the engine is that of a network whose
  interval lies entirely outside the bar if there is one (the claim "for every network" then
  does not hold; the one with the largest |gap|, the value's, when it is outside), else the
  hull of all networks' intervals; the detail names the network. ``p_opposite``: the exact
  one-sided p that some network lies beyond the bar (Bonferroni over networks). ``n`` is the
  test points per network. The detail splits the mean gap as C1/C2's does
  (:func:`features_shape`): theory vs a Gaussian with the measured test logits' per-class mean
  and covariance (the predicted moments' part), that Gaussian vs the measured accuracy (the
  logits' non-Gaussian shape), and states the regime (p, n/p) against the paper's p = 512,
  n/p ≈ 6 (a statement, not a test: the Gaussian law is a CLT over p).
* ``P4`` (premise of C4): Fig. 3's input is far from Gaussian: per class, the median over the
  non-constant pixels of their distance from Gaussian (max(|skewness| / 0.5, |excess
  kurtosis| / 1)) exceeds 1, z-test with a bootstrap SE over images (:func:`input_far_from_gaussian`).
* ``C4``: Fig. 3's leave-one-out scores are Gaussian per class: |skewness| < 0.5 and |excess
  kurtosis| < 1, equivalence tests with bootstrapped SEs, intersection–union over classes and
  moments (:func:`scores_gaussian`; the D'Agostino–Pearson K² test in the detail).
* ``C5``: Theorem 4.3 over Fig. 4's n: the log-log slope of ‖w − E w‖₂ against n (finite-pool
  factor removed) is −1/2 ± :data:`RATE_BAR`, TOST over seeds (:func:`spread_rate`).

Gaps are in accuracy points (percent).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims, t_power, tost_power
from .shared import HEADLINE, KURT_BAR, SKEW_BAR

__all__ = [
    "PAPER",
    "binomial_tost",
    "claim_specs",
    "evaluate_seddik_claims",
    "features_gap",
    "features_informative",
    "features_logits",
    "features_shape",
    "features_weights",
    "expected_weight_ratio",
    "gap_over",
    "informative",
    "input_far_from_gaussian",
    "scores_gaussian",
    "spread_rate",
    "ridge_sanity",
    "score_moments",
    "statistics_independent",
]

PAPER = "Seddik et al. 2021"
#: C3-weights' bar, fixed in advance from the theory's own units: the learned weights' error
#: ``‖w − E w‖₂`` is ``√(Σ Var w)`` when the predicted mean and spread are right (ratio ≈ 1);
#: twice that is a theory whose mean or spread is off by its own fluctuation or more
WEIGHT_RATIO_BAR = 2.0
#: C3-logits' bar: half a predicted standard deviation of a test logit (mean over true classes
#: and logits); the theory exact puts the measured mean within sampling noise of the predicted
LOGIT_GAP_BAR = 0.5
#: below this C3-weights' detail says the match looks built in (r ≈ 1 when the theory is right)
BUILT_IN_RATIO = 0.1
TRIVIAL = "guessing (100/k %) and perfect (100 %)"
#: the image pair of Figs. 3-4 when the config names none (:func:`images_label`)
IMAGES = "the image pair"
#: Theorem 4.3's rate: the trained weights fluctuate around their deterministic limit with
#: observable diameter 1/√n, so their spread has slope −1/2 against n on log-log
RATE = -0.5
#: C5's bar on the slope, fixed in advance: half way to the neighbouring rates n^(−1/4) and
#: n^(−3/4), so "holds" tells 1/√n from either
RATE_BAR = 0.25


def _claim_specs(
    max_gap_points: float,
    ridge_n_gap: float,
    weight_ratio_bar: float = WEIGHT_RATIO_BAR,
    logit_gap_bar: float = LOGIT_GAP_BAR,
    weight_ratio_expected: float | None = None,
    images: str = IMAGES,
) -> list[ClaimSpec]:
    b = max_gap_points
    r_exact = (
        weight_ratio_expected
        if weight_ratio_expected is not None and math.isfinite(weight_ratio_expected)
        else None
    )
    informative_text = (
        "{fig}: the comparison is informative — the trained classifiers' test accuracy lies "
        f"more than the bar ({b:g} points) from both trivial predictions, {TRIVIAL}"
    )
    tost = (
        "per {x}: mean over seeds of the signed gap theory − practice {split} accuracy, points "
        "(the value: the {x} with the largest |gap|); equivalence test (TOST) at ± the bar per "
        "{x} (90 % t interval over seeds), intersection–union over {x}: p = the largest"
    )

    def curve(cid: str, text: str, x: str, split: str, premise: str) -> ClaimSpec:
        """A figure's accuracy curve matched at every ``x`` (intersection–union TOST)."""
        return ClaimSpec(
            cid,
            text,
            tost.format(x=x, split=split),
            threshold=b,
            direction="<",
            requires=("S1", premise),
            effect=0.0,
            test="equivalence",
        )

    return [
        ClaimSpec(
            "P1",
            informative_text.format(fig="Fig. 2 (Gaussian mixtures)"),
            "per seed: mean over p of min(accuracy − 100/k, 100 − accuracy), points",
            threshold=b,
            direction=">",
            kind="premise",
        ),
        ClaimSpec(
            "P2",
            informative_text.format(fig=f"Fig. 4 ({images})"),
            "per seed: mean over n of min(accuracy − 100/k, 100 − accuracy), points",
            threshold=b,
            direction=">",
            kind="premise",
        ),
        ClaimSpec(
            "P3",
            informative_text.format(fig="Fig. 5 (network features)"),
            "smallest over networks of min(accuracy − 100/k, 100 − accuracy), points; exact "
            "binomial tests per network, p = the largest (every network)",
            threshold=b,
            direction=">",
            kind="premise",
        ),
        ClaimSpec(
            "P4",
            "Fig. 3: the input is far from Gaussian (the paper: 'even though the input data is "
            "far from Gaussian'): per class, the median pixel lies beyond the Gaussianity bars "
            f"(|skewness| {SKEW_BAR:g}, |excess kurtosis| {KURT_BAR:g}) the scores must stay within",
            "smallest over classes of the median over non-constant pixels of max(|skewness| / "
            f"{SKEW_BAR:g}, |excess kurtosis| / {KURT_BAR:g}) (1: at the bars); one-sided z-test "
            "per class with the SE bootstrapped over images, p = the largest (every class)",
            threshold=1.0,
            direction=">",
            kind="premise",
        ),
        curve(
            "C1",
            "Fig. 2: on Gaussian mixtures the theory predicts the trained softmax classifier's "
            "test accuracy (within the bar, at every p: 'a perfect match')",
            "p",
            "test",
            "P1",
        ),
        curve(
            "C1-train",
            "Fig. 2: the match holds 'both for training and test data': the theory predicts the "
            "trained classifier's accuracy on its own training points (within the bar, at every "
            "p)",
            "p",
            "training",
            "P1",
        ),
        curve(
            "C2",
            f"Fig. 4: on {images} (the paper: MNIST 1 vs 2) the theory predicts the trained "
            "classifier's test accuracy (within the bar, at every n: 'consistently estimated')",
            "n",
            "test",
            "P2",
        ),
        ClaimSpec(
            "C3-weights",
            "Fig. 5 (left): on network features the trained classifier's weights lie where the "
            "k-class theory puts them: their distance from the predicted mean is of the order "
            f"of the predicted fluctuation (below {weight_ratio_bar:g} times it)",
            "mean over networks of r = ‖w − predicted mean‖₂ / √(Σ predicted variance) over "
            "classes and coordinates (≈ 1 when the predicted mean and spread are right); "
            "one-sided t-test over networks (one r per network)",
            threshold=weight_ratio_bar,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=None if r_exact is None else weight_ratio_bar - r_exact,
        ),
        ClaimSpec(
            "C3-logits",
            "Fig. 5 (middle, right): on network features the test logits follow the Gaussian "
            "law the k-class theory predicts: per true class and logit, the measured mean lies "
            f"within {logit_gap_bar:g} predicted standard deviation of the predicted mean (on "
            "average)",
            "mean over networks of the mean over (true class, logit) of |measured − predicted "
            "mean| / predicted std of the test logits; one-sided t-test over networks (one "
            "value per network)",
            threshold=logit_gap_bar,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=logit_gap_bar,
        ),
        ClaimSpec(
            "C3",
            "Additional check, not drawn in Fig. 5 (the figure shows weights and logits): on "
            "network features the k-class theory predicts the trained classifier's test "
            "accuracy (within the bar, for every network)",
            "largest |theory − practice| test accuracy over networks, points; exact binomial "
            "TOST per network on its test points (90 % Clopper–Pearson interval of the gap), "
            "p = the largest (every network)",
            threshold=b,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=0.0,
            test="equivalence",
        ),
        ClaimSpec(
            "C4",
            f"Fig. 3: on {images} the leave-one-out scores x_i'w_-i of each class are Gaussian "
            "('their projections onto w have clear Gaussian distributions'): |skewness| below "
            f"{SKEW_BAR:g} and |excess kurtosis| below {KURT_BAR:g} per class",
            "largest over classes and (skewness, excess kurtosis) of |moment| / its bar (1: at "
            "the bar); equivalence test per class and moment (90 % interval, SE bootstrapped "
            "over the class's points), intersection–union: p = the largest; the standard "
            "D'Agostino–Pearson K² test of the same moments in the detail",
            threshold=1.0,
            direction="<",
            requires=("P4",),
            effect=0.0,
            test="equivalence",
        ),
        ClaimSpec(
            "C5",
            "Theorem 4.3 over Fig. 4's n: the trained classifier's weights fluctuate around "
            "their deterministic limit with observable diameter 1/√n, so their distance from "
            f"it shrinks like n^(−1/2) (log-log slope within ± {RATE_BAR:g} of −1/2)",
            "mean over seeds of the log-log slope of ‖w − E w‖₂ (E w: Theorem 4.8's predicted "
            "mean; finite-pool factor removed) against n, minus −1/2; one slope per seed (an "
            "independent training draw at every n), equivalence test (TOST, 90 % t interval "
            "over seeds)",
            threshold=RATE_BAR,
            direction="<",
            requires=("S1",),
            effect=0.0,
            test="equivalence",
        ),
        ClaimSpec(
            "S1",
            "The fixed point is exact where an exact answer exists: with the squared loss it "
            "reproduces the ridge closed form (Marchenko–Pastur) up to O(1/n) (deterministic "
            "on both sides: a check of the implementation)",
            "n × largest relative |fixed point − closed form| over λ, classes and (m, σ, test "
            "accuracy)",
            threshold=ridge_n_gap,
            direction="<=",
            kind="sanity",
        ),
        ClaimSpec(
            "S2",
            "Fig. 5: the theory's class statistics are independent of the classifier: none of "
            "the points behind its class means and covariances is a fit or test point (the "
            "paper's come from independent draws; from the fit points the weights match is "
            "built in). True by construction with stats_from: independent",
            "largest over networks of the share of the statistics' points that are also fit or "
            "test points",
            threshold=0.0,
            direction="<=",
            kind="sanity",
        ),
    ]


# ----------------------------------------------------------------------------- sanity


def ridge_sanity(validation: pd.DataFrame) -> Measurement:
    """``n`` times the largest relative deviation of the squared-loss fixed point from the ridge
    closed form.

    The two routes are both deterministic equivalents but treat the rank-k mean terms
    differently, so they agree up to O(1/n) (``test_ridge_gap_is_order_one_over_n``): ``n ×``
    the gap stays O(1) as n grows, while a wrong printed form (δ with C̃, the printed R_2, ...)
    leaves an O(1) relative gap, i.e. ``n ×`` gap of order n."""
    cf = validation[
        (validation["check"] == "ridge") & (validation["reference_kind"] == "closed_form")
    ]
    if cf.empty:
        return Measurement(math.nan, "the validation frame has no ridge closed-form rows")
    ref = cf["reference"].astype(float).abs()
    rel = (cf["theory"].astype(float) - cf["reference"].astype(float)).abs() / np.maximum(
        ref, 1e-12
    )
    worst = cf.loc[rel.idxmax()]
    n = float(cf["n"].iloc[0])
    lams = ", ".join(f"{v:g}" for v in sorted(cf["lam"].unique()))
    return Measurement(
        float(n * rel.max()),
        f"largest relative gap {rel.max():.3g} (1/n = {1 / n:.3g}) over {len(cf)} comparisons "
        f"at λ ∈ {{{lams}}}, p={int(cf['p'].iloc[0])}, n={int(n)}; worst: {worst['quantity']} "
        f"of class {worst['cls']} at λ={worst['lam']:g} ({worst['theory']:.6g} vs "
        f"{worst['reference']:.6g}); deterministic on both sides, so no test",
    )


def statistics_independent(frame: pd.DataFrame) -> Measurement:
    """S2: per network, the share of the points behind the theory's class statistics that are
    also fit or test points (the Fig. 5 frame's ``statistics`` panel); the value is the largest
    share over networks (0: independent statistics). The detail gives the statistics' size and
    smallest class per network. A frame without that panel (made before it existed) gives an
    undefined statistic."""
    st = _with_seed(frame)
    st = st[st["panel"] == "statistics"] if "panel" in st.columns else st.iloc[:0]
    if st.empty:
        return Measurement(
            math.nan,
            "the Fig. 5 frame does not record where the theory's class statistics come from",
        )
    shares, parts = [], []
    for seed, g in st.groupby("seed", sort=True):
        size = g[(g["split"] == "stats") & (g["cls"] == "all")]["n_points"]
        per_class = g[(g["split"] == "stats") & (g["cls"] != "all")]["n_points"]
        fit = g.loc[g["split"] == "train", "value"].astype(float).sum()
        test = g.loc[g["split"] == "test", "value"].astype(float).sum()
        total = float(size.iloc[0]) if len(size) else math.nan
        shares.append((fit + test) / total if total > 0 else math.nan)
        parts.append(
            f"seed {seed}: {int(total) if math.isfinite(total) else 'n/a'} points"
            + (f" (smallest class {int(per_class.min())})" if len(per_class) else "")
            + f", {int(fit)} of them fit points, {int(test)} test points"
        )
    value = float(np.max(shares)) if not np.any(np.isnan(shares)) else math.nan
    what = (
        "independent of the fit and test parts"
        if value == 0
        else "shared with the classifier's own points: the weights match is built in"
        if value > 0
        else "undefined"
    )
    return Measurement(value, f"class statistics {what}; " + "; ".join(parts))


# ----------------------------------------------------------------------------- Figs. 2 and 4


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


def _pm(mean: float, se: float) -> str:
    return f"{mean:+.2f} ± {se:.2f}" if math.isfinite(se) else f"{mean:+.2f} ± n/a"


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
    from ...analysis.claims import one_sided_t, t_interval

    gaps = _gap_table(frame, x, split)
    if gaps.empty or len(gaps) < 2:
        return Measurement(
            math.nan,
            f"no {x} with both theory and practice {split} rows"
            if gaps.empty
            else f"one seed per {x}: no interval",
        )
    b = bar_points
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
    worst = max(means, key=lambda v: abs(means[v]))
    outside = [v for v, (lo, hi) in intervals.items() if hi < -b or lo > b]
    if outside:
        pick = worst if worst in outside else max(outside, key=lambda v: abs(means[v]))
        interval = intervals[pick]
        which = f"{x} = {pick}'s (entirely outside the bar)"
    else:
        interval = (min(i[0] for i in intervals.values()), max(i[1] for i in intervals.values()))
        which = "the hull over " + x + " (no value entirely outside the bar)"
    failing = [v for v in ps if not ps[v] < alpha]
    per_seed = gaps.mean(axis=1)
    overall_se = float(per_seed.std(ddof=1) / math.sqrt(len(per_seed)))
    detail = (
        f"{split} points; intersection–union over {len(means)} values of {x} (holds only if "
        f"every {x}'s TOST holds); value: the mean gap at {x} = {worst}, the largest |gap|; per "
        f"{x} (mean ± SE over {len(per_seed)} seeds): "
        + "; ".join(per_x)
        + f"; interval: {which}"
        + (
            f"; {x} = " + ", ".join(str(v) for v in failing) + " not established on its own"
            if failing and math.isfinite(b)
            else ""
        )
        + f"; mean over every {x} and seed {_pm(float(per_seed.mean()), overall_se)}"
    )
    moments = score_moments(frame, x) if split == "test" else pd.DataFrame()
    if not moments.empty and {"moments_part", "shape_part"} <= set(moments.columns):
        allc = moments[moments["cls"] == "all"]
        detail += (
            f"; of the mean gap, {allc['moments_part'].mean():+.2f} points come from the "
            f"score's mean and spread (theory vs a Gaussian with the measured moments) and "
            f"{allc['shape_part'].mean():+.2f} from its shape (that Gaussian vs the measured "
            "accuracy)"
        )
    finite = [v for v in ps.values() if math.isfinite(v)]
    return Measurement(
        means[worst],
        detail,
        p_value=float(max(ps.values())) if finite else math.nan,
        n=len(per_seed),
        power=float(min(powers.values())),
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


# ----------------------------------------------------------------------------- Fig. 3


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


# ----------------------------------------------------------------------------- Theorem 4.3


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


# ----------------------------------------------------------------------------- Fig. 5


def binomial_tost(
    correct: int, total: int, center: float, bar: float, alpha: float = 0.05
) -> tuple[float, float]:
    """Exact binomial equivalence test of an accuracy (``correct`` of ``total``) against
    ``center ± bar`` (fractions): the larger p of the one-sided tests of ``a > center − bar``
    and ``a < center + bar`` (a side whose null lies outside [0, 1] is settled: p = 0), and the
    test's power at level ``alpha`` when the true accuracy is ``center`` (returned as the second
    element, computed exactly over every possible count)."""
    return _tost_p(correct, total, center, bar), _tost_power(total, center, bar, alpha)


def _tost_p(correct: int, total: int, center: float, bar: float) -> float:
    lo, hi = center - bar, center + bar
    from scipy import stats

    p_low = 0.0 if lo <= 0 else float(stats.binom.sf(correct - 1, total, lo))  # P(X >= x)
    p_high = 0.0 if hi >= 1 else float(stats.binom.cdf(correct, total, hi))  # P(X <= x)
    return max(p_low, p_high)


def _tost_power(total: int, center: float, bar: float, alpha: float) -> float:
    xs = np.arange(total + 1)
    lo, hi = center - bar, center + bar
    from scipy import stats

    p_low = np.zeros(total + 1) if lo <= 0 else stats.binom.sf(xs - 1, total, lo)
    p_high = np.zeros(total + 1) if hi >= 1 else stats.binom.cdf(xs, total, hi)
    reject = np.maximum(p_low, p_high) < alpha
    return float(stats.binom.pmf(xs[reject], total, min(max(center, 0.0), 1.0)).sum())


def _one_sided_binom_between(correct: int, total: int, low: float, high: float) -> float:
    """p of "the accuracy lies strictly between ``low`` and ``high``" (two exact one-sided
    binomial tests, the larger p)."""
    from scipy import stats

    p_low = 0.0 if low <= 0 else float(stats.binom.sf(correct - 1, total, low))
    p_high = 0.0 if high >= 1 else float(stats.binom.cdf(correct, total, high))
    return max(p_low, p_high)


def _features_accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    """Per network: ``seed, theory, practice, n_points, k`` of the Fig. 5 test accuracy."""
    acc = frame[
        (frame["panel"] == "accuracy") & (frame["split"] == "test") & (frame["cls"] == "all")
    ]
    if "seed" not in acc.columns:
        acc = acc.assign(seed=0)
    th = acc[acc["source"] == "theory"].set_index("seed")["value"]
    pr = acc[acc["source"] == "practice"].set_index("seed")
    seeds = sorted(set(th.index) & set(pr.index))
    k = int(frame.loc[frame["panel"] == "weights", "output"].max()) + 1
    return pd.DataFrame(
        {
            "seed": seeds,
            "theory": [float(th[s]) for s in seeds],
            "practice": [float(pr.loc[s, "value"]) for s in seeds],
            "n_points": [int(pr.loc[s, "n_points"]) for s in seeds],
            "k": k,
        }
    )


def _interval(correct: int, total: int, level: float = 0.95) -> tuple[float, float]:
    from scipy import stats

    ci = stats.binomtest(correct, total).proportion_ci(level, method="exact")
    return 100 * ci.low, 100 * ci.high


#: Fig. 5's regime in the paper (Sec. 4.4.2 and Fig. 5's caption): ResNet-18 features, p = 512,
#: n = 3000 fit points, so n/p ≈ 5.9; the Gaussian law of the logits is a CLT over p coordinates
PAPER_FIG5_P = 512
PAPER_FIG5_N = 3000
#: fixed Sobol draws (2**m) for the accuracy of a Gaussian with the measured logits' moments
GAUSS_DRAWS_LOG2 = 15


def _gaussian_accuracy(means, covs, weights, seed: int = 0) -> float:
    """Accuracy of the argmax of Gaussian logits: class ``c`` (share ``weights[c]``) has logits
    ``N(means[c], covs[c])``; fixed scrambled Sobol draws (deterministic), as the theory's own
    k-class accuracy (:func:`~softmax_ood.studies.seddik.theory.solve_multiclass`)."""
    from scipy.stats import norm, qmc

    from .theory import _sqrt_psd

    k = len(means)
    u = qmc.Sobol(k, scramble=True, seed=seed).random_base2(GAUSS_DRAWS_LOG2)
    g = norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
    acc = 0.0
    for c in range(k):
        B = _sqrt_psd(np.asarray(covs[c], dtype=float))
        z = np.asarray(means[c], dtype=float) + g[:, : B.shape[1]] @ B.T
        acc += float(weights[c]) * float(np.mean(np.argmax(z, axis=1) == c))
    return acc


def features_shape(frame: pd.DataFrame) -> pd.DataFrame:
    """Moments-vs-shape split of C3's gap per network, from the measured test logits (the Fig. 5
    frame's ``logits`` panel, practice rows: one row per test point and logit).

    Per network: ``theory_acc`` (Theorem 4.8), ``gauss_acc`` (a Gaussian with the measured
    logits' per-class mean and full k×k covariance, test class proportions), ``practice_acc``
    (the argmax of the measured logits), all in %; ``moments_part`` = theory − gauss (what the
    predicted moments miss), ``shape_part`` = gauss − practice (what the logits' non-Gaussian
    shape costs); they add up to the gap. ``contrast_skew_min/max`` and ``contrast_kurt_max``: over
    classes, the skewness and excess kurtosis of the contrast own logit − mean of the other
    logits on the class's test points (a linear function of the logits: 0 and 0 when they are
    Gaussian). Also ``p`` (feature
    size, from the ``weights`` panel) and ``n_fit``. Empty without per-point practice logits."""
    f = _with_seed(frame)
    lg = f[(f["panel"] == "logits") & (f["source"] == "practice")] if "panel" in f else f.iloc[:0]
    if lg.empty:
        return pd.DataFrame()
    acc = _features_accuracy(frame).set_index("seed")
    from scipy import stats

    rows = []
    for seed, g in lg.groupby("seed", sort=True):
        L = g.pivot(index="index", columns="output", values="value").sort_index()
        y = g.groupby("index")["true_class"].first().reindex(L.index).to_numpy(dtype=int)
        Z = L.to_numpy(dtype=float)
        k = Z.shape[1]
        counts = np.bincount(y, minlength=k)[:k]
        if counts.min() < 2:
            continue
        means = [Z[y == c].mean(0) for c in range(k)]
        covs = [np.cov(Z[y == c], rowvar=False) for c in range(k)]
        skews, kurts = [], []
        for c in range(k):
            X = Z[y == c]
            m = X[:, c] - np.delete(X, c, 1).mean(1)
            skews.append(float(stats.skew(m)))
            kurts.append(float(stats.kurtosis(m)))
        gauss = 100 * _gaussian_accuracy(means, covs, counts / counts.sum())
        practice = 100 * float(np.mean(np.argmax(Z, axis=1) == y))
        theory = 100 * float(acc.loc[seed, "theory"]) if seed in acc.index else math.nan
        w = f[(f["seed"] == seed) & (f["panel"] == "weights")]
        sizes = _exact_theory_sizes(f[f["seed"] == seed]).get(seed)
        rows.append(
            {
                "seed": seed,
                "p": int(w["index"].max()) + 1 if len(w) else math.nan,
                "n_fit": sizes[0] if sizes else math.nan,
                "theory_acc": theory,
                "gauss_acc": gauss,
                "practice_acc": practice,
                "moments_part": theory - gauss,
                "shape_part": gauss - practice,
                "contrast_skew_min": min(skews),
                "contrast_skew_max": max(skews),
                "contrast_kurt_max": max(kurts),
            }
        )
    return pd.DataFrame(rows)


def _shape_text(shape: pd.DataFrame) -> str:
    if shape.empty:
        return (
            "; no per-point test logits in the frame: the gap is not split into moments and "
            "shape, and the regime (p, n/p) is not printed"
        )
    per = ", ".join(f"seed {r.seed}: {r.gauss_acc:.2f} %" for r in shape.itertuples())
    text = (
        f"; a Gaussian with the measured test logits' per-class mean and covariance gives {per}: "
        f"of the mean gap, {shape['moments_part'].mean():+.2f} points come from the predicted "
        f"moments (theory vs that Gaussian) and {shape['shape_part'].mean():+.2f} from the "
        "logits' non-Gaussian shape (that Gaussian vs the measured accuracy); per class, the "
        f"contrast own logit − mean of the others has skewness {shape['contrast_skew_min'].min():.2f} to "
        f"{shape['contrast_skew_max'].max():.2f}, excess kurtosis up to "
        f"{shape['contrast_kurt_max'].max():.2f} (0 and 0 for Gaussian logits)"
    )
    p = shape["p"].dropna()
    n_fit = shape["n_fit"].dropna()
    if len(p) and len(n_fit):
        pv, nv = int(p.max()), float(n_fit.mean())
        text += (
            f"; regime (a statement, not tested): p = {pv}, n/p = {nv / pv:.1f} here vs the "
            f"paper's p = {PAPER_FIG5_P}, n/p = {PAPER_FIG5_N / PAPER_FIG5_P:.1f}: the theory's "
            "Gaussian logits are a CLT over the p feature coordinates"
            + (
                f", so at p = {pv} that limit is not reached as in the paper and the logits' "
                "shape, not Theorem 4.8's moments, can carry the gap"
                if pv < PAPER_FIG5_P
                else ""
            )
        )
    return text


def features_gap(frame: pd.DataFrame, bar_points: float, alpha: float = 0.05) -> Measurement:
    """C3: per network, exact binomial TOST of the test accuracy against its theory ± bar;
    p = the largest over networks, power = the smallest per-network power at gap 0 (the
    all-networks test has at most that power).

    The value is the largest |gap| over networks; the interval is **that network's** exact
    ``1 − 2·alpha`` interval of the gap (named in the detail) when it lies outside the bar or
    no network's does, else the outside network with the largest |gap|; the hull over networks
    when no network lies outside (the claim then at best straddles). ``p_opposite``: the
    one-sided exact p that some network's accuracy lies beyond the bar on its gap's side, the
    smallest per-network p times the number of networks (Bonferroni, capped at 1); the detail
    adds the largest (every network beyond the bar). The detail also splits the mean gap into
    the predicted moments' and the logits' shape parts (:func:`features_shape`) and states the
    regime (p, n/p) against the paper's."""
    acc = _features_accuracy(frame)
    if acc.empty:
        return Measurement(math.nan, "the Fig. 5 frame has no test accuracy rows")
    from scipy import stats

    b = bar_points / 100
    ps, powers, parts, gap_intervals, opposite = [], [], [], [], []
    for r in acc.itertuples():
        correct = int(round(r.practice * r.n_points))
        p, power = binomial_tost(correct, r.n_points, r.theory, b, alpha)
        lo, hi = _interval(correct, r.n_points, 1 - 2 * alpha)
        ps.append(p)
        powers.append(power)
        gap_intervals.append((100 * r.theory - hi, 100 * r.theory - lo))
        if r.theory >= r.practice:  # practice below: beyond the bar = accuracy < theory − b
            lo_null = r.theory - b
            opp = (
                0.0
                if lo_null >= 1
                else float(stats.binom.cdf(correct, r.n_points, max(lo_null, 0.0)))
            )
            opp = 1.0 if lo_null <= 0 else opp
        else:
            hi_null = r.theory + b
            opp = 1.0 if hi_null >= 1 else float(stats.binom.sf(correct - 1, r.n_points, hi_null))
        opposite.append(opp)
        parts.append(
            f"seed {r.seed}: theory {100 * r.theory:.2f} % vs practice {100 * r.practice:.2f} % "
            f"({correct}/{r.n_points}, {100 * (1 - 2 * alpha):g} % exact interval "
            f"{lo:.2f}–{hi:.2f}, gap {gap_intervals[-1][0]:.2f} to {gap_intervals[-1][1]:.2f}), "
            f"TOST p {p:.3g}, beyond the bar p {opp:.3g}"
        )
    gaps = 100 * (acc["theory"] - acc["practice"]).abs()
    n = int(acc["n_points"].min())
    seeds = list(acc["seed"])
    out_idx = [i for i, iv in enumerate(gap_intervals) if iv[1] < -bar_points or iv[0] > bar_points]
    worst = int(np.argmax(gaps.to_numpy()))
    if out_idx:
        pick = worst if worst in out_idx else max(out_idx, key=lambda i: gaps.iloc[i])
        interval = gap_intervals[pick]
        which = (
            f"seed {seeds[pick]}'s (the largest |gap|, entirely outside the bar)"
            if pick == worst
            else f"seed {seeds[pick]}'s (entirely outside the bar; the largest |gap| is seed "
            f"{seeds[worst]}'s)"
        )
    else:
        interval = (min(iv[0] for iv in gap_intervals), max(iv[1] for iv in gap_intervals))
        which = (
            f"the hull over networks (no network entirely outside the bar; the largest |gap| is "
            f"seed {seeds[worst]}'s, interval {gap_intervals[worst][0]:.2f} to "
            f"{gap_intervals[worst][1]:.2f})"
        )
    p_opp = float(min(1.0, len(opposite) * min(opposite)))
    return Measurement(
        float(gaps.max()),
        f"k={int(acc['k'].iloc[0])}, {len(acc)} network(s), one error = "
        f"{100 / n:.2f} points; value: seed {seeds[worst]}'s |gap|; "
        + "; ".join(parts)
        + f"; interval of the gap theory − practice: {interval[0]:.2f} to {interval[1]:.2f}, "
        + which
        + f"; opposite (some network beyond the bar) p {p_opp:.3g} (smallest per-network p × "
        f"{len(opposite)}), every network beyond the bar p {max(opposite):.3g}"
        + _shape_text(features_shape(frame)),
        p_value=float(max(ps)),
        n=n,
        power=float(min(powers)),
        method="binomial",
        interval=interval,
        p_opposite=p_opp,
    )


def features_informative(frame: pd.DataFrame, bar_points: float) -> Measurement:
    """P3: per network, the test accuracy's distance from the nearer trivial prediction
    (guessing 100/k %, perfect 100 %), with exact binomial tests that the accuracy lies more
    than the bar inside both; p = the largest over networks."""
    acc = _features_accuracy(frame)
    if acc.empty:
        return Measurement(math.nan, "the Fig. 5 frame has no test accuracy rows")
    b = bar_points / 100
    ps, parts = [], []
    for r in acc.itertuples():
        correct = int(round(r.practice * r.n_points))
        ps.append(_one_sided_binom_between(correct, r.n_points, 1 / r.k + b, 1 - b))
        parts.append(
            f"seed {r.seed}: {100 * r.practice:.2f} % ({r.n_points - correct} errors of "
            f"{r.n_points}), p {ps[-1]:.3g}"
        )
    dist = np.minimum(100 * acc["practice"] - 100 / acc["k"], 100 - 100 * acc["practice"])
    return Measurement(
        float(dist.min()),
        f"guessing = {100 / int(acc['k'].iloc[0]):.1f} %; " + "; ".join(parts),
        p_value=float(max(ps)),
        n=int(acc["n_points"].min()),
        method="binomial",
    )


def _with_seed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame if "seed" in frame.columns else frame.assign(seed=0)


def _exact_theory_sizes(frame: pd.DataFrame) -> dict:
    """Per network (seed): ``(n_fit, n_stats)`` — the fit part's size (``accuracy`` panel,
    practice, ``split="train"``, ``cls="all"``: ``n_points``) and the class statistics' size
    (``statistics`` panel, ``split="stats"``, ``cls="all"``: ``n_points``); only networks whose
    statistics share no point with the fit or test part (S2's input) and that record both."""
    f = _with_seed(frame)
    if "panel" not in f.columns or "n_points" not in f.columns:
        return {}
    out = {}
    for seed, g in f.groupby("seed", sort=True):
        fit = g[(g["panel"] == "accuracy") & (g["source"] == "practice")]
        fit = fit[(fit["split"] == "train") & (fit["cls"] == "all")]["n_points"].dropna()
        st = g[g["panel"] == "statistics"]
        size = st[(st["split"] == "stats") & (st["cls"] == "all")]["n_points"].dropna()
        shared = st.loc[st["split"].isin(["train", "test"]), "value"].astype(float).sum()
        if len(fit) and len(size) and float(size.iloc[0]) > 0 and shared == 0:
            out[seed] = (int(fit.iloc[0]), int(size.iloc[0]))
    return out


def expected_weight_ratio(frame: pd.DataFrame) -> float:
    """The C3-weights ratio ``r`` an exact theory gives on the Fig. 5 frame's own sizes: with
    class statistics estimated on ``n_stats`` points independent of the ``n_fit`` fit points,
    the predicted mean carries their sampling error too, ``E r ≈ √(1 + n_fit/n_stats)``
    (measured on Gaussian mixtures: 1.42–1.51 at equal parts, 1.02–1.05 with 20× more
    statistics points); the mean over networks. NaN when the frame does not record both sizes
    or its statistics are not independent of the classifier (no exact-theory ``r`` then)."""
    sizes = _exact_theory_sizes(frame)
    if not sizes:
        return math.nan
    return float(np.mean([math.sqrt(1.0 + n_fit / n_stats) for n_fit, n_stats in sizes.values()]))


def _power_below(bar: float, expected: float, samples, alpha: float) -> float:
    """Power of the one-sided t-test "mean below ``bar``" when the true mean is ``expected``
    (signed: at or above the bar the power is at most ``alpha``)."""
    n = len(samples)
    if n < 2 or not math.isfinite(expected):
        return math.nan
    sd = float(np.std(samples, ddof=1))
    if bar - expected > 0:
        return t_power(bar - expected, sd, n, alpha)
    if not sd > 0:
        return 0.0
    from scipy import stats

    crit = stats.t.ppf(1 - alpha, n - 1)
    return float(stats.nct.sf(crit, n - 1, (bar - expected) / sd * math.sqrt(n)))


def cuts_of(frame: pd.DataFrame) -> dict:
    """Network (seed) -> the seed of its cut of the pool (the Fig. 5 frame's ``cut`` column). A
    frame without the column was made with one cut shared by every network (before
    ``seddik.fig5.cut``), or a network whose cut is missing, maps to one shared cut, ``-1``."""
    f = _with_seed(frame)
    if "cut" not in f.columns:
        return {s: -1 for s in f["seed"].dropna().unique()}
    first = f.groupby("seed", sort=True)["cut"].first()
    return {s: -1 if pd.isna(c) else int(c) for s, c in first.items()}


def per_cut(values: dict, frame: pd.DataFrame) -> tuple[np.ndarray, str]:
    """The unit of replication of a t-test over networks: one sample per cut of the pool (the
    mean over the networks that share it). Networks sharing one cut share their statistics,
    fit and test points, so their values are not independent replicates of the cut's own
    variation; with a cut per network every network is one sample. Returns the samples and a
    sentence for the detail naming the unit."""
    cuts = cuts_of(frame)
    groups: dict[int, list[float]] = {}
    for seed, v in values.items():
        groups.setdefault(cuts.get(seed, -1), []).append(v)
    samples = np.array([float(np.mean(v)) for _, v in sorted(groups.items())])
    shared = [g for g in groups.values() if len(g) > 1]
    if not shared:
        text = (
            f"unit of replication: the network with its own cut of the pool ({len(samples)} "
            "networks, each trained and cut independently)"
        )
    else:
        text = (
            f"unit of replication: the cut of the pool, not the network: {len(values)} "
            f"networks share {len(groups)} cut(s), so the test has {len(samples)} sample(s), "
            "each the mean over the networks sharing a cut (networks sharing a cut share its "
            "statistics, fit and test points; a t-test over them would ignore the cut's own "
            "variation)"
        )
    return samples, text


def features_weights(
    frame: pd.DataFrame, bar: float = WEIGHT_RATIO_BAR, alpha: float = 0.05
) -> Measurement:
    """C3-weights: per network, ``r = ‖w − E w‖₂ / √(Σ Var w)`` over every class and coordinate
    (``weights`` panel: practice rows against the theory rows' ``value`` and ``theory_std``);
    samples: one ``r`` per network. The power is the one-sided t-test's against ``bar`` when the
    true mean is the exact theory's :func:`expected_weight_ratio` (n/a without it). The detail
    adds per network the correlation of the learned with the predicted weights and the relative
    L2 error ``‖w − E w‖₂ / ‖E w‖₂``, and the exact-theory ``r`` with its sizes."""
    w = _with_seed(frame)
    w = w[w["panel"] == "weights"]
    if w.empty or "theory_std" not in w.columns:
        return Measurement(math.nan, "the Fig. 5 frame has no weights rows with a theory_std")
    key = ["output", "index"]
    ratios, within, sizes, parts = {}, {}, set(), []
    for seed, g in w.groupby("seed", sort=True):
        th = g[g["source"] == "theory"].set_index(key).sort_index()
        pr = g[g["source"] == "practice"].set_index(key)["value"]
        same = th.index.is_unique and pr.index.is_unique and th.index.equals(pr.index.sort_values())
        if th.empty or not same:
            parts.append(f"seed {seed}: learned and predicted weights do not pair up; skipped")
            continue
        mean = th["value"].to_numpy(dtype=float)
        sd = th["theory_std"].to_numpy(dtype=float)
        got = pr.loc[th.index].to_numpy(dtype=float)
        spread = math.sqrt(float(np.sum(sd**2)))
        if not spread > 0 or not np.all(np.isfinite(sd)):
            parts.append(f"seed {seed}: the predicted spread is zero or undefined; skipped")
            continue
        err = float(np.linalg.norm(got - mean))
        ratios[seed] = err / spread
        within[seed] = float(np.mean(np.abs(got - mean) <= 2 * sd))
        sizes.add(len(mean))
        norm = float(np.linalg.norm(mean))
        corr = (
            float(np.corrcoef(got, mean)[0, 1])
            if len(mean) > 1 and np.std(got) > 0 and np.std(mean) > 0
            else math.nan
        )
        parts.append(
            f"seed {seed}: r {ratios[seed]:.3g}, correlation {corr:.3f}, relative L2 error "
            + (f"{err / norm:.3g}" if norm > 0 else "n/a")
            + f", {100 * within[seed]:.0f} % of weights within ± 2 predicted SD"
        )
    if not ratios:
        return Measurement(math.nan, "; ".join(["no network with paired weights", *parts]))
    r = np.array(list(ratios.values()))
    units, unit_text = per_cut(ratios, frame)
    kp = "/".join(str(v) for v in sorted(sizes))
    built_in = (
        f"; r far below 1 (< {BUILT_IN_RATIO:g}): the learned weights sit much closer to the "
        "predicted mean than the predicted fluctuation, as when the theory's class statistics "
        "come from the fit points themselves (the match is then built in, not predicted)"
        if r.max() < BUILT_IN_RATIO
        else ""
    )
    sizes = _exact_theory_sizes(frame)
    expected = expected_weight_ratio(frame)
    if sizes:
        fits = "/".join(str(v) for v in sorted({a for a, _ in sizes.values()}))
        stat = "/".join(str(v) for v in sorted({b for _, b in sizes.values()}))
        exact = (
            f"; power at the exact-theory r = √(1 + n_fit/n_stats) = {expected:.3g} (n_fit "
            f"{fits}, n_stats {stat}: the statistics' own sampling error)"
            + (
                f", at or above the bar {bar:g}: even an exact theory fails with these parts "
                "(raise seddik.fig5.stats_fraction)"
                if expected >= bar
                else ""
            )
        )
    else:
        exact = (
            "; no exact-theory r (the frame does not record independent statistics and the fit "
            "part's size): power n/a"
        )
    return Measurement(
        float(r.mean()),
        f"{len(r)} network(s), {kp} weights each (classes × coordinates); mean r {r.mean():.3g}"
        + (f" ± {r.std(ddof=1):.2g} (SD over networks)" if len(r) > 1 else "")
        + "; "
        + "; ".join(parts)
        + built_in
        + exact
        + _fluctuation_text(units, expected, float(np.mean(list(within.values()))), alpha)
        + "; "
        + unit_text,
        samples=tuple(units),
        power=_power_below(bar, expected, units, alpha),
    )


def _fluctuation_text(r: np.ndarray, expected: float, within: float, alpha: float) -> str:
    """Whether the learned weights scatter more than the theory predicts: the one-sided t-test
    of the networks' ``r`` against the exact-theory ``r`` (:func:`expected_weight_ratio`),
    alternative above. A statement in the detail; the verdict stays on the bar."""
    if len(r) < 2 or not math.isfinite(expected):
        return ""
    from ...analysis.claims import one_sided_t

    p_above = one_sided_t(r, expected, ">")
    p_below = one_sided_t(r, expected, "<")
    from scipy import stats

    gauss_share = 2 * stats.norm.cdf(2 / expected) - 1  # errors of SD `expected` predicted SDs
    share = (
        f"{100 * within:.0f} % of the weights lie within ± 2 predicted SD ({100 * gauss_share:.0f} "
        f"% expected of Gaussian errors at the exact-theory r, 95 % at r = 1)"
    )
    if p_above < alpha:
        return (
            f"; the predicted fluctuation is too small: mean r {r.mean():.3g} lies significantly "
            f"above the exact-theory {expected:.3g} (one-sided t-test over networks, p "
            f"{p_above:.2g}), the learned weights scatter {r.mean() / expected:.2f} times as far "
            f"from the predicted mean as the theory's own spread allows; {share}. The claim "
            "holds only because its bar is twice the predicted fluctuation"
        )
    if p_below < alpha:
        return (
            f"; mean r {r.mean():.3g} lies significantly below the exact-theory {expected:.3g} "
            f"(p {p_below:.2g}): the weights sit closer to the predicted mean than the "
            f"statistics' own sampling error allows; {share}"
        )
    return (
        f"; mean r {r.mean():.3g} is not distinguishable from the exact-theory {expected:.3g} "
        f"(p above {p_above:.2g}, below {p_below:.2g}); {share}"
    )


def features_logits(frame: pd.DataFrame) -> Measurement:
    """C3-logits: per network, the mean over (true class, logit) of ``|measured − predicted
    mean| / predicted std`` of the test logits (``logit_moments`` panel; pairs with a zero
    predicted std are left out and counted in the detail); samples: one value per network. The
    detail adds per network the mean ratio measured / predicted std."""
    lm = _with_seed(frame)
    lm = lm[lm["panel"] == "logit_moments"]
    if lm.empty:
        return Measurement(math.nan, "the Fig. 5 frame has no logit_moments rows")
    key = ["true_class", "output"]
    gaps, sizes, parts = {}, set(), []
    for seed, g in lm.groupby("seed", sort=True):
        th = g[g["source"] == "theory"].set_index(key)
        pr = g[g["source"] == "practice"].set_index(key)
        common = th.index.intersection(pr.index)
        sd = th.loc[common, "std"].astype(float)
        ok = sd[np.isfinite(sd) & (sd > 0)].index
        if len(ok) == 0:
            continue
        th_sd = th.loc[ok, "std"].astype(float)
        z = (pr.loc[ok, "value"].astype(float) - th.loc[ok, "value"].astype(float)).abs() / th_sd
        ratio = pr.loc[ok, "std"].astype(float) / th_sd
        gaps[seed] = float(z.mean())
        sizes.add(len(ok))
        dropped = len(common) - len(ok)
        parts.append(
            f"seed {seed}: mean |gap| {gaps[seed]:.3g} predicted std (largest {z.max():.3g}), "
            f"std measured/predicted {ratio.mean():.3g} (range {ratio.min():.3g}–"
            f"{ratio.max():.3g})"
            + (f", {dropped} pair(s) with zero predicted std" if dropped else "")
        )
    if not gaps:
        return Measurement(math.nan, "no network with both measured and predicted logit moments")
    z = np.array(list(gaps.values()))
    units, unit_text = per_cut(gaps, frame)
    return Measurement(
        float(z.mean()),
        f"{len(z)} network(s), {'/'.join(str(v) for v in sorted(sizes))} (true class, logit) "
        f"pairs each; mean {z.mean():.3g} predicted std; " + "; ".join(parts) + "; " + unit_text,
        samples=tuple(units),
    )


# ----------------------------------------------------------------------------- table


def evaluate_seddik_claims(
    fig2: pd.DataFrame,
    fig4: pd.DataFrame,
    fig5: pd.DataFrame,
    validation: pd.DataFrame,
    fig3: pd.DataFrame | None = None,
    *,
    max_gap_points: float,
    ridge_n_gap: float,
    alpha: float = 0.05,
    weight_ratio_bar: float = WEIGHT_RATIO_BAR,
    logit_gap_bar: float = LOGIT_GAP_BAR,
    images: str = IMAGES,
) -> pd.DataFrame:
    """The claims table (premises first, the sanity row last); columns of
    :data:`softmax_ood.analysis.claims.COLUMNS`."""
    measurements = {
        "P1": informative(fig2, "p"),
        "P2": informative(fig4, "n"),
        "P3": features_informative(fig5, max_gap_points),
        "S1": ridge_sanity(validation),
        "S2": statistics_independent(fig5),
        "C1": gap_over(fig2, "p", max_gap_points, alpha),
        "C1-train": gap_over(fig2, "p", max_gap_points, alpha, split="train"),
        "C2": gap_over(fig4, "n", max_gap_points, alpha),
        "C3-weights": features_weights(fig5, weight_ratio_bar, alpha),
        "C3-logits": features_logits(fig5),
        "C3": features_gap(fig5, max_gap_points, alpha),
        "P4": input_far_from_gaussian(fig3, alpha),
        "C4": scores_gaussian(fig3, alpha),
        "C5": spread_rate(fig4, alpha),
    }
    specs = claim_specs(
        max_gap_points,
        ridge_n_gap,
        weight_ratio_bar,
        logit_gap_bar,
        expected_weight_ratio(fig5),
        images=images,
    )
    return evaluate_claims(PAPER, specs, measurements, alpha=alpha, headline=HEADLINE)


def claims_table(frames: dict, bars: dict) -> pd.DataFrame:
    """The study's claims table from its frames and the claims' bars (the shared claims rule's
    function)."""
    return evaluate_seddik_claims(**frames, **bars)


def claim_specs(
    max_gap_points: float,
    ridge_n_gap: float,
    weight_ratio_bar: float = WEIGHT_RATIO_BAR,
    logit_gap_bar: float = LOGIT_GAP_BAR,
    weight_ratio_expected: float | None = None,
    images: str = IMAGES,
) -> list[ClaimSpec]:
    """:func:`_claim_specs` with what decided each row's settings and what confirms it;
    ``weight_ratio_expected`` (:func:`expected_weight_ratio` of the Fig. 5 frame) sets
    C3-weights' effect (``None``: no effect, power n/a)."""
    from ...analysis.selection import annotate

    paper = "the paper's n, p and lambda (each cited in the config)"
    selection = {
        "S2": "by construction: seddik.fig5.stats_from (independent: a part of the pooled "
        "features disjoint from the fit and test parts)",
        "C3-weights": f"fixed in advance: the bar {weight_ratio_bar:g} x the theory's own "
        f"predicted fluctuation of the weights (r = sqrt(1 + n_fit/n_stats) when the theory is "
        f"exact and its statistics independent), {paper}",
        "C3-logits": f"fixed in advance: the bar {logit_gap_bar:g} predicted standard deviation "
        f"of a test logit, {paper}",
        "P4": f"fixed in advance: the Gaussianity bars (|skewness| {SKEW_BAR:g}, |excess "
        f"kurtosis| {KURT_BAR:g}), the class pair",
        "C4": f"fixed in advance: the Gaussianity bars (|skewness| {SKEW_BAR:g}, |excess "
        f"kurtosis| {KURT_BAR:g}: conventional bounds of an approximately normal variable), "
        f"{paper}",
        "C5": f"fixed in advance: Theorem 4.3's rate -1/2 +- {RATE_BAR:g} (half way to the "
        "rates n^-1/4 and n^-3/4), Fig. 4's n",
        "*": f"fixed in advance: the +- {max_gap_points:g}-point bar, {paper}, the class pair "
        "(a documented confusable pair)",
    }
    specs = _claim_specs(
        max_gap_points,
        ridge_n_gap,
        weight_ratio_bar,
        logit_gap_bar,
        weight_ratio_expected,
        images,
    )
    return annotate(specs, selection, "every configured seed x test points")
