"""The shared analysis package: the claims engine's one decision rule, seed summaries, rendering."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import (
    ClaimSpec,
    Measurement,
    evaluate_claims,
    one_sided_t,
    paired,
    render_claims_markdown,
    spearman,
    t_power,
)
from softmax_ood.analysis.render import render_markdown
from softmax_ood.analysis.seeds import cells, summarise


def _judge(specs, ms, alpha=0.05):
    df = evaluate_claims("P", specs, ms, alpha=alpha)
    return df.set_index("claim_id")


def test_a_claim_needs_its_side_and_a_significant_one_sided_test():
    # samples 2, 3, 4 against threshold 1: mean 3, sd 1, t = 2 / (1 / sqrt 3) = 3.464, df 2,
    # one-sided p = 0.03709 (by hand from the t distribution)
    specs = [
        ClaimSpec("a", "t", "s", threshold=1.0, direction=">"),
        ClaimSpec("b", "t", "s", threshold=5.0, direction="<"),
        ClaimSpec("c", "t", "s", threshold=1.0, direction="<"),
    ]
    m = Measurement(3.0, samples=(2.0, 3.0, 4.0))
    # one claim at a time: the rule for one row (a family of one needs no adjustment)
    df = pd.concat([_judge([s], {s.id: m}) for s in specs])
    assert df.loc["a", "p_value"] == pytest.approx(0.03709, abs=1e-4)
    assert df.loc["a", "p_adjusted"] == df.loc["a", "p_value"]
    assert df.loc["a", "verdict"] == "holds" and df.loc["a", "n"] == 3
    assert df.loc["b", "verdict"] == "holds"
    assert df.loc["c", "verdict"] == "does not hold (the opposite is significant, p = 0.037)"
    assert df.loc["c", "p_value"] > 0.9
    assert df.loc["c", "observed"] == "opposite" and df.loc["a", "observed"] == "as claimed"
    assert df.loc["c", "p_opposite"] == pytest.approx(0.03709, abs=1e-4)
    # the same side at alpha = 0.01 is not significant: not evidence either way, and without
    # the paper's effect size there is no power to say "does not hold"
    at_01 = _judge(specs[:1], {"a": m}, alpha=0.01).loc["a", "verdict"]
    assert at_01 == "too few seeds to tell (power n/a)"


def test_the_sign_alone_never_decides_a_claim_or_premise():
    specs = [ClaimSpec("a", "t", "s"), ClaimSpec("p", "t", "s", kind="premise")]
    df = _judge(specs, {"a": Measurement(3.0), "p": Measurement(2.0, samples=(2.0,))})
    assert not df["holds"].any()
    assert (df["verdict"] == "cannot test: no significance test (fewer than 2 samples)").all()
    # a study's own one-sided p is used as given
    assert _judge(specs[:1], {"a": Measurement(3.0, p_value=0.01)}).loc["a", "holds"]
    assert not _judge(specs[:1], {"a": Measurement(3.0, p_value=0.2)}).loc["a", "holds"]


def test_power_separates_does_not_hold_from_too_few_seeds():
    # samples with sd 1 around 0.3 (n = 3): not significant. Paper effect 0.5 at sd 1 with 3
    # seeds: noncentral t power ~0.13, so "too few seeds"; a paper effect of 10 sd: power ~1.
    samples = (-0.7, 0.3, 1.3)
    weak = ClaimSpec("a", "t", "s", effect=0.5)
    strong = ClaimSpec("b", "t", "s", effect=10.0)
    plain = ClaimSpec("c", "t", "s")
    m = Measurement(0.3, samples=samples)
    df = _judge([weak, strong, plain], {"a": m, "b": m, "c": m})
    assert df.loc["a", "power"] == pytest.approx(t_power(0.5, 1.0, 3, 0.05))
    assert df.loc["a", "power"] < 0.2
    assert df.loc["a", "verdict"] == f"too few seeds to tell (power {df.loc['a', 'power']:.2f})"
    assert df.loc["b", "power"] > 0.99 and df.loc["b", "verdict"] == "does not hold"
    assert math.isnan(df.loc["c", "power"])
    assert df.loc["c", "verdict"] == "too few seeds to tell (power n/a)"
    # a premise is a gate: not shown is never "holds", power or not. On the needed side it is
    # "not established"; on the other side "does not hold"; what rests on it cannot be tested
    prem = ClaimSpec("p", "t", "s", kind="premise")
    gated = ClaimSpec("g", "t", "s", requires=("p",))
    df = _judge([prem, gated], {"p": m, "g": Measurement(3.0, p_value=0.001)})
    assert not df.loc["p", "holds"]
    assert df.loc["p", "verdict"] == f"not established (p = {df.loc['p', 'p_value']:.2g})"
    assert df.loc["g", "verdict"] == "cannot test: premise p is not established"
    below = Measurement(-0.3, samples=tuple(-x for x in samples))
    df = _judge([prem, gated], {"p": below, "g": Measurement(3.0, p_value=0.001)})
    assert df.loc["p", "verdict"] == "does not hold"
    assert df.loc["g", "verdict"] == "cannot test: premise p does not hold"
    # a requirement judged as a claim that had too few seeds to tell is not shown either, and
    # what rests on it says so (not "does not hold")
    on_weak = ClaimSpec("h", "t", "s", requires=("a",))
    df = _judge([weak, on_weak], {"a": m, "h": Measurement(3.0, p_value=0.001)})
    assert df.loc["a", "verdict"].startswith("too few seeds to tell")
    assert df.loc["h", "verdict"] == (
        "cannot test: premise a is not established (too few seeds to tell)"
    )


def test_t_power_by_hand():
    from scipy import stats

    # n = 5, d = 1: nc = sqrt 5, critical t(0.95, 4) = 2.1318
    expect = stats.nct.sf(stats.t.ppf(0.95, 4), 4, math.sqrt(5))
    assert t_power(2.0, 2.0, 5, 0.05) == pytest.approx(expect)
    assert expect == pytest.approx(0.5797, abs=1e-3)  # G*Power, one-tailed d = 1, n = 5: 0.5797
    assert math.isnan(t_power(1.0, 1.0, 1, 0.05)) and t_power(1.0, 0.0, 3, 0.05) == 1.0


def test_sanity_rows_are_shown_but_never_support_the_paper():
    specs = [
        ClaimSpec(
            "s", "logits grow linearly along a ray", "slope ratio", threshold=0.9, kind="sanity"
        ),
        ClaimSpec("t", "t", "s", kind="sanity", threshold=2.0),
    ]
    df = _judge(specs, {"s": Measurement(1.0), "t": Measurement(1.0)})
    assert df.loc["s", "verdict"] == "sanity check passes" and df.loc["s", "holds"]
    assert not df["supports"].any()
    assert df.loc["t", "verdict"] == "sanity check fails"
    assert math.isnan(df.loc["s", "p_value"])


def test_failed_premise_makes_claims_untestable_and_comes_first():
    specs = [
        ClaimSpec("claim", "t", "s", requires=("p",)),
        ClaimSpec("p", "baseline overconfident", "T", threshold=1.0, premise=True),
    ]
    good = Measurement(5.0, samples=(4.0, 5.0, 6.0))
    df = evaluate_claims(
        "P", specs, {"claim": good, "p": Measurement(0.5, samples=(0.4, 0.5, 0.6))}, alpha=0.05
    )
    assert list(df["claim_id"]) == ["p", "claim"] and list(df["kind"]) == ["premise", "claim"]
    r = df.set_index("claim_id").loc["claim"]
    assert not r["holds"] and r["verdict"] == "cannot test: premise p does not hold"
    ok = evaluate_claims(
        "P", specs, {"claim": good, "p": Measurement(1.5, samples=(1.4, 1.5, 1.6))}, alpha=0.05
    )
    ok = ok.set_index("claim_id")
    assert ok.loc["claim", "verdict"] == "holds" and ok.loc["claim", "supports"]
    assert not ok.loc["p", "supports"]


def test_all_of_and_errors():
    specs = [ClaimSpec("h", "t", "s", all_of=("x",)), ClaimSpec("x", "t", "s")]
    up, down = (
        Measurement(1.0, samples=(1.0, 1.1, 0.9)),
        Measurement(-1.0, samples=(-1, -1.1, -0.9)),
    )
    df = _judge(specs, {"h": up, "x": down})
    assert not df.loc["h", "holds"] and "a part it needs" in df.loc["h", "verdict"]
    assert _judge(specs, {"h": up, "x": up}).loc["h", "verdict"] == "holds"
    with pytest.raises(ValueError, match="no measurement"):
        evaluate_claims("P", specs, {"h": Measurement(1.0)}, alpha=0.05)
    with pytest.raises(ValueError, match="direction"):
        ClaimSpec("z", "t", "s", direction="!=")
    with pytest.raises(ValueError, match="kind"):
        ClaimSpec("z", "t", "s", kind="belief")


def test_one_sided_t_by_hand():
    assert one_sided_t((2.0, 3.0, 4.0), 1.0, ">") == pytest.approx(0.03709, abs=1e-4)
    assert one_sided_t((2.0, 3.0, 4.0), 1.0, "<") == pytest.approx(1 - 0.03709, abs=1e-4)
    # no spread: the exact sign test, 0.5 ** n; a sample on the threshold is not on the side
    assert one_sided_t((2.0, 2.0), 1.0, ">") == 0.25 and one_sided_t((2.0, 2.0), 3.0, ">") == 1.0
    assert one_sided_t((1.0,) * 5, 1.0, ">=") == 1.0 and one_sided_t((0.5,) * 5, 1.0, "<") == 0.5**5
    assert math.isnan(one_sided_t((2.0,), 1.0, ">"))


def test_paired_by_hand():
    a = pd.Series([3.0, 4.0, 5.0], index=[0, 1, 2])
    b = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])  # constant difference 2
    m = paired(a, b)
    assert m.value == 2.0 and m.samples == (2.0, 2.0, 2.0) and m.n == 3
    spec = [ClaimSpec("a", "t", "s")]
    assert _judge(spec, {"a": m}).loc["a", "p_value"] == 0.125  # sign test, 3 seeds
    assert _judge(spec, {"a": paired(b, a)}).loc["a", "p_value"] == 1.0
    one = paired(a.iloc[:1], b)  # only seed 0 is common
    assert one.n == 1 and "cannot test" in _judge(spec, {"a": one}).loc["a", "verdict"]
    c = pd.Series([3.0, 5.0, 4.0], index=[0, 1, 2])
    m = paired(c, b)  # differences 2, 3, 1: mean 2, sd 1, t = 2 / (1/sqrt 3) = 3.464, df 2
    assert m.value == pytest.approx(2.0)
    assert _judge(spec, {"a": m}).loc["a", "p_value"] == pytest.approx(0.03709, abs=1e-4)
    with pytest.raises(ValueError):
        paired(a, pd.Series([1.0], index=[9]))


def test_spearman_is_one_sided_in_the_claimed_direction():
    m = spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], alternative="less")
    assert m.value == pytest.approx(-1.0) and m.n == 5 and m.p_value < 0.05
    up = spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], alternative="greater")
    assert up.p_value > 0.95
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]).value)
    spec = ClaimSpec("r", "falls", "rho", direction="<", effect=-0.9)
    df = _judge([spec], {"r": m})
    assert df.loc["r", "verdict"] == "holds" and 0 < df.loc["r", "power"] < 1


def test_summarise_and_cells_by_hand():
    assert summarise(pd.Series([1.0, 2.0, 3.0])) == (2.0, 1.0, 3)
    mean, std, n = summarise(pd.Series([4.0]))
    assert mean == 4.0 and math.isnan(std) and n == 1
    c = cells({"x": pd.Series([1.0, 3.0], index=[0, 1])})
    assert c == {"x_mean": 2.0, "x_std": pytest.approx(math.sqrt(2)), "n_seeds": 2}


def test_render_markdown_and_claims_markdown():
    df = pd.DataFrame({"row": ["a|b"], "x_mean": [1.234], "x_std": [0.5], "n_seeds": [3]})
    md = render_markdown(df, "T", labels={"x": "X (%)"})
    assert "| a\\|b | 1.23 ± 0.50 | 3 |" in md and "X (%)" in md
    claims = evaluate_claims(
        "P", [ClaimSpec("a", "t|u", "s")], {"a": Measurement(1.0, samples=(1, 2))}, alpha=0.05
    )
    md = render_claims_markdown(claims)
    assert "t\\|u" in md and "| p | p adj. | n | power |" in md


def test_an_undefined_statistic_cannot_be_tested_and_neither_can_what_rests_on_it():
    specs = [
        ClaimSpec(
            "p", "accuracy falls with the level", "rho", threshold=0.0, direction="<", premise=True
        ),
        ClaimSpec("c", "reward beats classification", "diff", requires=("p",)),
        ClaimSpec("d", "a trend", "rho", threshold=0.0, direction="<"),
    ]
    ms = {"p": Measurement(math.nan), "c": Measurement(2.0), "d": Measurement(math.nan)}
    df = evaluate_claims("P", specs, ms, alpha=0.05).set_index("claim_id")
    assert df.loc["p", "verdict"] == "cannot test: the statistic is undefined (see detail)"
    assert df.loc["d", "verdict"] == "cannot test: the statistic is undefined (see detail)"
    assert df.loc["c", "verdict"] == "cannot test: premise p could not be evaluated"
    assert not df["holds"].any()


def test_one_palette_and_marker_set_for_every_role():
    from softmax_ood.analysis.style import MARKERS, ROLES, color_of, marker_of

    assert set(ROLES) == set(MARKERS)
    assert color_of("ce") != color_of("logitnorm") and color_of("ce") == color_of("single")
    assert marker_of("ocs") == ""
    with pytest.raises(ValueError, match="no colour"):
        color_of("unknown")


def test_a_significant_opposite_is_not_too_few_seeds():
    # far below the bar with little spread: low power for a tiny paper effect, but the data
    # speak against the claim (BBB's certainty 0.89 against 0.99 in the Ulmer study)
    spec = ClaimSpec("c", "certain", "mean max prob", threshold=0.99, effect=0.001)
    m = Measurement(0.89, samples=(0.88, 0.89, 0.90, 0.885, 0.895))
    row = _judge([spec], {"c": m}).loc["c"]
    assert row["power"] < 0.8
    assert row["verdict"].startswith("does not hold (the opposite is significant, p = ")
    near = Measurement(0.985, samples=(0.97, 0.995, 0.99, 0.98, 0.99))
    assert _judge([spec], {"c": near}).loc["c", "verdict"].startswith("too few seeds to tell")


def test_a_study_p_has_its_opposite_and_a_rank_correlation_tests_against_zero_only():
    spec = ClaimSpec("c", "t", "s", effect=5.0)
    # a study's own one-sided p of 0.99: the opposite (0.01) is significant
    m = Measurement(-10.0, p_value=0.99, n=5, power=0.3)
    assert (
        _judge([spec], {"c": m})
        .loc["c", "verdict"]
        .startswith("does not hold (the opposite is significant")
    )
    given = Measurement(-10.0, p_value=0.99, n=5, power=0.3, p_opposite=0.2)
    assert _judge([spec], {"c": given}).loc["c", "verdict"] == (
        "too few seeds to tell (power 0.30; estimate in the opposite direction, p_opp = 0.2)"
    )
    rho = spearman([1, 2, 3, 4, 5], [1, 2, 3, 5, 4], alternative="greater")
    with pytest.raises(ValueError, match="against 0"):
        _judge([ClaimSpec("r", "t", "rho", threshold=0.5)], {"r": rho})


@pytest.mark.parametrize("margin,sd,n", [(2.0, 2.0, 5), (1.0, 1.5, 10), (0.5, 1.0, 20)])
def test_tost_power_matches_a_simulation_and_is_below_the_one_sided_power(margin, sd, n):
    """TOST power = P(both one-sided t-tests reject) at true difference 0, by simulation."""
    from scipy import stats

    from softmax_ood.analysis.claims import t_power, tost_power

    rng = np.random.default_rng(0)
    x = rng.normal(0.0, sd, (100_000, n))
    m, se = x.mean(1), x.std(1, ddof=1) / np.sqrt(n)
    crit = stats.t.ppf(0.95, n - 1)
    simulated = np.mean(((m + margin) / se > crit) & ((margin - m) / se > crit))
    power = tost_power(margin, sd, n, 0.05)
    assert abs(power - simulated) < 0.01
    assert power < t_power(margin, sd, n, 0.05)


def test_tost_power_edge_cases():
    from softmax_ood.analysis.claims import tost_power

    assert tost_power(2.0, 0.0, 5, 0.05) == 1.0  # no spread, inside the margin
    assert tost_power(2.0, 0.0, 5, 0.05, true_diff=3.0) == 0.0
    assert np.isnan(tost_power(2.0, 1.0, 1, 0.05))
    assert tost_power(2.0, 1.0, 5, 0.05, true_diff=1.5) < tost_power(2.0, 1.0, 5, 0.05)


# --------------------------------------------------------------- issue 25: what the evidence says


def test_a_failed_premise_never_hides_a_significant_opposite_result():
    """LogitNorm's case: the premise fails, and the claim's opposite is significant: the row
    still cannot test the paper's claim, but says what the data show."""
    specs = [
        ClaimSpec("claim", "A beats B", "A − B", requires=("p",)),
        ClaimSpec("p", "premise", "T", threshold=1.0, kind="premise"),
    ]
    worse = Measurement(-17.0, samples=(-15.0, -17.0, -19.0, -16.0, -18.0))
    failed = Measurement(0.5, samples=(0.4, 0.5, 0.6))
    r = _judge(specs, {"claim": worse, "p": failed}).loc["claim"]
    p_opp = one_sided_t(worse.samples, 0.0, "<")
    assert p_opp < 1e-4 and r["p_opposite"] == pytest.approx(p_opp)
    assert r["observed"] == "opposite" and not r["holds"] and not r["supports"]
    assert r["verdict"] == (
        "cannot test as the paper's claim (premise p does not hold) — here the opposite is "
        f"significant (p = {p_opp:.2g})"
    )
    # not significant the other way: the plain gate
    flat = Measurement(-0.1, samples=(1.0, -1.0, -0.3))
    plain = _judge(specs, {"claim": flat, "p": failed}).loc["claim", "verdict"]
    assert plain == "cannot test: premise p does not hold"


