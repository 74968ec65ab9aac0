"""The claims table: premises first, equivalence tests with p, n and power, binomial tests on
the network features, the moments-vs-shape breakdown, 'cannot test' when a premise fails."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from softmax_ood.analysis.claims import t_interval, t_power
from softmax_ood.studies.seddik.claims import (
    binomial_tost,
    evaluate_seddik_claims,
    expected_weight_ratio,
    features_gap,
    features_logits,
    features_weights,
    gap_over,
    informative,
    ridge_sanity,
    score_moments,
    statistics_independent,
)
from softmax_ood.studies.seddik.experiments import fig4_frame
from softmax_ood.studies.seddik.tests.controls import (
    CLAIM_IDS,
    accuracy_frame,
    features_frame,
    fig3_frame,
    validation_frame,
    with_spread,
)


def test_gap_over_tests_every_x_value_intersection_union():
    f = accuracy_frame("p", [25, 50], [0.80, 0.70], [0.03, 0.01])  # practice above the theory
    m = gap_over(f, "p", 2.0)
    jitter = np.array([-0.003, 0.001, 0.002, -0.001, 0.0015])
    worst = -100 * (0.03 + jitter)  # theory − practice at p = 25, the largest |gap|
    assert m.value == pytest.approx(worst.mean()) and m.n == 5
    # the interval is p = 25's t interval (entirely outside the bar), not the mean over p
    assert m.interval == pytest.approx(t_interval(worst, 0.05))
    assert "intersection–union over 2 values of p" in m.detail and "p = 25's" in m.detail
    # p: the larger of the per-p TOST p's; p_opposite: Bonferroni of the per-p opposite p's
    other = -100 * (0.01 + jitter)
    tost = [
        max(
            stats.ttest_1samp(g, -2, alternative="greater").pvalue,
            stats.ttest_1samp(g, 2, alternative="less").pvalue,
        )
        for g in (worst, other)
    ]
    assert m.p_value == pytest.approx(max(tost))
    opp = [stats.ttest_1samp(g, -2, alternative="less").pvalue for g in (worst, other)]
    assert m.p_opposite == pytest.approx(min(1.0, 2 * min(opp)))


def test_gap_over_one_value_at_the_bar_is_not_established():
    """The mean over n lies well inside the bar, but one n's interval straddles it: the
    intersection–union test reads "not established", where an average would hold."""
    from softmax_ood.analysis.claims import ClaimSpec, evaluate_claims

    f = accuracy_frame("n", [20, 40, 80], [0.93, 0.95, 0.96], [-0.02, 0.0, 0.0])
    m = gap_over(f, "n", 2.0)
    assert m.p_value > 0.05 and "n = 20 not established on its own" in m.detail
    spec = ClaimSpec("C", "t", "s", threshold=2.0, direction="<", test="equivalence")
    row = evaluate_claims("P", [spec], {"C": m}, alpha=0.05).iloc[0]
    assert row["verdict"].startswith("not established")
    # the training points are tested apart
    assert "training" not in m.detail and gap_over(f, "n", 2.0, split="train").detail.startswith(
        "train points"
    )


def test_informative_is_the_distance_from_the_nearer_trivial_prediction():
    f = accuracy_frame("n", [20], [0.97], 0.0)
    m = informative(f, "n")
    assert m.value == pytest.approx(3.0, abs=0.2) and m.n == 5
    f = accuracy_frame("p", [25], [0.55], 0.0)
    assert informative(f, "p").value == pytest.approx(5.0, abs=0.2)


def test_ridge_sanity_scales_with_n():
    assert ridge_sanity(validation_frame(1e-3, n=400)).value == pytest.approx(0.4)
    assert math.isnan(ridge_sanity(validation_frame(1e-3).iloc[0:0]).value)


def test_binomial_tost_by_hand():
    # 880 of 1000 against 0.90 ± 0.02: p = max(P(X >= 880 | 0.88), P(X <= 880 | 0.92))
    p, power = binomial_tost(880, 1000, 0.90, 0.02)
    by_hand = max(stats.binom.sf(879, 1000, 0.88), stats.binom.cdf(880, 1000, 0.92))
    assert p == pytest.approx(by_hand) and 0.4 < p < 0.6
    # at the ceiling the upper half is settled; 452 points make the lower half decisive
    p, power = binomial_tost(452, 452, 0.9999, 0.02)
    assert p == pytest.approx(0.9799**452, rel=1e-6) and power > 0.99
    # a few points cannot tell a 2-point match
    assert binomial_tost(45, 50, 0.90, 0.02)[1] < 0.2


def test_features_gap_is_an_intersection_union_test():
    f = features_frame(0.90, 0.90, n_points=5000)
    f.loc[(f["seed"] == 2) & (f["source"] == "practice"), "value"] = 0.885
    m = features_gap(f, 2.0)
    ps = [binomial_tost(4500, 5000, 0.90, 0.02)[0], binomial_tost(4425, 5000, 0.90, 0.02)[0]]
    assert m.p_value == pytest.approx(max(ps)) and m.n == 5000
    assert m.value == pytest.approx(1.5) and "3 network(s)" in m.detail


def test_score_moments_split_the_gap_into_moments_and_shape():
    f = fig4_frame(ns=(40, 120), seeds=(0, 1, 2))
    m = score_moments(f, "n")
    allc = m[m["cls"] == "all"]
    gap = allc["theory_acc"] - allc["practice_acc"]
    assert np.allclose(allc["moments_part"] + allc["shape_part"], gap)
    cls = m[m["cls"] != "all"]
    # Theorem 4.8 gets the score's moments of digits right to a few percent ...
    assert np.allclose(cls["measured_mean"], cls["theory_mean"], rtol=0.1)
    assert np.allclose(cls["measured_std"], cls["theory_std"], rtol=0.2)
    # ... while digit 2's scores are skewed (the shape the Gaussian law misses)
    assert cls.loc[cls["cls"] == "1", "skew"].min() > 0.8
    assert gap_over(f, "n").detail.count("points come from") == 1


def test_claims_table_premises_first_and_verdicts():
    good = {
        "fig2": accuracy_frame("p", [25, 100], [0.62, 0.59], 0.0),
        "fig4": with_spread(accuracy_frame("n", [20, 80], [0.93, 0.95], -0.05)),
        "fig5": features_frame(0.999, 0.996),
        "validation": validation_frame(1e-4),
        "fig3": fig3_frame(),
    }
    c = evaluate_seddik_claims(**good, max_gap_points=2.0, ridge_n_gap=1.0, alpha=0.05)
    assert list(c["claim_id"]) == list(CLAIM_IDS)
    assert list(c["kind"]) == ["premise"] * 4 + ["claim"] * 8 + ["sanity"] * 2
    v = dict(zip(c["claim_id"], c["verdict"], strict=True))
    assert v["C1"] == "holds" and v["C2"].startswith("does not hold")
    assert v["P3"].startswith("does not hold")
    for cid in ("C3", "C3-weights", "C3-logits"):
        assert v[cid] == "cannot test: premise P3 does not hold"
    assert v["S1"] == "sanity check passes" and not c.set_index("claim_id").loc["S1", "supports"]
    assert c.loc[c["kind"] == "claim", "power"].notna().all()
    bad = evaluate_seddik_claims(
        **{**good, "validation": validation_frame(0.1)},
        max_gap_points=2.0,
        ridge_n_gap=1.0,
        alpha=0.05,
    )
    w = dict(zip(bad["claim_id"], bad["verdict"], strict=True))
    assert w["S1"] == "sanity check fails"
    assert w["C1"].startswith("cannot test: premise S1")
    # C2's gap (5 points) lies significantly outside the bar: the failed premise does not hide it
    assert w["C2"].startswith(
        "cannot test as the paper's claim (premise S1 does not hold) — here the opposite is "
        "significant (p = "
    )


def test_fig5_frame_of_one_network_without_seed_column():
    f = features_frame(0.9, 0.9).query("seed == 0").drop(columns="seed")
    assert features_gap(f, 2.0).n == 5000
    assert isinstance(f, pd.DataFrame)


def _fig5_row(cid: str, fig5: pd.DataFrame) -> pd.Series:
    return (
        evaluate_seddik_claims(
            accuracy_frame("p", [25], [0.62], 0.0),
            accuracy_frame("n", [20], [0.93], 0.0),
            fig5,
            validation_frame(1e-4),
            max_gap_points=2.0,
            ridge_n_gap=1.0,
            alpha=0.05,
        )
        .set_index("claim_id")
        .loc[cid]
    )


def test_weights_ratio_is_the_error_in_units_of_the_predicted_fluctuation():
    # practice = theory exactly: r = 0 for every network; five networks make the sign test
    # significant (0.5**5), so the claim holds
    f = features_frame(0.9, 0.9, networks=5, weight_offset=0)
    m = features_weights(f)
    assert m.value == 0 and m.samples == (0.0,) * 5
    assert "correlation 1.000, relative L2 error 0" in m.detail and "built in" in m.detail
    assert _fig5_row("C3-weights", f)["verdict"] == "holds"
    # by hand: every weight one predicted std off (signs alternating) -> r = 1 exactly
    g = features_frame(0.9, 0.9, networks=1).query("seed == 0").copy()
    th = g[(g["panel"] == "weights") & (g["source"] == "theory")].sort_values(["output", "index"])
    pr = g[(g["panel"] == "weights") & (g["source"] == "practice")]
    pr = pr.sort_values(["output", "index"])
    err = np.linalg.norm(pr["value"].to_numpy() - th["value"].to_numpy())
    by_hand = err / np.sqrt((th["theory_std"].to_numpy() ** 2).sum())
    assert by_hand == pytest.approx(0.9) and features_weights(g).value == pytest.approx(by_hand)
    corr = np.corrcoef(pr["value"], th["value"])[0, 1]
    assert f"correlation {corr:.3f}" in features_weights(g).detail
    # practice offset by 5 predicted stds: r = 5 per network, significantly above the bar 2
    row = _fig5_row("C3-weights", features_frame(0.9, 0.9, weight_offset=5))
    assert row["value"] == pytest.approx(5.0) and row["n"] == 3
    assert row["verdict"].startswith("does not hold (the opposite is significant")
    assert row["threshold"] == 2.0 and row["effect"] == pytest.approx(2 - math.sqrt(2))
    assert 0 <= row["power"] <= 1


@pytest.mark.parametrize("n_fit, n_stats", [(5000, 5000), (5000, 1000), (500, 10000)])
def test_weights_power_is_at_the_exact_theory_ratio(n_fit, n_stats):
    """C3-weights' power and effect use the r an exact theory gives with independent statistics
    of n_stats points and n_fit fit points, sqrt(1 + n_fit/n_stats), read from the frame."""
    expected = math.sqrt(1 + n_fit / n_stats)
    f = features_frame(0.9, 0.9, networks=5, n_points=n_stats, n_fit=n_fit)
    assert expected_weight_ratio(f) == pytest.approx(expected)
    m = features_weights(f, bar=2.0, alpha=0.05)
    assert f"power at the exact-theory r = √(1 + n_fit/n_stats) = {expected:.3g}" in m.detail
    sd = float(np.std(m.samples, ddof=1))
    want = (
        t_power(2.0 - expected, sd, 5, 0.05)
        if expected < 2
        else float(stats.nct.sf(stats.t.ppf(0.95, 4), 4, (2.0 - expected) / sd * math.sqrt(5)))
    )
    assert m.power == pytest.approx(want)
    row = _fig5_row("C3-weights", f)
    assert row["effect"] == pytest.approx(2.0 - expected) and row["power"] == pytest.approx(want)
    # an exact theory at or above the bar: the power is at most alpha, and the detail says so
    assert (m.power <= 0.05) == (expected >= 2) and ("even an exact theory" in m.detail) == (
        expected >= 2
    )


def test_weights_power_needs_independent_statistics_and_sizes():
    for f in (
        features_frame(0.9, 0.9, n_fit=None),
        features_frame(0.9, 0.9, shared=100),
    ):
        assert math.isnan(expected_weight_ratio(f)) and math.isnan(features_weights(f).power)
        assert "no exact-theory r" in features_weights(f).detail


def test_weights_ratio_needs_paired_weights():
    f = features_frame(0.9, 0.9)
    assert math.isnan(features_weights(f[f["panel"] != "weights"]).value)
    drop = f.index[(f["panel"] == "weights") & (f["source"] == "practice") & (f["seed"] == 1)]
    m = features_weights(f.drop(drop[:1]))
    assert m.n == 2 and "seed 1: learned and predicted weights do not pair up" in m.detail


def test_statistics_shared_with_the_fit_points_gate_every_fig5_claim():
    """S2: independent statistics pass; statistics of the fit points (stats_from: train) fail it,
    and C3-weights, C3-logits and C3 then cannot be tested however well they match."""
    good = statistics_independent(features_frame(0.9, 0.9))
    assert good.value == 0 and "independent of the fit and test parts" in good.detail
    assert "seed 0: 5000 points (smallest class 1000), 0 of them fit points" in good.detail
    assert _fig5_row("S2", features_frame(0.9, 0.9))["verdict"] == "sanity check passes"
    built_in = features_frame(0.9, 0.9, networks=5, weight_offset=0, shared=2500)
    m = statistics_independent(built_in)
    assert m.value == 0.5 and "the weights match is built in" in m.detail
    assert _fig5_row("S2", built_in)["verdict"] == "sanity check fails"
    for cid in ("C3-weights", "C3-logits", "C3"):
        row = _fig5_row(cid, built_in)
        assert row["verdict"] == "cannot test: premise S2 does not hold" and not row["supports"]
    # a frame that does not record its statistics cannot pass S2
    old = built_in[built_in["panel"] != "statistics"]
    assert math.isnan(statistics_independent(old).value)
    assert (
        _fig5_row("C3-weights", old)["verdict"] == "cannot test: premise S2 could not be evaluated"
    )


def test_logit_gap_is_the_mean_standardised_gap_of_the_logit_means():
    f = features_frame(0.9, 0.9, networks=5, logit_offset=0, std_ratio=1.2)
    m = features_logits(f)
    assert m.value == 0 and m.n == 5 and "std measured/predicted 1.2 " in m.detail
    assert _fig5_row("C3-logits", f)["verdict"] == "holds"
    g = features_frame(0.9, 0.9, logit_offset=0.3)  # networks at 0.2, 0.3, 0.4 stds
    m = features_logits(g)
    assert m.samples == pytest.approx((0.2, 0.3, 0.4)) and m.value == pytest.approx(0.3)
    # one network's means one predicted std off everywhere: its statistic is 1
    lm = g[(g["seed"] == 0) & (g["panel"] == "logit_moments")]
    th = lm[lm["source"] == "theory"].set_index(["true_class", "output"])
    pr = lm[lm["source"] == "practice"].set_index(["true_class", "output"])
    by_hand = ((pr["value"] - th["value"]).abs() / th["std"]).mean()
    assert m.samples[0] == pytest.approx(by_hand)
    row = _fig5_row("C3-logits", features_frame(0.9, 0.9, logit_offset=1.0))
    assert row["verdict"].startswith("does not hold (the opposite is significant")
    assert row["threshold"] == 0.5 and row["effect"] == 0.5
    assert math.isnan(features_logits(g[g["panel"] != "logit_moments"]).value)


def test_features_shape_splits_c3_gap_into_moments_and_shape():
    """A Gaussian with the measured logits' moments reproduces the accuracy of Gaussian logits
    (shape part near 0) but not of skewed logits with the same mean and covariance (a shape
    part of several points); the parts add up to theory − practice; the detail says so and
    states the regime against the paper's p = 512."""
    from softmax_ood.studies.seddik.claims import features_shape
    from softmax_ood.studies.seddik.tests.controls import with_logits

    base = features_frame(0.80, 0.80, k=3, p=4, networks=2)
    gauss = features_shape(with_logits(base, skewed=False))
    skew = features_shape(with_logits(base, skewed=True))
    assert len(gauss) == len(skew) == 2
    assert gauss["shape_part"].abs().max() < 1.0
    assert skew["shape_part"].abs().min() > 2.0
    for t in (gauss, skew):
        assert np.allclose(t["moments_part"] + t["shape_part"], t["theory_acc"] - t["practice_acc"])
    assert abs(gauss["contrast_skew_max"]).max() < 0.2 and skew["contrast_skew_min"].max() < -1
    assert (skew["p"] == 4).all() and (skew["n_fit"] == 5000).all()
    m = features_gap(with_logits(base, skewed=True), 2.0)
    assert "from the logits' non-Gaussian shape" in m.detail
    assert "p = 4, n/p = 1250.0 here vs the paper's p = 512" in m.detail
    # without per-point logits the detail says the split is missing
    assert "not split into moments and shape" in features_gap(base, 2.0).detail


