"""The shared premises: the model fitted (loss vs its constant solution) and the pixel floor."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import ClaimSpec, evaluate_claims
from softmax_ood.analysis.premises import (
    FITTED_RATIO,
    fitted,
    pixel_floor,
    pixel_statistics,
    trivial_sets,
)


def _premise(m):
    spec = ClaimSpec("F", "fitted", "loss / OCS loss", FITTED_RATIO, "<", kind="premise")
    return evaluate_claims("P", [spec], {"F": m}, alpha=0.05).iloc[0]


def test_fitted_holds_for_a_trained_model_and_fails_near_the_constant():
    ocs = math.log(5)  # cross-entropy of the uniform prediction over 5 balanced classes
    good = fitted(pd.Series([0.17, 0.20, 0.18], index=[0, 1, 2]), ocs, what="CE")
    assert good.samples == pytest.approx((0.17 / ocs, 0.20 / ocs, 0.18 / ocs))
    assert _premise(good)["verdict"] == "holds"
    # the reward model of the review: training MSE 2.1-2.9 against 3.33 for its OCS
    bad = fitted(pd.Series([2.1, 2.9, 2.5], index=[0, 1, 2]), 3.33, what="reward")
    assert _premise(bad)["verdict"] == "does not hold"
    per_seed_ocs = fitted(pd.Series([1.0, 2.0]), pd.Series([4.0, 4.0]))
    assert per_seed_ocs.samples == (0.25, 0.5)
    assert math.isnan(fitted(pd.Series([1.0]), 0.0).value)


def _digits(rng, n):
    x = np.zeros((n, 8, 8))
    x[:, 2:6, 3:5] = rng.uniform(0.5, 1.0, size=(n, 4, 2))  # a stroke, empty borders
    return x


def test_pixel_statistics_by_hand():
    x = np.zeros((1, 8, 8))
    x[0, 0, :] = 1.0  # one full border row: 8 of 64 pixels, all on the ring
    ref = np.stack([np.zeros((8, 8)), np.ones((8, 8))])
    s = pixel_statistics(x, ref).iloc[0]
    assert s["lit_pixels"] == 8 / 64 and s["mean_intensity"] == 8 / 64 and s["border_mass"] == 1.0


def test_the_floor_solves_noise_but_not_a_lookalike():
    rng = np.random.default_rng(0)
    id_x, ref = _digits(rng, 200), _digits(rng, 200)
    noise = rng.uniform(0, 1, size=(200, 8, 8))
    easy = pixel_floor(id_x, noise, reference=ref)
    assert easy["fpr95"] == 0.0 and easy["auroc"] == 1.0
    hard = pixel_floor(id_x, _digits(rng, 200), reference=ref)
    assert hard["fpr95"] > 80.0 and 0.35 < hard["auroc"] < 0.65
    assert set(hard["per_detector"]) == {
        "lit_pixels",
        "mean_intensity",
        "border_mass",
        "mahalanobis",
    }
    # channel-first colour images are reduced to their channel mean
    assert pixel_floor(id_x[:, None], noise[:, None], reference=ref[:, None])["fpr95"] == 0.0
    with pytest.raises(ValueError, match="shape"):
        pixel_floor(np.zeros((3, 4)), np.zeros((3, 4)))


def test_trivial_sets_are_those_the_floor_beats_the_baseline_on():
    floor = {"noise": 0.0, "glyphs": 60.0, "heldout": 92.0}
    ce = {"noise": 2.5, "glyphs": 40.0, "heldout": 28.0}
    assert trivial_sets(floor, ce) == ["noise"]