def test_equivalence_holds_does_not_hold_and_not_established():
    """Seddik C2's case: 1.84 ± 0.27 with 90 % interval [1.26, 2.42] against a 2-point bar is
    borderline: "not established", not "does not hold"."""
    from softmax_ood.analysis.claims import t_interval, tost_power

    spec = ClaimSpec(
        "e", "within the bar", "gap", threshold=2.0, direction="<", test="equivalence", effect=0.0
    )
    inside = Measurement(0.1, samples=(0.0, 0.2, -0.1, 0.3, 0.1))
    straddle = Measurement(1.84, samples=(1.5, 1.7, 1.84, 2.0, 2.16))
    outside = Measurement(-5.0, samples=(-4.9, -5.1, -5.0, -4.8, -5.2))
    df = _judge([spec], {"e": inside})
    assert df.loc["e", "verdict"] == "holds" and df.loc["e", "test"] == "equivalence"
    assert df.loc["e", "power"] == pytest.approx(
        tost_power(2.0, np.std(inside.samples, ddof=1), 5, 0.05)
    )
    lo, hi = t_interval(straddle.samples, 0.05)
    assert lo < 2.0 < hi
    v = _judge([spec], {"e": straddle}).loc["e"]
    assert v["verdict"] == f"not established (interval [{lo:.3g}, {hi:.3g}] straddles the bar)"
    assert v["observed"] == "as claimed" and not v["holds"]
    w = _judge([spec], {"e": outside}).loc["e"]
    assert w["verdict"].startswith("does not hold (interval [") and w["observed"] == "opposite"
    assert w["p_opposite"] < 0.05
    # the TOST p is the larger of the two one-sided p's
    assert v["p_value"] == pytest.approx(
        max(one_sided_t(straddle.samples, -2.0, ">"), one_sided_t(straddle.samples, 2.0, "<"))
    )
    # a study's own interval (e.g. exact binomial): inside, outside, straddling
    for interval, start in (
        ((-1.0, 1.5), "holds"),
        ((2.5, 3.0), "does not hold"),
        ((1.0, 2.5), "not established"),
    ):
        m = Measurement(sum(interval) / 2, interval=interval, p_value=0.01)
        assert _judge([spec], {"e": m}).loc["e", "verdict"].startswith(start), interval
    with pytest.raises(ValueError, match="equivalence"):
        ClaimSpec("z", "t", "s", threshold=0.0, direction="<", test="equivalence")
    with pytest.raises(ValueError, match="test"):
        ClaimSpec("z", "t", "s", test="two-sided")


