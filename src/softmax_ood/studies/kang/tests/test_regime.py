"""Issues 15/27: the models are judged against their OCS's loss, rotation's level 0 is the clean
image and a round trip is not a blur, a level that changes nothing is dropped, and the discriminator's
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


def test_the_rotation_group_scores_its_round_trips_and_the_far_group_its_floor_battery():
    from softmax_ood.studies.kang.discrimination import ROUNDTRIP, score_group

    rng = np.random.default_rng(0)
    x = np.zeros((40, 1, 16, 16), dtype=np.float32)
    x[:, :, 3:13, 4:12] = rng.uniform(0.2, 1.0, (40, 1, 10, 8))
    far = rng.uniform(0, 1, (40, 1, 16, 16)).astype(np.float32)
    grid = np.concatenate([x, x, rotate(x, 15.0), far])
    index = pd.DataFrame(
        {
            "eval_set": ["id", "rotation@0", "rotation@15", "far:noise"],
            "shift": ["none", "rotation", "rotation", "far_ood"],
            "group": ["id", "rotation", "rotation", "far_ood"],
            "level": [0.0, 0.0, 15.0, np.nan],
            "start": [0, 40, 80, 120],
            "stop": [40, 80, 120, 160],
            "is_id": [True, False, False, False],
        }
    )
    feat = {"name": "pixels", "params": {}}
    disc = {"n_repeats": 2, "seed": 0, "heldout_fraction": 0.5, "roundtrip_angles": [15.0]}
    rot = score_group(x, grid, index, "rotation", featurizer=feat, discriminator=disc)
    assert list(rot["eval_set"]) == ["rotation@0", "rotation@15", "roundtrip@15"]
    assert rot["shift"].iloc[-1] == ROUNDTRIP and rot["floor_n"].eq(0).all()
    fo = score_group(x, grid, index, "far_ood", featurizer=feat, discriminator=disc)
    # the premise reads the selection half (0.5 by default) of the far set's 40 images
    assert fo["floor_n"].iloc[0] == 20 and 0 <= fo["floor_fpr95"].iloc[0] <= 1
    assert fo["floor_accepted"].iloc[0] == round(20 * fo["floor_fpr95"].iloc[0])
    # uniform noise is solved by the battery (no spatial correlation, lit border), in both halves
    assert fo["floor_fpr95"].iloc[0] == 0.0 and fo["floor_confirmation_fpr95"].iloc[0] == 0.0
    row = fo.iloc[0]
    assert row["floor_fpr95"] == min(row["floor_tuning_fpr95"], row["floor_heldout_fpr95"])
    assert row["floor_detector"] in (row["floor_tuning_detector"], row["floor_heldout_detector"])


def test_the_far_floor_reads_only_its_selection_half():
    """Perturbing the confirmation images moves the reported confirmation FPR95 at most, never
    the premise's selection-half floor; the two halves are disjoint and cover the set."""
    from softmax_ood.analysis.battery import Battery
    from softmax_ood.studies.kang.discrimination import far_floor, floor_split

    rng = np.random.default_rng(1)
    train = np.zeros((200, 1, 16, 16))
    train[:, :, 3:13, 4:12] = rng.uniform(0.2, 1.0, (200, 1, 10, 8))
    test = np.zeros((60, 1, 16, 16))
    test[:, :, 3:13, 4:12] = rng.uniform(0.2, 1.0, (60, 1, 10, 8))
    far = np.zeros((50, 1, 16, 16))
    far[:, :, 2:14, 2:14] = rng.uniform(0.0, 0.8, (50, 1, 12, 12))
    battery = Battery.fit(train)
    s_id = battery.scores(test)
    sel, conf = floor_split(50, 0.5, 0, "far:x")
    assert len(sel) == 25 and not set(sel) & set(conf) and len(set(sel) | set(conf)) == 50
    a = far_floor(battery, s_id, "far:x", far, fraction=0.5, seed=0)
    moved = far.copy()
    moved[conf] = train[:25]  # the confirmation half now looks exactly like ID images
    b = far_floor(battery, s_id, "far:x", moved, fraction=0.5, seed=0)
    for k in ("floor_fpr95", "floor_detector", "floor_tuning_fpr95", "floor_heldout_fpr95"):
        assert a[k] == b[k]
    assert b["floor_confirmation_fpr95"] >= a["floor_confirmation_fpr95"]
    with pytest.raises(ValueError, match="floor selection share"):
        floor_split(1, 0.5, 0, "far:x")
