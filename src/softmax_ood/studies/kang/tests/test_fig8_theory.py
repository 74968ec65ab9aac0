"""Fig. 8's FGSM step and Sec. 4.2's toy (issue 45): the attack stays within its step and raises
the loss; the toy is deterministic, fits, and measures what the statements say; a bad epsilon in
the config stops with one sentence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from softmax_ood.config import ConfigError
from softmax_ood.studies.kang import theory
from softmax_ood.studies.kang.adversarial import fgsm

from .conftest import raw_config, validated


def test_fgsm_moves_each_pixel_by_at_most_eps_inside_the_box_and_raises_the_loss():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3)).eval()
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (32, 1, 4, 4)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    meta = {"mean": [0.5], "std": [0.25]}
    xa = fgsm(model, x, y, 0.05, meta)
    assert xa.shape == x.shape and xa.min() >= 0 and xa.max() <= 1
    assert np.abs(xa - x).max() <= 0.05 + 1e-6 and np.abs(xa - x).max() > 0.04

    def loss(z):
        with torch.no_grad():
            out = model((torch.from_numpy(z) - 0.5) / 0.25)
            return float(torch.nn.functional.cross_entropy(out, torch.from_numpy(y)))

    assert loss(xa) > loss(x)


def test_the_toy_is_deterministic_fits_and_its_bound_holds(monkeypatch):
    monkeypatch.setattr(theory, "STEPS", 150)
    a, b = theory.theory_frame([0]), theory.theory_frame([0])
    pd_a = a.set_index("quantity")["value"]
    assert a.equals(b)
    assert pd_a["fitted"] == 1.0  # normalised GD fits the separable toy within 150 steps
    assert pd_a["prop41_bound"] >= 1.0  # Cauchy-Schwarz
    # at 0 degrees the shifted set is the held-out ID set itself
    assert pd_a["output_ratio@0"] == pytest.approx(1.0) and pd_a["projection@0"] == 1.0
    assert pd_a["rank_share_init"] < pd_a["rank_share_trained"]


def test_the_exponential_losses_ocs_is_half_the_log_odds():
    c = theory.exponential_ocs(0.7)
    grid = np.linspace(-2, 2, 40001)
    risk = 0.7 * np.exp(-grid) + 0.3 * np.exp(grid)
    assert c == pytest.approx(grid[risk.argmin()], abs=1e-3)


def test_an_epsilon_outside_the_pixel_range_stops_with_one_sentence():
    raw = raw_config()
    raw["kang"]["adversarial"] = {"epsilons": [0.1, 2.0]}
    with pytest.raises(ConfigError) as e:
        validated(raw)
    assert "epsilons" in str(e.value) and "\n" not in str(e.value).strip()