def test_equivalence_power_is_the_tost_power_at_the_stated_true_difference():
    """LogitNorm C2's case: power of the equivalence test at the observed spread, computed for
    a stated true difference (not as if the gap were 0 for free); lower as that difference nears
    the bar."""
    from softmax_ood.analysis.claims import tost_power

    samples = (0.3, 0.9, 0.5, 0.4, 0.7)
    at0 = ClaimSpec("a", "t", "s", threshold=1.0, direction="<", test="equivalence", effect=0.0)
    at05 = ClaimSpec("b", "t", "s", threshold=1.0, direction="<", test="equivalence", effect=0.5)
    m = Measurement(0.56, samples=samples)
    df = _judge([at0, at05], {"a": m, "b": m})
    sd = float(np.std(samples, ddof=1))
    assert df.loc["a", "power"] == pytest.approx(tost_power(1.0, sd, 5, 0.05, 0.0))
    assert df.loc["b", "power"] == pytest.approx(tost_power(1.0, sd, 5, 0.05, 0.5))
    assert df.loc["b", "power"] < df.loc["a", "power"]
    # simulation agrees with the integral at true difference 0.5
    rng = np.random.default_rng(0)
    x = rng.normal(0.5, sd, size=(20000, 5))
    from scipy import stats

    half = stats.t.ppf(0.95, 4) * x.std(axis=1, ddof=1) / math.sqrt(5)
    sim = np.mean((x.mean(axis=1) - half > -1.0) & (x.mean(axis=1) + half < 1.0))
    assert df.loc["b", "power"] == pytest.approx(sim, abs=0.02)


