"""The shared premises: the model fitted (loss vs its constant solution) and the pixel floor."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import ClaimSpec, evaluate_claims
from softmax_ood.analysis.premises import (
    FITTED_SHARE,
    fitted,
    fitted_share,
    pixel_floor,
    pixel_statistics,
    trivial_sets,
)


def _premise(m):
    spec = ClaimSpec("F", "fitted", "share of OCS loss removed", FITTED_SHARE, ">", kind="premise")
    return evaluate_claims("P", [spec], {"F": m}, alpha=0.05).iloc[0]


def test_fitted_holds_for_a_trained_model_and_fails_near_the_constant():
    ocs = math.log(5)  # cross-entropy of the uniform prediction over 5 balanced classes
    good = fitted(pd.Series([0.17, 0.20, 0.18], index=[0, 1, 2]), ocs, what="CE")
    assert good.samples == pytest.approx((1 - 0.17 / ocs, 1 - 0.20 / ocs, 1 - 0.18 / ocs))
    assert _premise(good)["verdict"] == "holds"
    # the reward model of the review: training MSE 2.1-2.9 against 3.33 for its OCS (R² 0.13-0.37)
    bad = fitted(pd.Series([2.1, 2.9, 2.5], index=[0, 1, 2]), 3.33, loss="reward_mse")
    assert _premise(bad)["verdict"].startswith("does not hold")
    per_seed_ocs = fitted(pd.Series([1.0, 2.0]), pd.Series([4.0, 4.0]), loss="mse")
    assert per_seed_ocs.samples == (0.75, 0.5)  # R² = 1 − MSE / MSE_OCS
    assert math.isnan(fitted(pd.Series([1.0]), 0.0).value)
    with pytest.raises(ValueError, match="does not know the loss"):
        fitted(pd.Series([1.0]), 2.0, loss="hinge")


def test_fitted_is_a_gap_in_nats_for_a_loss_that_goes_negative():
    """Issue 25: a Gaussian NLL of −1.4 "passed" the old ratio < 0.5 whatever its constant
    solution's. As a gap in nats it passes only when far below the OCS Gaussian's NLL."""
    # labels 0..9 uniform: sd 2.87, OCS NLL = ½ log 2π + log sd + ½ = 2.473 nats
    ocs = 0.5 * math.log(2 * math.pi) + math.log(np.arange(10).std()) + 0.5
    near = fitted(pd.Series([ocs - 0.05, ocs - 0.10, ocs - 0.08]), ocs, loss="gaussian_nll")
    assert _premise(near)["verdict"].startswith("does not hold")
    # the NLL negative (−1.4 nats, gap ≈ 3.9 nats): R² ≈ 1 − e^(−7.7) ≈ 1
    far = fitted(pd.Series([-1.3, -1.4, -1.5]), ocs, loss="gaussian_nll")
    assert far.value > 0.99 and _premise(far)["verdict"] == "holds"
    # a negative loss whose constant solution is lower still has not fitted (the old ratio of
    # two negatives, 1.2, read as "far below"; the gap is negative)
    neg = fitted(pd.Series([-1.2, -1.25, -1.22]), -1.3, loss="gaussian_nll")
    assert neg.value < 0 and _premise(neg)["verdict"].startswith("does not hold")
    # R² semantics: a Gaussian with half the OCS's variance is ½ log 2 nats likelier
    assert fitted_share(0.5 * math.log(2), ocs, "gaussian_nll") == pytest.approx(0.5)


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
