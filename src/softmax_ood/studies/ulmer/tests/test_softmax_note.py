"""The softmax-properties note: sharpening, flattening, ties, the Jacobian."""

from __future__ import annotations

import math

import numpy as np
import pytest

from softmax_ood.studies.ulmer.softmax_note import (
    expected_limits,
    jacobian_check,
    sharpness_table,
    softmax_entropy,
)


def test_limits_of_scaled_softmax():
    t = sharpness_table({"z": [3.0, 1.0, 0.0, -2.0]}, alphas=[1e-6, 1e3, -1e3]).set_index("alpha")
    assert t.loc[1e-6, "max_prob"] == pytest.approx(0.25, abs=1e-5)  # uniform
    assert t.loc[1e-6, "entropy"] == pytest.approx(math.log(4), abs=1e-9)
    assert t.loc[1e3, "max_prob"] == 1.0  # one-hot on the arg-max
    assert t.loc[1e3, "entropy"] == 0.0
    assert t.loc[-1e3, "mass_on_min"] == 1.0  # alpha -> -inf: on the arg-min


def test_tied_maxima_share_the_mass():
    t = sharpness_table({"tied": [1.0, 1.0, 0.0]}, alphas=[1e4]).iloc[0]
    assert t["max_prob"] == pytest.approx(0.5)
    assert t["top_prob_each"] == pytest.approx(0.5)
    assert t["mass_on_max"] == pytest.approx(1.0)
    assert t["entropy"] == pytest.approx(math.log(2))
    lim = expected_limits([1.0, 1.0, 0.0])
    assert lim["max_prob_inf"] == 0.5 and lim["entropy_zero"] == pytest.approx(math.log(3))


def test_huge_scales_stay_finite():
    t = sharpness_table({"z": [2.0, 1.0]}, alphas=[1e6, 1e300])
    assert np.isfinite(t[["max_prob", "entropy"]].to_numpy()).all()
    assert softmax_entropy(np.array([1e4, 0.0, -1e4])) == 0.0


def test_jacobian_matches_autograd():
    t = jacobian_check({"a": [0.3, -1.2, 2.0], "b": [1.0, 1.0, 0.0]}, alphas=[0.1, 1.0, 10.0])
    assert (t["max_abs_diff"] < 1e-12).all()
    assert (t["row_sum_max_abs"] < 1e-12).all()
    # hand value: z = (0, 0) -> y = (1/2, 1/2), J = [[1/4, -1/4], [-1/4, 1/4]]
    one = jacobian_check([0.0, 0.0], alphas=[1.0]).iloc[0]
    assert one["jacobian_max_abs"] == pytest.approx(0.25)


def test_jacobian_vanishes_when_saturated_but_not_for_ties():
    t = jacobian_check({"a": [1.0, 0.0], "tied": [1.0, 1.0, 0.0]}, alphas=[100.0]).set_index(
        "vector"
    )
    assert t.loc["a", "jacobian_max_abs"] < 1e-40
    assert t.loc["tied", "jacobian_max_abs"] == pytest.approx(0.25)  # y_i (1 - y_i), y_i = 1/2
