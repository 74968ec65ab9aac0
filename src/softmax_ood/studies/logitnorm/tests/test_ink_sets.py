"""The ink-matched far-OOD sets: digit preprocessing, empty borders, sources, not pixel-trivial."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from softmax_ood.analysis.premises import pixel_floor
from softmax_ood.data import _embedded_ood, _sources

INK = ["glyphs", "textures_ink", "photos_ink"]


@pytest.fixture(scope="module")
def digits():
    d = load_digits()
    x = d.images[d.target < 5] / 16.0
    return x[:400], x[400:580]


@pytest.mark.parametrize("name", INK)
def test_digit_preprocessing_and_a_floor_that_does_not_solve_them(name, digits):
    x = _embedded_ood(name, 150, np.random.default_rng(0))
    assert x.shape == (150, 8, 8) and x.min() >= 0 and x.max() <= 1
    assert np.allclose(x * 16, np.round(x * 16))  # the 17 grey levels of optdigits
    again = _embedded_ood(name, 150, np.random.default_rng(0))
    assert np.array_equal(x, again)  # deterministic
    train, test = digits
    floor = pixel_floor(test, x, reference=train)
    # the old crops are solved by a lit-pixel count (FPR95 0 %); these are not
    assert floor["fpr95"] > 15.0, floor


@pytest.mark.parametrize("name", ["textures_ink", "photos_ink"])
def test_ink_crops_keep_the_ink_inside_a_digit_shaped_box(name):
    x = _embedded_ood(name, 200, np.random.default_rng(1))
    side = x[:, :, [0, -1]].mean()  # the box is 20-30 of 32 pixels wide: little ink at the sides
    assert side < 0.1 and side < x[:, :, 3:5].mean() / 3


@pytest.mark.parametrize("name", INK)
def test_sources_and_licences_are_recorded(name):
    src = _sources(name)
    assert src["source"] and src["licence"] and "n/a" not in src["licence"]