def test_exact_spearman_p_at_small_n():
    """Issue 25's cases: n = 4, rho = 1 -> p = 1/24; n = 4, rho = 0.8 -> p = 4/24."""
    from softmax_ood.analysis.claims import spearman_exact_p

    one = spearman([1, 2, 3, 4], [10, 20, 30, 40])
    assert one.value == pytest.approx(1.0) and one.p_value == pytest.approx(1 / 24)
    assert one.p_value == pytest.approx(0.0417, abs=1e-4)
    assert one.p_opposite == pytest.approx(1.0)
    eight = spearman([1, 2, 3, 4], [2, 1, 3, 4])
    assert eight.value == pytest.approx(0.8) and eight.p_value == pytest.approx(4 / 24)
    down = spearman([1, 2, 3, 4], [4, 3, 2, 1], alternative="less")
    assert down.p_value == pytest.approx(1 / 24)
    # n = 5, rho = 1: 1/120; ties use average ranks and still enumerate
    assert spearman_exact_p(range(5), range(5)) == pytest.approx(1 / 120)
    assert 0 < spearman_exact_p([1, 2, 2, 3], [1, 2, 3, 4]) < 1
    # the engine uses the exact p: n = 4, rho = 1 is not significant at 0.01
    spec = ClaimSpec("r", "rises", "rho", threshold=0.0, direction=">")
    assert _judge([spec], {"r": one}, alpha=0.05).loc["r", "verdict"] == "holds"
    assert not _judge([spec], {"r": one}, alpha=0.01).loc["r", "holds"]


