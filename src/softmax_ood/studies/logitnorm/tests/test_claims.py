"""The LogitNorm claims table on synthetic studies whose answers are known by construction."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from softmax_ood.analysis.claims import COLUMNS, render_claims_markdown
from softmax_ood.studies.logitnorm.claims import claim_specs, evaluate_logitnorm_claims

from .study_frames import make_spec, make_study


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
    assert ids[:3] == ["P1", "P2", "headline"]  # the premises first, then the headline
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


def test_claims_are_declared_as_data():
    specs = claim_specs(make_spec())
    ids = [c.id for c in specs]
    assert ids[:5] == ["P1", "P2", "headline", "C1", "C2"] and len(set(ids)) == len(ids)
    assert specs[0].premise and specs[1].premise and specs[2].requires == ("P1",)
    head = specs[2]
    assert head.all_of == ("C1", "C2") and head.test == "paired"


def test_claims_markdown(good):
    md = render_claims_markdown(good)
    assert md.count("\n| ") == len(good) + 1
    assert "**holds**" in md


def test_underconfident_baseline_makes_ood_claims_untestable():
    f = make_study()
    runs = f["runs"].copy()
    runs.loc[runs["loss"] == "ce", "temperature"] = 0.5  # T < 1: underconfident CE
    df = evaluate({**f, "runs": runs})
    p1 = row(df, "P1")
    assert p1["value"] == pytest.approx(0.5) and not p1["holds"]
    for cid in ("headline", "C1", "C3-odin", "C5", "C6", "C7"):
        r = row(df, cid)
        assert not r["holds"] and r["verdict"] == "cannot test: premise P1 does not hold", cid
    for cid in ("C2", "C4", "C5-norm", "C8"):  # not OOD comparisons: still judged
        assert row(df, cid)["verdict"] in ("holds", "does not hold"), cid
    assert row(df, "C1")["value"] == pytest.approx(31.0)  # the statistic is still reported
