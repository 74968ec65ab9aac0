"""Seeded data: 2-D blobs, the breast-cancer split and the monotonic-feature pick."""

from __future__ import annotations

import numpy as np
import pytest

from softmax_ood.studies.ulmer.data import (
    breast_cancer,
    monotonicity_scores,
    most_monotonic_feature,
    synthetic_2d,
)
from softmax_ood.studies.ulmer.tests.helpers import BLOBS


def test_synthetic_2d_shapes_balance_and_seed():
    x, y = synthetic_2d(50, 4, seed=1, **BLOBS)
    assert x.shape == (200, 2) and x.dtype == np.float32 and y.dtype == np.int64
    assert np.bincount(y).tolist() == [50, 50, 50, 50]
    x2, y2 = synthetic_2d(50, 4, seed=1, **BLOBS)
    assert np.array_equal(x, x2) and np.array_equal(y, y2)
    assert not np.array_equal(x, synthetic_2d(50, 4, seed=2, **BLOBS)[0])


def test_synthetic_2d_centres_on_circle():
    # with a tiny spread every class sits at radius * (cos 2 pi k / C, sin 2 pi k / C)
    x, y = synthetic_2d(3, 4, seed=0, radius=2.0, std=1e-6, shuffle=False)
    expected = np.array([[2.0, 0.0], [0.0, 2.0], [-2.0, 0.0], [0.0, -2.0]])
    assert np.allclose(x, expected[y], atol=1e-4)


def test_breast_cancer_split_is_standardised_and_stratified():
    s = breast_cancer(seed=0, test_fraction=0.3)
    assert s.x_train.shape[0] + s.x_test.shape[0] == 569
    assert s.x_train.shape[1] == 30 == len(s.feature_names)
    assert s.x_test.shape[0] == 171  # ceil(0.3 * 569)
    assert np.allclose(s.x_train.mean(0), 0.0, atol=1e-5)
    assert np.allclose(s.x_train.std(0), 1.0, atol=1e-4)
    assert abs(s.y_train.mean() - s.y_test.mean()) < 0.01  # 357 / 569 benign in both
    assert s.n_classes == 2
    again = breast_cancer(seed=0, test_fraction=0.3)
    assert np.array_equal(s.x_test, again.x_test)


def test_monotonic_feature_on_hand_made_data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 50)
    x = np.stack(
        [
            rng.standard_normal(100),  # unrelated to y
            y + 0.1 * rng.standard_normal(100),  # almost a step in y: monotone
            np.ones(100),  # constant
        ],
        axis=1,
    )
    assert most_monotonic_feature(x, y, ["a", "b", "c"]) == (1, "b")
    assert most_monotonic_feature(-x, y, method="auroc") == (1, "x1")  # decreasing counts too
    scores = monotonicity_scores(x, y, "auroc")
    assert scores[1] == pytest.approx(1.0) and scores[2] == 0.0


def test_monotonic_feature_of_breast_cancer():
    s = breast_cancer(seed=0, test_fraction=0.3)
    spearman = most_monotonic_feature(s.x_train, s.y_train, s.feature_names)
    auroc = most_monotonic_feature(s.x_train, s.y_train, s.feature_names, method="auroc")
    assert spearman == auroc == (22, "worst perimeter")