def test_exact_sign_test():
    """The sign test is exact binomial: 5 of 5 above -> 1/32; 4 of 5 -> 6/32; ties dropped."""
    from softmax_ood.analysis.claims import sign_test

    assert sign_test((1, 2, 3, 4, 5), 0.0, ">") == pytest.approx(1 / 32)
    assert sign_test((1, 2, 3, 4, -5), 0.0, ">") == pytest.approx(6 / 32)
    assert sign_test((1, 2, 3, 4, 0), 0.0, ">") == pytest.approx(1 / 16)
    assert sign_test((1, 2, 3, 4, 5), 0.0, "<") == pytest.approx(1.0)
    spec = ClaimSpec("s", "above", "x", threshold=0.0, direction=">")
    m = Measurement(3.0, samples=(1, 2, 3, 4, 5), method="sign")
    r = _judge([spec], {"s": m}).loc["s"]
    assert r["p_value"] == pytest.approx(1 / 32) and r["p_opposite"] == pytest.approx(1.0)


def test_selection_and_confirmation_are_columns_and_shown():
    spec = ClaimSpec(
        "c",
        "t",
        "s",
        selection="selection seeds 100-102",
        confirmation="seeds 0-4 × test images",
    )
    df = _judge([spec], {"c": Measurement(1.0, samples=(1.0, 1.1, 0.9))})
    assert df.loc["c", "selection"] == "selection seeds 100-102"
    assert df.loc["c", "confirmation"] == "seeds 0-4 × test images"
    md = render_claims_markdown(df.reset_index())
    assert "settings chosen on: selection seeds 100-102" in md and "as claimed (p opp." in md


def test_the_papers_own_number_is_a_column_nan_unless_given():
    """A claim whose effect is a power target of its own carries the paper's number apart."""
    specs = [
        ClaimSpec("a", "t", "s", effect=33.3, paper_value=68.4),
        ClaimSpec("b", "t", "s", effect=2.0),
    ]
    m = Measurement(1.0, samples=(1.0, 1.1, 0.9))
    df = _judge(specs, {"a": m, "b": m})
    assert df.loc["a", "paper_value"] == 68.4 and df.loc["a", "effect"] == 33.3
    assert np.isnan(df.loc["b", "paper_value"])


def test_selection_is_made_on_selection_data_and_confirmation_cannot_move_it():
    """Issue 25: perturbing only confirmation outputs changes no selection."""
    from softmax_ood.analysis.claims import one_sided_t
    from softmax_ood.analysis.selection import Selection, seeds_text, select, split_seeds

    sel_seeds, conf_seeds = split_seeds([4, 0, 1, 2, 3, 5, 6, 7], 3)
    assert sel_seeds == [0, 1, 2] and conf_seeds == [3, 4, 5, 6, 7]
    assert not set(sel_seeds) & set(conf_seeds)
    with pytest.raises(ValueError, match="confirmation"):
        split_seeds([0, 1], 2)
    assert seeds_text(conf_seeds) == "seeds 3-7" and seeds_text([0, 2]) == "seeds 0, 2"
    rng = np.random.default_rng(0)
    # per seed, a statistic's change from K to 2K for each candidate K (shrinking with K)
    outputs = {
        seed: {k: float(rng.normal(0.2 / k, 0.0003)) for k in (20, 40, 80, 160)}
        for seed in sel_seeds + conf_seeds
    }

    def stable(k, data):  # the K-vs-2K change is below 0.004, significantly (one-sided t)
        return one_sided_t([data[s][k] for s in data], 0.004, "<") < 0.05

    def choose(outs):
        return select(
            "n_members",
            (20, 40, 80, 160),
            stable,
            {s: outs[s] for s in sel_seeds},  # the selection seeds' outputs only
            on=f"selection {seeds_text(sel_seeds)}",
            rule="smallest K whose change is significantly below 0.004",
        )

    before = choose(outputs)
    assert isinstance(before, Selection) and before.chosen == 80
    perturbed = {
        s: ({k: v + 10.0 * rng.normal() for k, v in o.items()} if s in conf_seeds else o)
        for s, o in outputs.items()
    }
    assert choose(perturbed) == before
    assert before.selection_text().startswith("n_members = 80 chosen on selection seeds 0-2")
    # the row that the choice feeds says so
    spec = ClaimSpec(
        "c",
        "t",
        "s",
        selection=before.selection_text(),
        confirmation=f"confirmation {seeds_text(conf_seeds)}",
    )
    assert spec.selection.startswith("n_members = 80")