def test_features_gap_interval_and_p_opposite_come_from_the_reported_network():
    """The interval is that of the network whose |gap| is the value; p_opposite is the exact
    one-sided p that some network lies beyond the bar (Bonferroni over networks), filled."""
    f = features_frame(0.90, 0.85, n_points=5000)
    f.loc[(f["seed"] == 1) & (f["source"] == "practice") & (f["split"] == "test"), "value"] = 0.84
    m = features_gap(f, 2.0)
    assert m.value == pytest.approx(6.0)
    lo, hi = (100 * v for v in stats.binomtest(4200, 5000).proportion_ci(0.90, "exact"))
    assert m.interval == pytest.approx((90 - hi, 90 - lo))
    assert "seed 1's (the largest |gap|" in m.detail
    by_hand = 3 * stats.binom.cdf(4200, 5000, 0.88)  # smallest per-network p (seed 1) × 3
    assert m.p_opposite == pytest.approx(min(1.0, by_hand)) and m.p_opposite < 1e-6
    # a match: the opposite is far from significant
    assert features_gap(features_frame(0.90, 0.90), 2.0).p_opposite > 0.5


def test_c3_weights_detail_says_when_the_predicted_fluctuation_is_too_small():
    """r significantly above the exact-theory r (√(1 + n_fit/n_stats) = √2 here) is stated in
    the detail, the verdict stays on the bar; r at the exact-theory value is not flagged."""
    f = features_frame(0.90, 0.90, weight_offset=1.8)  # r 1.7-1.9 per network, bar 2
    m = features_weights(f)
    assert m.value < 2 and "the predicted fluctuation is too small" in m.detail
    assert "within ± 2 predicted SD (84 % expected" in m.detail
    assert _fig5_row("C3-weights", f)["verdict"] == "holds"
    near = features_frame(0.90, 0.90, weight_offset=math.sqrt(2))
    assert "not distinguishable from the exact-theory 1.41" in features_weights(near).detail


