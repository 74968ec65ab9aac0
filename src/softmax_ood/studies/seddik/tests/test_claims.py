"""The claims table: premise first, gaps in points, 'cannot test' when the premise fails."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from softmax_ood.studies.seddik.claims import evaluate_seddik_claims, gap_over, ridge_premise


def accuracy_frame(x, values, theory, practice):
    rows = []
    for v, t, prs in zip(values, theory, practice, strict=True):
        rows.append(
            {x: v, "source": "theory", "split": "test", "seed": pd.NA, "cls": "all", "accuracy": t}
        )
        for s, a in enumerate(prs):
            rows.append(
                {
                    x: v,
                    "source": "practice",
                    "split": "test",
                    "seed": s,
                    "cls": "all",
                    "accuracy": a,
                }
            )
    return pd.DataFrame(rows)


def validation(rel_gap, n=400):
    ref = np.array([1.0, 2.0])
    return pd.DataFrame(
        {
            "check": "ridge",
            "reference_kind": "closed_form",
            "lam": 0.1,
            "p": 100,
            "n": n,
            "cls": ["0", "1"],
            "quantity": "sigma",
            "theory": ref * (1 + rel_gap),
            "reference": ref,
        }
    )


def fig5(theory, practice):
    return pd.DataFrame(
        [
            {
                "panel": "accuracy",
                "source": "theory",
                "split": "test",
                "cls": "all",
                "value": theory,
            },
            {
                "panel": "accuracy",
                "source": "practice",
                "split": "test",
                "cls": "all",
                "value": practice,
            },
            {"panel": "weights", "source": "theory", "output": 2, "index": 0, "value": 0.0},
            {"panel": "logits", "source": "practice", "output": 0, "index": 99, "value": 0.0},
        ]
    )


def test_gap_is_the_worst_over_x_in_points():
    f = accuracy_frame("p", [25, 50], [0.80, 0.70], [[0.79, 0.81], [0.66, 0.68]])
    m = gap_over(f, "p")
    assert m.value == pytest.approx(3.0)
    assert "worst at p=50" in m.detail and "2 seeds" in m.detail


def test_ridge_premise_scales_with_n():
    assert ridge_premise(validation(1e-3, n=400)).value == pytest.approx(0.4)
    assert np.isnan(ridge_premise(validation(1e-3).iloc[0:0]).value)


def test_claims_table_premise_first_and_verdicts():
    f2 = accuracy_frame("p", [25], [0.8], [[0.80, 0.81]])
    f4 = accuracy_frame("n", [40], [0.9], [[0.85, 0.86]])
    c = evaluate_seddik_claims(
        f2, f4, fig5(0.95, 0.94), validation(1e-3), max_gap_points=2.0, ridge_n_gap=1.0
    )
    assert list(c["claim_id"]) == ["P1", "C1", "C2", "C3"]
    assert list(c["verdict"]) == ["holds", "holds", "does not hold", "holds"]
    c = evaluate_seddik_claims(
        f2, f4, fig5(0.95, 0.94), validation(0.1), max_gap_points=2.0, ridge_n_gap=1.0
    )
    assert c["verdict"].iloc[0] == "does not hold"
    assert (c["verdict"].iloc[1:] == "cannot test: premise P1 does not hold").all()
