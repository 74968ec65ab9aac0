"""The far sets' premise ``far_nontrivial:<set>`` read from the OOD-score frame: the floor
battery's result per far set (:func:`~softmax_ood.studies.kang.discrimination.far_floor` wrote
it) tested against the bar, and the far sets it leaves out of the far trend. Read by the claims,
the trend table and the figures alike."""

from __future__ import annotations

import math

import pandas as pd

from ...analysis.claims import Measurement
from ...analysis.premises import floor_families, floor_not_solved

__all__ = ["excluded_far", "far_floor"]


def far_floor(scores: pd.DataFrame, name: str, bar: float) -> Measurement:
    """``far_nontrivial:<name>`` from the OOD-score frame indexed by ``eval_set``."""
    key = f"far:{name}"
    if key not in scores.index or "floor_n" not in scores.columns:
        return Measurement(math.nan, f"{name}: no floor battery")
    r = scores.loc[key]
    return floor_not_solved(
        name,
        r["floor_accepted"],
        r["floor_n"],
        r["floor_detector"],
        bar,
        f" (FPR95 {float(r['floor_fpr95']):.3f}{floor_families(r)})",
    )


def excluded_far(ood_scores: pd.DataFrame, spec: dict) -> list[str]:
    """The far sets whose ``far_nontrivial`` premise does not hold (the floor battery solves them,
    or untested): left out of the far trend, so out of its figure too."""
    scores = ood_scores.set_index("eval_set")
    alpha, bar = float(spec.get("alpha", 0.05)), float(spec["far_floor_fpr95"])
    out = []
    for name in spec["far_ood"]:
        fm = far_floor(scores, name, bar)
        if not (fm.p_value < alpha and fm.value > bar):
            out.append(name)
    return out