def _t_samples(p: float, n: int = 5) -> tuple[float, ...]:
    """``n`` samples whose one-sided t-test against 0 (alternative > 0) gives exactly ``p``."""
    from scipy import stats

    base = np.linspace(-1.0, 1.0, n)
    base = base / base.std(ddof=1)  # mean 0, sd 1
    return tuple(base + float(stats.t.isf(p, n - 1)) / math.sqrt(n))


def _at_p(p: float) -> Measurement:
    x = _t_samples(p)
    return Measurement(float(np.mean(x)), samples=x)


def test_bh_and_holm_by_hand():
    from softmax_ood.analysis.claims import bh_adjust, holm_adjust

    p = [0.01, 0.04, 0.03, 0.20]
    # BH: sorted 0.01, 0.03, 0.04, 0.20 -> 0.04, 0.06, 0.0533, 0.20; step-up min from the top
    assert bh_adjust(p) == pytest.approx([0.04, 0.05333, 0.05333, 0.20], abs=1e-4)
    # Holm: 4 x 0.01, 3 x 0.03, 2 x 0.04, 1 x 0.20, running max
    assert holm_adjust(p) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert len(bh_adjust([])) == 0 and holm_adjust([0.7, 0.7]) == pytest.approx([1.0, 1.0])


def test_a_chance_pass_is_caught_by_the_family_adjustment():
    """The control frame of issue 42: five claims of one paper, one at raw p = 0.04 and the
    others null-like. Alone the 0.04 "holds"; in its family (BH over the five) it does not,
    and its verdict says why; a strong claim in the same family still holds."""
    specs = [ClaimSpec(f"c{i}", "t", "s", effect=0.1) for i in range(5)]
    ps = {"c0": 0.04, "c1": 0.0001, "c2": 0.45, "c3": 0.62, "c4": 0.81}
    ms = {cid: _at_p(p) for cid, p in ps.items()}
    for cid, m in ms.items():
        assert one_sided_t(m.samples, 0.0, ">") == pytest.approx(ps[cid], rel=1e-6)
    alone = _judge(specs[:1], {"c0": ms["c0"]})
    assert alone.loc["c0", "verdict"] == "holds"
    df = _judge(specs, ms)
    assert df.loc["c0", "p_value"] == pytest.approx(0.04)
    assert df.loc["c0", "p_adjusted"] == pytest.approx(0.04 * 5 / 2)  # rank 2 of 5
    assert not df.loc["c0", "holds"]
    assert df.loc["c0", "verdict"].startswith("too few seeds to tell (power ")
    assert "p = 0.04 alone, 0.1 after the family adjustment" in df.loc["c0", "verdict"]
    assert df.loc["c1", "verdict"] == "holds"
    assert df.loc["c1", "p_adjusted"] == pytest.approx(0.0005)
    assert df["adjustment"].str.startswith("Benjamini–Hochberg over the 5 tested claims").all()


def test_the_family_is_the_tested_claims_and_headline_rows_get_holm_too():
    """Premises, sanity rows and claims a failed premise leaves untested are outside the family
    (p_adjusted NaN); headline rows also get Holm's p over the headline rows, and a headline row
    that holds on BH but not on Holm says so (still "holds": BH decides)."""
    specs = [
        ClaimSpec("p", "t", "s", kind="premise"),
        ClaimSpec("bad", "t", "s", kind="premise"),
        ClaimSpec("h1", "t", "s", requires=("p",)),
        ClaimSpec("h2", "t", "s"),
        ClaimSpec("x", "t", "s"),
        ClaimSpec("gated", "t", "s", requires=("bad",)),
        ClaimSpec("s", "t", "s", kind="sanity"),
    ]
    ps = {"p": 0.001, "bad": 0.6, "h1": 0.03, "h2": 0.03, "x": 0.03, "gated": 0.001, "s": 0.5}
    ms = {cid: _at_p(p) for cid, p in ps.items()}
    df = evaluate_claims("P", specs, ms, alpha=0.05, headline=("h*",)).set_index("claim_id")
    assert df.loc[["p", "bad", "gated", "s"], "p_adjusted"].isna().all()
    assert df.loc[["p", "bad", "gated", "s", "x"], "p_holm"].isna().all()
    # BH over h1, h2, x (all 0.03): 0.03 each; Holm over h1, h2: 2 x 0.03 = 0.06
    assert df.loc[["h1", "h2", "x"], "p_adjusted"].to_numpy() == pytest.approx([0.03] * 3)
    assert df.loc["h1", "p_holm"] == pytest.approx(0.06)
    assert "Holm over the 2 tested headline claims" in df.loc["h1", "adjustment"]
    assert "Holm" not in df.loc["x", "adjustment"]
    assert df.loc["x", "verdict"] == "holds"
    assert df.loc["h1", "holds"]
    assert df.loc["h1", "verdict"] == "holds (not after Holm over the headline claims: p = 0.06)"


