"""Issue 15: the models are judged against their OCS's loss, rotation's level 0 goes through the
same resampling as every angle, a level that changes nothing is dropped, and the discriminator's
regularisation is per sample (the authors' alpha) and chosen on held-out data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from softmax_ood.corruptions import rotate
from softmax_ood.discriminator import ood_score
from softmax_ood.losses import build_loss
from softmax_ood.studies.kang.claims import kept_levels
from softmax_ood.studies.kang.ocs import ocs_loss, optimal_constant_solution
from softmax_ood.studies.kang.study import spec as study_spec
from softmax_ood.studies.kang.tests.controls import frames

REWARDS = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}
LABELS = np.array([0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 4, 4])


@pytest.mark.parametrize("loss", ["ce", "reward_mse", "gaussian_nll"])
def test_ocs_loss_is_the_loss_of_the_constant_prediction(loss):
    """The closed form equals the real loss module evaluated on the constant OCS output."""
    params = REWARDS if loss == "reward_mse" else {}
    ocs = optimal_constant_solution(loss, LABELS, 5, params)
    n = len(LABELS)
    if loss == "ce":
        out = np.log(np.maximum(ocs, 1e-300))
    elif loss == "reward_mse":
        out = ocs
    else:  # (mean, pre-softplus std): softplus^-1(s) = log(exp(s) - 1)
        out = np.array([ocs[0], math.log(math.expm1(ocs[1]))])
    outputs = torch.tensor(np.tile(out, (n, 1)), dtype=torch.float64)
    fn = build_loss(loss, params)
    value = float(fn(outputs, torch.from_numpy(LABELS)))
    assert ocs_loss(loss, LABELS, 5, params) == pytest.approx(value, rel=1e-6)


def test_ocs_losses_of_balanced_digits_match_the_review():
    y = np.repeat(np.arange(5), 20)
    assert ocs_loss("ce", y, 5) == pytest.approx(math.log(5))
    assert ocs_loss("reward_mse", y, 5, REWARDS) == pytest.approx(20 / 6)  # 3.33
    assert ocs_loss("gaussian_nll", y, 5) == pytest.approx(0.5 * math.log(2 * math.pi * 2) + 0.5)


def test_rotation_level_zero_is_the_identity_and_a_round_trip_is_not_a_blur():
    rng = np.random.default_rng(0)
    x = np.zeros((4, 1, 28, 28), dtype=np.float32)
    x[:, :, 6:22, 8:20] = rng.uniform(0.2, 1.0, (4, 1, 16, 12))  # an object on a black frame
    assert np.array_equal(rotate(x, 0.0), x)  # level 0 is the clean image, bit for bit
    back = rotate(rotate(x, 15.0), -15.0)
    assert np.abs(back - x).mean() < 0.5 * np.abs(rotate(x, 15.0) - x).mean()
    with pytest.raises(ValueError, match="degrees must be finite"):
        rotate(x, float("nan"))


def test_a_level_that_changes_nothing_is_dropped(cfg):
    spec = study_spec(cfg)
    lv = frames(spec, "paper")["levels"]
    noop = "gaussian_blur@2"
    lv.loc[lv["eval_set"] == noop, "change_per_image"] = pd.Series(
        [[0.0] * 20], index=lv.index[lv["eval_set"] == noop]
    )
    kept = kept_levels(lv, spec)
    assert kept["gaussian_blur"] == [0.0, 1.0, 3.0, 4.0, 5.0]
    assert kept["rotation"][0] == 0.0 and len(kept["rotation"]) == 1 + len(spec["rotations"])


def test_per_sample_alpha_pulls_the_score_toward_one_half():
    rng = np.random.default_rng(0)
    a = rng.normal(0.0, 1.0, (400, 20))
    b = rng.normal(0.3, 1.0, (400, 20))
    kw = dict(n_repeats=3, seed=0, heldout_fraction=0.25)
    weak = ood_score(a, b, alpha=1e-4, **kw).mean
    strong = ood_score(a, b, alpha=10.0, **kw).mean
    null = ood_score(a, rng.normal(0.0, 1.0, (400, 20)), alpha=10.0, **kw).mean
    assert weak > strong > 0.5
    assert abs(null - 0.5) < 0.02
    with pytest.raises(ValueError, match="alpha must be a finite positive number"):
        ood_score(a, b, alpha=0.0, **kw)