# ----------------------------------------------------------------------------- issues 42 and 45


def test_networks_sharing_one_cut_are_one_replicate():
    """Issue 42: five networks on one cut of the pool share its statistics, fit and test
    points; the t-tests over networks count the cut once (the networks' mean), so they have one
    sample where five independently cut networks have five."""
    from softmax_ood.studies.seddik.claims import features_logits, features_weights

    own = features_frame(0.9, 0.9, networks=5)
    one = features_frame(0.9, 0.9, networks=5, shared_cut=True)
    assert len(features_weights(own).samples) == 5 and len(features_logits(own).samples) == 5
    m = features_weights(one)
    assert len(m.samples) == 1 and len(features_logits(one).samples) == 1
    assert m.samples[0] == pytest.approx(m.value)  # the cut's sample is the networks' mean
    assert "unit of replication: the cut of the pool" in m.detail
    # a frame made before the cut column existed had one shared cut
    assert len(features_weights(own.drop(columns="cut")).samples) == 1


def test_fig5_networks_cut_each_network_on_its_own_seed():
    """``cut: per_network`` gives each network another cut (recorded in ``cut``) and the same
    network the same cut; ``shared`` one cut for all."""
    from softmax_ood.studies.seddik.experiments import CUTS, cut_seed, pool_parts

    assert CUTS == ("per_network", "shared")
    seeds = {cut_seed(0, s) for s in range(5)}
    assert len(seeds) == 5 and cut_seed(0, 3) == cut_seed(0, 3) and cut_seed(1, 3) != cut_seed(0, 3)
    groups = np.repeat(["a", "b"], 60)
    a = pool_parts(groups, 1 / 3, cut_seed(0, 0), 1 / 3)
    b = pool_parts(groups, 1 / 3, cut_seed(0, 1), 1 / 3)
    assert (a != b).any() and sorted(a) == sorted(b)