def test_a_borderline_premise_is_marked_and_so_is_what_rests_on_it():
    """Issue 42: a premise that clears its bar with p in [0.01, 0.05) reads "borderline", and
    every row resting on it (directly, or through an all_of part) carries the mark."""
    specs = [
        ClaimSpec("thin", "t", "s", kind="premise"),
        ClaimSpec("firm", "t", "s", kind="premise"),
        ClaimSpec("part", "t", "s", requires=("thin",)),
        ClaimSpec("head", "t", "s", all_of=("part",), requires=("firm",)),
        ClaimSpec("other", "t", "s", requires=("firm",)),
        ClaimSpec("sane", "t", "s", kind="sanity", requires=("thin",)),
    ]
    ps = {"thin": 0.047, "firm": 0.001, "part": 0.001, "head": 0.001, "other": 0.002, "sane": 0.5}
    df = _judge(specs, {cid: _at_p(p) for cid, p in ps.items()})
    assert df.loc["thin", "verdict"] == "holds (borderline, p = 0.047)" and df.loc["thin", "holds"]
    assert df.loc["firm", "verdict"] == "holds" and df.loc["firm", "borderline"] == ""
    for cid in ("part", "head"):
        assert df.loc[cid, "holds"] and df.loc[cid, "borderline"] == "thin"
        assert df.loc[cid, "verdict"] == "holds — rests on the borderline premise thin (p = 0.047)"
    assert df.loc["other", "verdict"] == "holds" and df.loc["other", "borderline"] == ""
    # a sanity row (true by construction) keeps its words; the column still names the premise
    assert df.loc["sane", "verdict"] == "sanity check passes"
    assert df.loc["sane", "borderline"] == "thin"
    # p = 0.009 is not borderline
    ps["thin"] = 0.009
    firm = _judge(specs, {cid: _at_p(p) for cid, p in ps.items()})
    assert firm.loc["thin", "verdict"] == "holds" and (firm["borderline"] == "").all()


def test_too_few_seeds_says_when_the_estimate_is_on_the_other_side():
    """Issue 42: "too few seeds to tell" hid opposite-signed estimates (C3-energy -8.1 pp)."""
    specs = [ClaimSpec("c", "t", "s", effect=1.0)]
    down = Measurement(-1.0, samples=(-3.0, 2.0, -2.0, 1.0, -3.0))
    df = _judge(specs, {"c": down})
    p_opp = df.loc["c", "p_opposite"]
    assert 0.05 < p_opp < 0.5 and df.loc["c", "observed"] == "opposite"
    assert df.loc["c", "verdict"] == (
        f"too few seeds to tell (power {df.loc['c', 'power']:.2f}; estimate in the opposite "
        f"direction, p_opp = {p_opp:.2g})"
    )
    up = Measurement(1.0, samples=(3.0, -2.0, 2.0, -1.0, 3.0))
    assert _judge(specs, {"c": up}).loc["c", "verdict"].startswith("too few seeds to tell (power")
    assert "opposite" not in _judge(specs, {"c": up}).loc["c", "verdict"]


def test_cannot_test_says_what_a_powered_null_measured():
    """Issue 42: C1-near's "cannot test" hid a measured no-gain at power 1.0."""
    specs = [
        ClaimSpec("p", "t", "s", kind="premise"),
        ClaimSpec("c", "t", "s", effect=50.0, requires=("p",)),
        ClaimSpec("weak", "t", "s", effect=0.01, requires=("p",)),
    ]
    null = Measurement(0.2, samples=(1.0, -1.0, 0.5, -0.5, 1.0))
    prem = Measurement(0.1, samples=(1.0, -1.0, 0.5, -0.5, 0.5))  # on the side, not significant
    df = _judge(specs, {"p": prem, "c": null, "weak": null})
    assert df.loc["c", "power"] > 0.99
    sd = float(np.std(null.samples, ddof=1))
    assert df.loc["c", "verdict"] == (
        f"cannot test: premise p is not established; measured 0.2 ± {sd:.3g} (sd over 5) at "
        f"power {df.loc['c', 'power']:.2f}"
    )
    assert df.loc["weak", "verdict"] == "cannot test: premise p is not established"
    se = Measurement(1.5, p_value=0.3, n=5, power=1.0, se=2.4)
    assert _judge(specs[:2], {"p": prem, "c": se}).loc["c", "verdict"] == (
        "cannot test: premise p is not established; measured 1.5 ± 2.4 (SE) at power 1.00"
    )


