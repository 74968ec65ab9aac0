"""Tests for softmax_ood.calibration: ECE, NLL, temperature scaling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from softmax_ood.calibration import (
    T_BOUNDS,
    ece,
    ece_from_logits,
    fit_temperature,
    nll,
    reliability_bins,
)


def softmax_np(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def sample_labels(probs, rng):
    """One categorical draw per row (inverse-CDF)."""
    u = rng.random((probs.shape[0], 1))
    return np.minimum((np.cumsum(probs, axis=1) < u).sum(axis=1), probs.shape[1] - 1)


def guo_ece_reference(probs, labels, n_bins=15):
    """Loop transcription of Guo et al.'s ``_ECELoss`` (right-inclusive bins)."""
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    acc = pred == labels
    edges = np.linspace(0, 1, n_bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        in_bin = (conf > lo) & (conf <= hi)
        prop = in_bin.mean()
        if prop > 0:
            total += abs(conf[in_bin].mean() - acc[in_bin].mean()) * prop
    return total


# --------------------------------------------------------------------------- ECE


def test_ece_hand_example():
    # four predictions at .95 with 3 correct (gap .2), two at .55 with 1 correct (gap .05)
    conf = np.array([0.95, 0.95, 0.95, 0.95, 0.55, 0.55])
    pred = np.array([0, 1, 2, 3, 0, 1])
    labels = np.array([0, 1, 2, 0, 0, 0])
    want = (4 * 0.2 + 2 * 0.05) / 6  # = 0.15
    assert math.isclose(ece(conf, pred, labels), want, rel_tol=1e-12)
    assert math.isclose(ece(conf, pred, labels, n_bins=10), want, rel_tol=1e-12)


def test_ece_zero_when_perfectly_calibrated():
    conf = np.r_[np.full(10, 0.8), np.full(10, 0.3)]
    correct = np.r_[np.ones(8), np.zeros(2), np.ones(3), np.zeros(7)].astype(bool)
    labels = np.zeros(20, int)
    pred = np.where(correct, 0, 1)
    assert ece(conf, pred, labels) == pytest.approx(0.0, abs=1e-15)


def test_ece_from_probs_matches_guo_reference():
    rng = np.random.default_rng(0)
    for n, c in [(1, 3), (50, 10), (3000, 100)]:
        z = rng.normal(0, 3, (n, c))
        probs = softmax_np(z)
        labels = rng.integers(0, c, n)
        want = guo_ece_reference(probs, labels)
        assert math.isclose(ece(probs, None, labels), want, rel_tol=1e-10, abs_tol=1e-12)
        assert math.isclose(ece_from_logits(z, labels), want, rel_tol=1e-10, abs_tol=1e-12)
        want_t = guo_ece_reference(softmax_np(z / 2.0), labels)
        assert math.isclose(
            ece_from_logits(z, labels, temperature=2.0), want_t, rel_tol=1e-10, abs_tol=1e-12
        )


def test_bins_are_right_inclusive():
    conf = np.array([0.0, 0.25, 0.5, 0.5000001, 1.0])
    r = reliability_bins(conf, np.zeros(5, int), np.zeros(5, int), n_bins=4)
    # (0,.25] gets .25; (.25,.5] gets .5; (.5,.75] gets .5000001; (.75,1] gets 1.0; 0.0 gets no bin
    assert r["count"].tolist() == [1, 1, 1, 1]
    assert r["n"] == 5
    assert np.isnan(reliability_bins(np.array([0.9]), [0], [0], n_bins=4)["accuracy"][0])


def test_ece_explicit_predictions_with_probs():
    probs = np.array([[0.7, 0.3], [0.4, 0.6]])
    labels = np.array([0, 0])
    # predictions override argmax; confidence becomes the probability of the given prediction
    assert math.isclose(
        ece(probs, np.array([0, 0]), labels), abs(1 - 0.7) * 0.5 + abs(1 - 0.4) * 0.5
    )


@pytest.mark.parametrize(
    "args",
    [
        (np.array([]), np.array([], int), np.array([], int)),
        (np.array([0.5, 0.6]), np.array([0]), np.array([0, 1])),
        (np.array([0.5, 1.2]), np.array([0, 1]), np.array([0, 1])),
        (np.array([0.5, np.nan]), np.array([0, 1]), np.array([0, 1])),
        (np.array([0.5, 0.6]), None, np.array([0, 1])),
        (np.ones((2, 2, 2)), None, np.array([0, 1])),
    ],
)
def test_ece_bad_inputs(args):
    with pytest.raises(ValueError):
        ece(*args)


@pytest.mark.parametrize("n_bins", [0, -1, 2.5, True])
def test_ece_bad_n_bins(n_bins):
    with pytest.raises(ValueError):
        ece(np.array([0.5]), np.array([0]), np.array([0]), n_bins=n_bins)


# --------------------------------------------------------------------------- NLL


def test_nll_hand_values():
    assert math.isclose(nll(np.zeros((3, 2)), np.array([0, 1, 0])), math.log(2))
    z = np.array([[1.0, 2.0, 3.0]])
    want = -math.log(math.exp(1) / (math.exp(1) + math.exp(2) + math.exp(3)))
    assert math.isclose(nll(z, np.array([0])), want, rel_tol=1e-12)
    assert math.isclose(nll(2 * z, np.array([0]), temperature=2.0), want, rel_tol=1e-12)


def test_nll_stable_for_huge_logits():
    z = np.array([[1e4, 0.0], [0.0, 1e4]])
    assert nll(z, np.array([0, 1])) == 0.0
    assert math.isclose(nll(z, np.array([1, 0])), 1e4, rel_tol=1e-12)
    assert math.isfinite(ece_from_logits(z, np.array([0, 1])))


@pytest.mark.parametrize(
    "logits, labels, t",
    [
        (np.zeros((2, 3)), np.array([0, 3]), 1.0),
        (np.zeros((2, 3)), np.array([0]), 1.0),
        (np.zeros((2, 3)), np.array([0.0, 1.0]), 1.0),
        (np.zeros(3), np.array([0]), 1.0),
        (np.zeros((0, 3)), np.zeros(0, int), 1.0),
        (np.array([[np.nan, 0.0]]), np.array([0]), 1.0),
        (np.zeros((2, 3)), np.array([0, 1]), 0.0),
        (np.zeros((2, 3)), np.array([0, 1]), -1.0),
        (np.zeros((2, 3)), np.array([0, 1]), float("inf")),
    ],
)
def test_nll_bad_inputs(logits, labels, t):
    with pytest.raises(ValueError):
        nll(logits, labels, temperature=t)


# --------------------------------------------------------------------------- temperature scaling


@pytest.mark.parametrize("t_true, scale", [(2.5, 3.0), (0.05, 0.1), (1.0, 2.0)])
def test_fit_temperature_recovers_known_t(t_true, scale):
    """Labels drawn from softmax(z / T*) -> the NLL minimiser is ~T* (within 10%)."""
    rng = np.random.default_rng(123)
    z = rng.normal(0.0, scale, (20000, 10))
    y = sample_labels(softmax_np(z / t_true), rng)
    t_fit = fit_temperature(z, y)
    assert abs(t_fit - t_true) / t_true < 0.10, t_fit


def test_fit_temperature_improves_val_nll_and_ece():
    """Overconfident logits (true T* = 2.5): the fitted T lowers NLL (and ECE) on the val split."""
    rng = np.random.default_rng(7)
    z = rng.normal(0.0, 4.0, (8000, 10))
    y = sample_labels(softmax_np(z / 2.5), rng)
    z_val, y_val = z[:4000], y[:4000]
    z_test, y_test = z[4000:], y[4000:]
    t = fit_temperature(z_val, y_val)  # fitted on validation only
    assert t > 1.0
    assert nll(z_val, y_val, t) < nll(z_val, y_val, 1.0)
    assert nll(z_test, y_test, t) < nll(z_test, y_test, 1.0)
    assert ece_from_logits(z_test, y_test, temperature=t) < ece_from_logits(z_test, y_test)


def test_fit_temperature_is_minimiser_and_deterministic():
    rng = np.random.default_rng(1)
    z = rng.normal(0.0, 2.0, (3000, 5))
    y = sample_labels(softmax_np(z / 1.7), rng)
    t = fit_temperature(z, y)
    assert fit_temperature(z, y) == t
    f = nll(z, y, t)
    for factor in (0.99, 1.01):
        assert f <= nll(z, y, t * factor) + 1e-12
    # scale equivariance: logits c*z need temperature c*T
    assert math.isclose(fit_temperature(3.0 * z, y), 3.0 * t, rel_tol=1e-4)


def test_fit_temperature_separable_hits_lower_bound():
    z = np.array([[5.0, 0.0], [0.0, 5.0], [4.0, 1.0]])
    y = np.array([0, 1, 0])  # every prediction correct -> NLL decreases as T -> 0
    assert fit_temperature(z, y) == pytest.approx(T_BOUNDS[0])


def test_fit_temperature_bad_inputs():
    with pytest.raises(ValueError):
        fit_temperature(np.zeros((2, 3)), np.array([0, 5]))
    with pytest.raises(ValueError):
        fit_temperature(np.zeros((0, 3)), np.zeros(0, int))
