"""Seed tables and the claims table on hand-made per-seed frames (hand-checked values)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from softmax_ood.studies.ulmer.claims import evaluate_ulmer_claims
from softmax_ood.studies.ulmer.tables import (
    decade_alphas,
    fit_table,
    render_scaling,
    scaling_table,
)

SPEC = {"confident": 0.99, "certain_share": 0.9, "grad_ratio": 0.01}
LABELS = {"single": "single network", "ensemble": "deep ensemble"}


def _fit(acc_single=(0.9, 0.8), chance=0.5):
    rows = []
    for kind, accs in (("single", acc_single), ("ensemble", (0.95, 0.85))):
        for seed, acc in enumerate(accs):
            rows.append(
                {
                    "dataset": "toy",
                    "model": LABELS[kind],
                    "kind": kind,
                    "seed": seed,
                    "accuracy": acc,
                    "chance": chance,
                    "feature": "x1",
                    "monotonicity": 0.7,
                }
            )
    return pd.DataFrame(rows)


def _scaling():
    rows = []
    for kind in ("single", "ensemble"):
        for seed in (0, 1):
            for alpha, share in (
                (1.0, 0.5),
                (10.0, 0.8),
                (100.0, 1.0 if kind == "single" else 0.6),
            ):
                for metric in ("max_prob", "class_variance"):
                    grad = {1.0: 0.2, 10.0: 0.1, 100.0: 0.001 if seed == 0 else 0.0}[alpha]
                    if kind == "single" and metric == "class_variance":
                        grad = 0.0
                    rows.append(
                        {
                            "dataset": "toy",
                            "model": LABELS[kind],
                            "kind": kind,
                            "seed": seed,
                            "alpha": alpha,
                            "metric": metric,
                            "value": 0.5 + seed,
                            "grad_norm": grad,
                            "share_confident": share,
                            "max_abs_logit": 1e4,
                            "naive_nan_share": 1.0,
                            "n_points": 10,
                        }
                    )
    return pd.DataFrame(rows)


def test_fit_table_mean_std_in_percent():
    t = fit_table(_fit()).set_index("model")
    assert t.loc["single network", "accuracy_mean"] == pytest.approx(85.0)
    assert t.loc["single network", "accuracy_std"] == pytest.approx(math.sqrt(50.0))
    assert t.loc["deep ensemble", "chance_mean"] == pytest.approx(50.0)
    assert int(t.loc["deep ensemble", "n_seeds"]) == 2


def test_scaling_table_keeps_the_decades():
    assert decade_alphas([1.0, 3.16, 10.0, 31.6, 100.0]) == [1.0, 10.0, 100.0]
    t = scaling_table(_scaling())
    row = t[(t["model"] == "deep ensemble") & (t["metric"] == "max_prob") & (t["alpha"] == 100.0)]
    assert row["grad_norm_mean"].item() == pytest.approx(0.0005)
    assert row["value_mean"].item() == pytest.approx(1.0)  # seeds 0.5 and 1.5
    assert "0.0005 ±" in render_scaling(t, "toy")


def test_claims_hand_checked():
    c = evaluate_ulmer_claims(_fit(), _scaling(), SPEC).set_index("claim_id")
    assert list(c.index[:1]) == ["P-toy"] and c.loc["P-toy", "kind"] == "premise"
    assert c.loc["P-toy", "value"] == pytest.approx(0.85 - 0.5)
    assert c.loc["S-toy-single", "holds"] and c.loc["S-toy-single", "value"] == 1.0
    assert not c.loc["S-toy-ensemble", "holds"]
    assert c.loc["S-toy-ensemble", "value"] == pytest.approx(0.6)
    # max prob: both models 0.2 -> mean(0.001, 0) = 0.0005: ratio 0.0025 < 0.01
    assert c.loc["G-toy-max_prob", "value"] == pytest.approx(0.0025)
    assert c.loc["G-toy-max_prob", "holds"]
    # class variance: the single network (identically 0) is left out, said in the detail
    assert c.loc["G-toy-class_variance", "value"] == pytest.approx(0.0025)
    assert "identically 0" in c.loc["G-toy-class_variance", "detail"]


def test_failed_premise_means_cannot_test():
    c = evaluate_ulmer_claims(_fit(acc_single=(0.4, 0.5), chance=0.6), _scaling(), SPEC)
    c = c.set_index("claim_id")
    assert not c.loc["P-toy", "holds"]
    assert c.loc["S-toy-single", "verdict"] == "cannot test: premise P-toy does not hold"
    assert c.loc["G-toy-max_prob", "verdict"].startswith("cannot test")


def test_missing_dataset_is_one_sentence():
    with pytest.raises(ValueError, match="no rows for dataset 'toy'"):
        evaluate_ulmer_claims(_fit(), _scaling().assign(dataset="other"), SPEC)
