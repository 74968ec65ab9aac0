"""Seed tables and the claims table on hand-made per-seed frames (hand-checked values)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from softmax_ood.studies.ulmer import study
from softmax_ood.studies.ulmer.claims import certainty_per_seed, k_stability
from softmax_ood.studies.ulmer.tables import (
    decade_alphas,
    directions_table,
    fit_table,
    kstability_table,
    render_directions,
    render_kstability,
    render_scaling,
    scaling_table,
)
from softmax_ood.studies.ulmer.tests.controls import build_frames, table

ROOT = study.HERE.parents[3]


@pytest.fixture(scope="module")
def config():
    cfg = yaml.safe_load((ROOT / "config" / "default.yaml").read_text())
    return {"seeds": [0, 1, 2, 3, 4], "data": cfg["data"], "ulmer": cfg["ulmer"]}


def _scaling():
    rows = []
    for kind, label in (("single", "single network"), ("ensemble", "deep ensemble")):
        for seed in (0, 1):
            for alpha in (1.0, 3.16, 10.0, 100.0):
                rows.append(
                    {
                        "dataset": "toy",
                        "model": label,
                        "kind": kind,
                        "seed": seed,
                        "alpha": alpha,
                        "metric": "max_prob",
                        "value": 0.5 + seed,
                        "grad_norm": 0.001 if seed == 0 else 0.0,
                        "share_confident": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def test_fit_table_mean_std_in_percent(config):
    fit, _, _ = build_frames(config)
    t = fit_table(fit[fit["dataset"] == "synthetic"]).set_index("model")
    assert t.loc["bbb", "accuracy_mean"] == pytest.approx(90.0)
    assert t.loc["bbb", "chance_mean"] == pytest.approx(40.0)
    # train loss 0.1 + (i - 2) * 0.001 over an OCS loss of 1
    assert t.loc["bbb", "loss_ratio_mean"] == pytest.approx(0.1)
    assert t.loc["bbb", "loss_ratio_std"] == pytest.approx(math.sqrt(2.5) * 0.001)
    assert int(t.loc["control", "n_seeds"]) == 5


def test_scaling_table_keeps_the_decades():
    assert decade_alphas([1.0, 3.16, 10.0, 31.6, 100.0]) == [1.0, 10.0, 100.0]
    t = scaling_table(_scaling())
    assert sorted(t["alpha"].unique()) == [1.0, 10.0, 100.0]
    row = t[(t["model"] == "deep ensemble") & (t["alpha"] == 100.0)]
    assert row["grad_norm_mean"].item() == pytest.approx(0.0005)
    assert row["value_mean"].item() == pytest.approx(1.0)  # seeds 0.5 and 1.5
    assert "0.0005 ±" in render_scaling(t, "toy")


def test_certainty_leaves_the_degenerate_direction_out(config):
    _, _, d = build_frames(config)
    stat = certainty_per_seed(d, "synthetic", "bbb")
    # the degenerate axis holds 0.3 everywhere; only the random direction counts
    assert stat.tolist() == pytest.approx([0.9995 + (i - 2) * 0.0001 for i in range(5)])
    a, b, norm, margin = k_stability(d, "synthetic", "bbb", 0.005)
    assert (norm == 0).all() and margin == 0.005  # no change; the configured margin


def test_k_stability_table_and_directions_table(config):
    _, _, d = build_frames(config, shift_2k=-0.05, only="K-synthetic-ensemble")
    k = kstability_table(d, 0.005).set_index(["dataset", "kind"])
    row = k.loc[("synthetic", "ensemble")]
    assert (row["K"], row["2K"]) == (10, 20)
    assert row["change_mean"] == pytest.approx(-0.05)
    assert not row["within_margin"] and k.loc[("synthetic", "bbb"), "within_margin"]
    assert "**no**" in render_kstability(k.reset_index(), "toy")
    t = directions_table(d)
    x1 = t[(t["direction"] == "x1") & (t["dataset"] == "synthetic")]
    assert x1["degenerate"].all() and len(x1) == 6  # 5 kinds + the control
    assert "**degenerate**" in render_directions(t, "toy")


def test_claims_hand_checked(config):
    c = table(config).set_index("claim_id")
    assert list(c["kind"].iloc[:2]) == ["premise", "premise"]
    assert c.loc["F-synthetic", "value"] == pytest.approx(0.9)  # share of the OCS loss removed
    # half the directions (the split-vote axis) below certainty, the single network on none
    assert c.loc["C-synthetic-bbb", "value"] == pytest.approx(0.5)
    # holds in its family (BH over the tested claims); the eight C-* headline settings (four
    # averaged kinds x two data sets) at the sign test's smallest p (1/32) cannot pass Holm over
    # the eight (8/32 = 0.25), and the verdict says so
    assert c.loc["C-synthetic-bbb", "holds"] and c.loc["C-synthetic-bbb", "n"] == 5
    assert c.loc["C-synthetic-bbb", "p_adjusted"] == pytest.approx(1 / 32)
    assert c.loc["C-synthetic-bbb", "verdict"] == (
        "holds (not after Holm over the headline claims: p = 0.25)"
    )
    assert c.loc["P-synthetic-bbb", "value"] == pytest.approx(0.5)
    assert c.loc["L-synthetic-bbb", "value"] == 0 and c.loc["L-synthetic-bbb", "kind"] == "sanity"
    assert c.loc["D-synthetic", "value"] == pytest.approx(-0.1)
    assert c.loc["note-P3", "kind"] == "sanity" and c.loc["note-P3", "value"] == 0
    assert c.loc["S-synthetic-single", "kind"] == "sanity"
    assert not c.loc["S-synthetic-single", "supports"]
    assert c.loc["G-breast_cancer-max_prob", "value"] == pytest.approx(1e-6)


def test_control_certain_means_cannot_test(config):
    c = table(config, control=0.9999, only="N-synthetic").set_index("claim_id")
    assert c.loc["N-synthetic", "verdict"].startswith("does not hold")
    assert c.loc["P-synthetic-mc_dropout", "verdict"] == (
        "cannot test: premise N-synthetic does not hold"
    )
    assert c.loc["P-breast_cancer-mc_dropout", "verdict"] == "holds"


def test_k_moving_means_cannot_test(config):
    c = table(config, shift_2k=-0.05, only="K-breast_cancer-bbb").set_index("claim_id")
    assert c.loc["K-breast_cancer-bbb", "verdict"].startswith("does not hold")
    assert c.loc["C-breast_cancer-bbb", "verdict"].startswith("cannot test: premise K-")


def test_missing_dataset_is_one_sentence(config):
    fit, scaling, d = build_frames(config)
    with pytest.raises(ValueError, match="no rows for dataset 'synthetic'"):
        from softmax_ood.studies.ulmer.claims import evaluate_ulmer_claims

        evaluate_ulmer_claims(
            fit, scaling[scaling["dataset"] != "synthetic"], d, study.claims_spec(config)
        )


def test_c_and_p_details_give_both_numbers_and_their_2k_value(config):
    """C and P count the degenerate axis (where the averaged models' votes split); their
    details also give the statistic without it and at 2K; the K premise's detail names what
    it does not test (C/P's share at K and 2K, the cells crossing the level)."""
    t = table(config).set_index("claim_id")
    ds = study.DATASETS[0]
    c = t.loc[f"C-{ds}-ensemble"]
    assert c["value"] == pytest.approx(0.5)  # x1 below, r0 certain; single certain on both
    assert "(1 degenerate, counted)" in c["detail"]
    assert "without the 1 degenerate direction(s): 0.000" in c["detail"]
    assert "at 2K: 0.500" in c["detail"]
    assert "without the 1 degenerate direction(s): 1.000" in t.loc[f"P-{ds}-ensemble", "detail"]
    k = t.loc[f"K-{ds}-ensemble", "detail"]
    assert "C/P's statistic" in k and "0 of 10 cells cross the level" in k
    assert "borderline" not in k
    # C, P and D report their power at the config's effect sizes
    for cid in (f"C-{ds}-ensemble", f"P-{ds}-ensemble", f"D-{ds}"):
        assert not math.isnan(t.loc[cid, "power"]), cid
    assert t.loc[f"C-{ds}-ensemble", "effect"] == config["ulmer"]["claims"]["effect_share"]


def test_a_borderline_k_premise_says_so(config):
    """Doubling K moves one seed beyond the margin while the mean change stays inside: the
    premise may hold, but its detail calls it borderline."""
    fit, scaling, directions = build_frames(config)
    ds = study.DATASETS[0]
    sel = (
        (directions["dataset"] == ds)
        & (directions["kind"] == "bbb")
        & (directions["k_role"] == "2K")
        & ~directions["degenerate"]
    )
    margin = config["ulmer"]["claims"]["k_margin"]
    seeds = sorted(directions["seed"].unique())
    shift = {s: 0.0 for s in seeds}
    shift[seeds[0]] = 1.2 * margin  # one seed beyond the margin, the mean (n = 5) well inside
    directions.loc[sel, "mean_max_prob"] += directions.loc[sel, "seed"].map(shift)
    from softmax_ood.studies.ulmer.claims import evaluate_ulmer_claims
    from softmax_ood.studies.ulmer.tests.controls import datasize_frame, note_frame

    t = evaluate_ulmer_claims(
        fit,
        scaling,
        directions,
        study.claims_spec(config),
        datasize=datasize_frame(config),
        checks=note_frame(),
    ).set_index("claim_id")
    k = t.loc[f"K-{ds}-bbb"]
    assert "borderline" in k["detail"] and "exceeds the margin" in k["detail"]


def test_theorem1_as_stated_is_refuted_beside_the_hedge(config):
    """Issue 42: the averaged model is less certain far out than on its held-out data along
    its non-degenerate direction (held-out 0.99999, limit 0.9995): the stated theorem (T) does
    not hold, significantly, while the paper's hedge (C) still holds beside it."""
    t = table(config, held_conf=0.99999, only="T-synthetic-bbb").set_index("claim_id")
    row = t.loc["T-synthetic-bbb"]
    assert row["value"] == pytest.approx(1.0) and row["threshold"] == pytest.approx(0.1)
    assert row["verdict"].startswith("does not hold (the opposite is significant")
    assert "at the fixed bar (limit <= 0.99)" in row["detail"]
    assert "counting the degenerate directions too" in row["detail"]
    assert t.loc["C-synthetic-bbb", "holds"]
    held = table(config).set_index("claim_id").loc["T-synthetic-bbb"]
    assert held["holds"] and held["value"] == 0.0


def test_a_bar_below_held_out_confidence_is_uninformative(config):
    """Issue 42: the held-out confidence (0.9999) lies above the bar 0.99: B says so, the P
    row that counts cells above the bar cannot be tested, and S's detail shows the single
    network's held-out confidence beside the bar."""
    t = table(config, held_conf=0.9999, only="B-synthetic-ensemble").set_index("claim_id")
    b = t.loc["B-synthetic-ensemble"]
    assert b["kind"] == "premise" and b["verdict"].startswith("does not hold")
    assert "5 of 5 seeds at or above the bar 0.99" in b["detail"]
    assert "single network 0.95" in b["detail"]
    assert t.loc["P-synthetic-ensemble", "verdict"] == (
        "cannot test: premise B-synthetic-ensemble does not hold"
    )
    assert t.loc["P-synthetic-bbb", "verdict"] == "holds"
    assert "on the held-out data (alpha = 1) already 0.95" in t.loc["S-synthetic-single", "detail"]


def test_theorem1_is_judged_on_its_four_metrics(config):
    """Issue 45: one row per metric and averaged model; a metric less certain far out than on
    the held-out data refutes the theorem on that metric only."""
    cid = "M-breast_cancer-ensemble-mutual_information"
    t = table(config, far_uncertain=True, only=cid).set_index("claim_id")
    metrics = [i for i in t.index if i.startswith("M-breast_cancer-ensemble-")]
    assert len(metrics) == 4
    assert t.loc[cid, "verdict"].startswith("does not hold (the opposite is significant")
    assert all(t.loc[m, "holds"] for m in metrics if m != cid)
    entropy = t.loc["M-breast_cancer-ensemble-predictive_entropy"]
    assert entropy["value"] == pytest.approx(0.299)  # 0.3 held out -> 0.001 far out
    assert "perfect certainty: 0" in entropy["detail"] and entropy["power"] > 0.8
    assert "single network 0.2" in entropy["detail"]


def test_lemmas_1_and_3_are_sanity_rows(config):
    t = table(config).set_index("claim_id")
    assert t.loc["lemma1", "kind"] == "sanity" and t.loc["lemma1", "holds"]
    assert "f_1 falls on 6 steps and rises on 6" in t.loc["lemma1", "detail"]
    assert t.loc["lemma3-synthetic", "value"] == pytest.approx(1.0)
    quadratic = table(config, logit_slope=2.0, only="lemma3-synthetic").set_index("claim_id")
    assert quadratic.loc["lemma3-synthetic", "verdict"] == "sanity check fails"
    assert quadratic.loc["lemma3-breast_cancer", "verdict"] == "sanity check passes"


def test_the_data_size_row_keeps_the_papers_may(config):
    t = table(config).set_index("claim_id")
    assert "'may' worsen OOD detection" in t.loc["D-synthetic", "claim"]
    assert "not the paper's 'may'" in t.loc["D-synthetic", "claim"]