def test_power_is_computed_at_an_attainable_effect_and_says_which():
    """Issue 42: a paper's effect larger than the baseline can lose (C3-odin: 27.37 pp against
    CE's own ODIN FPR95 of 22.5 %) is capped there; the row says which effect it used."""
    spec = ClaimSpec("c", "t", "s", effect=27.37)
    x = (2.0, -17.0, 19.0, 24.0, -18.0)  # power 0.82 at 27.37, 0.68 at 22.5
    sd = float(np.std(x, ddof=1))
    free = _judge([spec], {"c": Measurement(2.0, samples=x)}).loc["c"]
    assert free["verdict"] == "does not hold" and free["power"] > 0.8
    assert free["effect_used"] == pytest.approx(27.37)
    assert free["effect_note"] == "27.37: the paper's effect"
    assert free["power"] == pytest.approx(t_power(27.37, sd, 5, 0.05))
    capped = Measurement(2.0, samples=x, effect_cap=22.5, effect_cap_why="CE's own ODIN FPR95")
    row = _judge([spec], {"c": capped}).loc["c"]
    assert row["effect_used"] == pytest.approx(22.5)
    assert row["power"] == pytest.approx(t_power(22.5, sd, 5, 0.05)) and row["power"] < 0.8
    assert row["effect_note"] == (
        "22.5: capped at CE's own ODIN FPR95 (the paper's effect, 27.37, is more than it can lose)"
    )
    assert row["verdict"] == f"too few seeds to tell (power {row['power']:.2f})"
    # a study's own test: the engine calls its power function at the capped effect
    seen = []
    own = Measurement(
        2.0,
        p_value=0.3,
        n=5,
        power=0.99,
        effect_cap=22.5,
        power_at=lambda e, a: seen.append(e) or 0.4,
    )
    assert _judge([spec], {"c": own}).loc["c", "power"] == pytest.approx(0.4) and seen == [22.5]
    with pytest.raises(ValueError, match="no power_at"):
        _judge([spec], {"c": Measurement(2.0, p_value=0.3, n=5, power=0.99, effect_cap=22.5)})
    # a cap above the effect changes nothing; a row without an effect has none
    assert (
        _judge([spec], {"c": Measurement(2.0, samples=x, effect_cap=40.0)}).loc["c", "effect_note"]
        == "27.37: the paper's effect"
    )
    bare = _judge([ClaimSpec("c", "t", "s")], {"c": Measurement(2.0, samples=x)}).loc["c"]
    assert math.isnan(bare["effect_used"]) and bare["effect_note"] == ""


def test_a_claim_with_the_papers_number_is_tested_against_it_too():
    """Issue 42: LogitNorm's "holds" tested only "> 0"; the paper's 68.4 % lay outside our
    interval and no row said so. A claim declaring paper_value gets a two-sided test of ours
    against it, in words, beside a verdict it never changes."""
    spec = ClaimSpec("c", "t", "s", paper_value=68.4)
    x = (40.0, 45.0, 50.0, 42.0, 48.0)  # mean 45, far below 68.4, far above 0
    row = _judge([spec], {"c": Measurement(45.0, samples=x)}).loc["c"]
    p_lo = one_sided_t(x, 68.4, "<")
    assert row["verdict"] == "holds" and row["p_paper"] == pytest.approx(2 * p_lo)
    assert row["vs_paper"] == f"smaller than the paper's 68.4 (two-sided p = {2 * p_lo:.2g})"
    near = (60.0, 75.0, 68.0, 72.0, 66.0)
    assert (
        _judge([spec], {"c": Measurement(68.2, samples=near)})
        .loc["c", "vs_paper"]
        .startswith("consistent with the paper's 68.4 (two-sided p = ")
    )
    high = tuple(v + 40.0 for v in near)
    assert (
        _judge([spec], {"c": Measurement(108.2, samples=high)})
        .loc["c", "vs_paper"]
        .startswith("larger than the paper's 68.4")
    )
    # a study's own test against any value (p_at), and no paper value: no test
    own = Measurement(45.0, p_value=0.001, n=5, p_at=lambda v, side: 0.01 if side == "<" else 0.99)
    assert _judge([spec], {"c": own}).loc["c", "p_paper"] == pytest.approx(0.02)
    bare = _judge([ClaimSpec("c", "t", "s")], {"c": Measurement(45.0, samples=x)}).loc["c"]
    assert math.isnan(bare["p_paper"]) and bare["vs_paper"] == ""


def test_a_premise_at_its_tests_smallest_p_is_not_borderline():
    """Five seeds all on the side, without spread, give the sign test's floor 1/32 = 0.031: the
    most five seeds can show, not a pass by a hair (Ulmer's K premises)."""
    specs = [
        ClaimSpec("k", "t", "s", threshold=1.0, direction="<", kind="premise"),
        ClaimSpec("c", "t", "s", requires=("k",)),
    ]
    df = _judge(specs, {"k": Measurement(0.0, samples=(0.0,) * 5), "c": _at_p(0.001)})
    assert df.loc["k", "p_value"] == pytest.approx(1 / 32)
    assert df.loc["k", "verdict"] == "holds" and df.loc["c", "verdict"] == "holds"
    assert (df["borderline"] == "").all()


def test_judge_measures_each_claim_on_the_evidence_in_order_and_judges_them_as_one_family():
    from functools import partial

    from softmax_ood.analysis.claims import Claim, judge

    seen = []

    def mean_of(ev, key):
        seen.append(key)
        return Measurement(float(np.mean(ev[key])), samples=tuple(ev[key]))

    evidence = {"a": (2.0, 3.0, 4.0), "b": (-1.0, 0.5, 1.0)}
    claims = [
        Claim(ClaimSpec("A", "t", "s", threshold=1.0, direction=">"), partial(mean_of, key="a")),
        Claim(ClaimSpec("B", "t", "s", threshold=0.0, direction=">"), partial(mean_of, key="b")),
    ]
    out = judge("P", claims, evidence, alpha=0.05).set_index("claim_id")
    assert seen == ["a", "b"]
    ms = {"A": mean_of(evidence, "a"), "B": mean_of(evidence, "b")}
    pd.testing.assert_frame_equal(out, _judge([c.spec for c in claims], ms))
    assert claims[0].id == "A"
