"""The floor battery (issue 41): detectors fitted on ID training images only, a fixed
orientation rule, two families reported apart, and FPR95 with ID positive."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from softmax_ood.analysis.battery import (
    DETECTORS,
    HELD_OUT,
    TUNING,
    WHY,
    Battery,
    battery_result,
    fpr95,
)
from softmax_ood.metrics import fpr_at_tpr


def _blobs(n, rng, size=28):
    """Smooth objects on a dark ground peaking at exactly 1.0 (a Fashion-like ID)."""
    x = gaussian_filter(rng.normal(size=(n, size, size)), (0, size / 10, size / 10))
    rr, cc = np.mgrid[0:size, 0:size] / size - 0.5
    x = x / x.std(axis=(1, 2), keepdims=True) + 1.0 - 6.0 * (rr**2 + cc**2)
    x = np.clip(x, 0.0, None)
    return np.round(x / x.max(axis=(1, 2), keepdims=True) * 255) / 255


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(0)
    train, test = _blobs(800, rng), _blobs(400, rng)
    bat = Battery.fit(train, nn_size=300)
    return rng, train, test, bat, bat.scores(test)


@pytest.mark.parametrize("n_id", [20, 99, 100, 1001])
def test_fpr95_is_the_projects_fpr_at_tpr_with_id_positive(n_id):
    rng = np.random.default_rng(n_id)
    a = np.round(rng.normal(size=n_id), 1)  # ties
    b = np.round(rng.normal(0.5, 1.0, size=333), 1)
    assert fpr95(a, b) == pytest.approx(100.0 * fpr_at_tpr(a, b))


def test_families_are_disjoint_and_every_detector_says_why():
    assert set(TUNING).isdisjoint(HELD_OUT)
    assert DETECTORS == (*TUNING, *HELD_OUT)
    assert set(WHY) == set(DETECTORS) and all(WHY.values())


def test_id_images_are_not_separated_by_any_detector(world):
    rng, _, test, bat, s_id = world
    fresh = bat.scores(_blobs(400, rng))
    r = battery_result(s_id, fresh)
    assert r["fpr95"] > 75.0, r


def test_a_dimmed_peak_is_caught_by_the_peak_detector(world):
    _, _, test, bat, s_id = world
    r = battery_result(s_id, bat.scores(test * 0.8))
    assert r["per_detector"]["peak"] == 0.0
    assert r["tuning_fpr95"] == 0.0 and r["fpr95"] == 0.0


def test_white_noise_is_caught_by_the_spatial_and_held_out_detectors(world):
    rng, train, _, bat, s_id = world
    noise = np.clip(rng.normal(train.mean(0), train.std(0), size=(300, 28, 28)), 0, 1)
    r = battery_result(s_id, bat.scores(noise))
    assert r["per_detector"]["autocorr"] < 1.0
    assert r["heldout_fpr95"] < 5.0 and r["heldout_detector"] in HELD_OUT


def test_scores_are_higher_for_id_and_two_sided_around_the_id_median(world):
    _, _, test, bat, s_id = world
    bright = bat.scores(np.clip(test * 1.5, 0, 1))
    dim = bat.scores(test * 0.6)
    # a statistic pushed either way from the ID median scores lower (two-sided rule)
    for s in (bright, dim):
        assert s["mean_intensity"].median() < s_id["mean_intensity"].median()
    assert list(s_id.columns) == list(DETECTORS)


def test_the_battery_reads_small_and_channel_first_images():
    rng = np.random.default_rng(3)
    train, test = _blobs(200, rng, 8), _blobs(50, rng, 8)
    bat = Battery.fit(train[:, None], nn_size=50)
    s = bat.scores(test[:, None])
    assert s.shape == (50, len(DETECTORS)) and np.isfinite(s.to_numpy()).all()
    with pytest.raises(ValueError, match="shape"):
        bat.scores(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="finite"):
        bat.scores(np.full((2, 8, 8), np.nan))
