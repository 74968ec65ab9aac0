"""The LogitNorm claims table on synthetic studies whose answers are known by construction."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from conftest_study import make_spec, make_study
from scipy import stats

from softmax_ood.claims import (
    CLAIM_SETS,
    COLUMNS,
    Claim,
    claims_frame,
    evaluate_logitnorm_claims,
    paired_greater,
    render_claims_markdown,
)


def evaluate(f, spec=None):
    return evaluate_logitnorm_claims(f["runs"], f["ood"], f["curves"], spec or make_spec())


def row(df, cid):
    sel = df[df["claim_id"] == cid]
    assert len(sel) == 1, cid
    return sel.iloc[0]


@pytest.fixture(scope="module")
def good():
    return evaluate(make_study())


def test_frame_shape_and_ids(good):
    assert list(good.columns) == COLUMNS
    assert good["holds"].dtype == bool and good["value"].dtype == "float64"
    ids = list(good["claim_id"])
    assert ids[0] == "headline"
    assert {
        "C1",
        "C2",
        "C3-odin",
        "C3-energy",
        "C3-gradnorm",
        "C4",
        "C5",
        "C5-norm",
        "C6",
        "C7",
        "C8",
    } <= set(ids)
    assert "C3-msp" not in ids
    assert good["claim_id"].is_unique
    assert CLAIM_SETS["logitnorm"] is evaluate_logitnorm_claims


def test_all_claims_hold_by_construction(good):
    assert good["holds"].all(), good.loc[~good["holds"], ["claim_id", "detail"]]
    c1 = row(good, "C1")
    assert c1["value"] == pytest.approx(31.0)  # CE 52 - LogitNorm 21 (pp)
    ce = pd.Series([50.0, 52.0, 54.0])
    ln = pd.Series([20.0, 21.0, 22.0])
    p = stats.ttest_rel(ce, ln, alternative="greater").pvalue
    assert f"p = {p:.3g}" in c1["detail"]
    assert row(good, "headline")["value"] == pytest.approx(31.0)
    assert row(good, "C2")["value"] == pytest.approx(0.5)  # 97.1 - 96.6 pp
    assert row(good, "C7")["value"] == 5
    assert row(good, "C8")["value"] == pytest.approx(10.1 / 2.1)


def test_flipped_study_fails_headline():
    bad = evaluate(make_study(logitnorm_better=False))
    for cid in ("headline", "C1", "C3-odin", "C5", "C6", "C7"):
        assert not row(bad, cid)["holds"], cid
    assert row(bad, "C1")["value"] == pytest.approx(52.0 - 61.0)
    assert row(bad, "C7")["value"] == 0
    assert row(bad, "C2")["holds"]  # accuracy is unaffected


def test_accuracy_gap_breaks_headline_only_through_c2():
    df = evaluate(make_study(acc_gap=0.02))
    assert row(df, "C1")["holds"] and not row(df, "C2")["holds"]
    assert not row(df, "headline")["holds"]
    assert row(df, "C2")["value"] == pytest.approx(2.0)


def test_one_seed_no_test():
    df = evaluate(make_study(seeds=(0,)))
    c1 = row(df, "C1")
    assert c1["holds"] and "no test, 1 seed" in c1["detail"]


def test_c7_counts_architectures():
    f = make_study()
    ood = f["ood"].copy()
    m = (ood["arch"] == "mlp") & (ood["loss"] == "logitnorm")
    ood.loc[m, "fpr95"] += 0.5
    df = evaluate({**f, "ood": ood})
    c7 = row(df, "C7")
    assert c7["value"] == 4 and not c7["holds"]
    assert "mlp: -19.00 pp" in c7["detail"]


def test_not_significant_does_not_hold():
    # LogitNorm lower on average but noisy across seeds: mean diff > 0, p > alpha
    f = make_study()
    ood = f["ood"].copy()
    for seed, shift in ((0, 0.45), (1, -0.35), (2, -0.2)):
        m = (ood["loss"] == "logitnorm") & (ood["seed"] == seed) & (ood["arch"] == "wrn-10-1")
        ood.loc[m, "fpr95"] += shift
    c1 = row(evaluate({**f, "ood": ood}), "C1")
    assert c1["value"] > 0 and not c1["holds"]


def test_c8_fails_when_ce_norm_shrinks():
    f = make_study()
    curves = f["curves"].copy()
    m = curves["loss"] == "ce"
    curves.loc[m, "logit_norm_id"] = 20.0 - curves.loc[m, "epoch"]
    c8 = row(evaluate({**f, "curves": curves}), "C8")
    assert c8["value"] < 1 and not c8["holds"]


def test_missing_loss_raises():
    f = make_study()
    keep = {k: v[v["loss"] != "godin"] if "loss" in v else v for k, v in f.items()}
    with pytest.raises(ValueError, match="godin"):
        evaluate(keep)


def test_paired_greater_edge_cases():
    a = pd.Series([3.0, 4.0, 5.0], index=[0, 1, 2])
    b = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])  # constant difference 2
    r = paired_greater(a, b, 0.05)
    assert r.holds and r.p_value == 0.0 and "all paired differences equal" in r.detail
    r = paired_greater(b, a, 0.05)
    assert not r.holds and r.p_value == 1.0
    r = paired_greater(a.iloc[:1], b, 0.05)  # only seed 0 is common
    assert r.n == 1 and math.isnan(r.p_value) and r.holds
    with pytest.raises(ValueError):
        paired_greater(a, pd.Series([1.0], index=[9]), 0.05)


def test_claims_frame_and_markdown(good):
    extra = claims_frame([Claim("X1", "Other et al.", "a | b", "stat", 1.5, "d", False)])
    both = pd.concat([good, extra], ignore_index=True)
    md = render_claims_markdown(both)
    assert md.count("\n| ") == len(both) + 1
    assert "a \\| b" in md and "| no |" in md and "| yes |" in md