def test_scores_gaussian_passes_gaussian_and_fails_skewed_scores():
    from softmax_ood.studies.seddik.claims import input_far_from_gaussian, scores_gaussian

    good = scores_gaussian(fig3_frame())
    lo, hi = good.interval
    assert -1 < lo and hi < 1 and good.p_value < 0.05 and good.power > 0.99
    assert "D'Agostino–Pearson K²" in good.detail
    bad = scores_gaussian(fig3_frame(skewed=True))
    assert bad.interval[0] > 1 and bad.p_value > 0.5  # skewness 2 = 4 bars
    assert input_far_from_gaussian(fig3_frame()).p_value < 0.05
    assert input_far_from_gaussian(fig3_frame(input_gauss=0.4)).p_value > 0.5
    assert math.isnan(scores_gaussian(None).value)


def test_gauss_distance_reads_skewness_and_kurtosis_in_bar_units():
    from softmax_ood.studies.seddik.experiments import gauss_distance, input_gauss_distance

    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.standard_normal(20000), rng.exponential(1.0, 20000), rng.random(20000), np.ones(20000)]
    )
    d = gauss_distance(X)
    assert d[0] < 0.2  # Gaussian: inside the bars
    assert d[1] == pytest.approx(6.0, rel=0.15)  # exponential: excess kurtosis 6 / bar 1
    assert d[2] == pytest.approx(1.2, rel=0.05)  # uniform: excess kurtosis -1.2 / bar 1
    assert np.isnan(d[3])  # constant column
    value, se = input_gauss_distance(X[:2000, :3])
    assert value == pytest.approx(np.nanmedian(gauss_distance(X[:2000, :3]))) and se > 0


def test_spread_rate_measures_the_slope_and_removes_the_pool_factor():
    from softmax_ood.studies.seddik.claims import spread_rate

    base = accuracy_frame("n", [20, 80, 240], [0.93, 0.95, 0.96], 0.0)
    for rate in (-0.5, -1.0, 0.0):
        m = spread_rate(with_spread(base, rate=rate, pool_n=300))
        assert np.mean(m.samples) == pytest.approx(rate + 0.5, abs=0.05)
        assert len(m.samples) == 5 and "unit of replication: the seed" in m.detail
    assert "slope -0.500 over these n" in spread_rate(with_spread(base)).detail
    assert math.isnan(spread_rate(base).value)  # a frame without w_dev
