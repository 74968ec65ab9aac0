"""OCS per loss, prediction extractors and distances, with hand-checked values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from softmax_ood.losses import GaussianNLLLoss
from softmax_ood.studies.kang.ocs import (
    distance_to_ocs,
    kl_categorical,
    kl_gaussian,
    mean_prediction,
    ocs_cross_entropy,
    ocs_gaussian,
    ocs_reward,
    optimal_constant_solution,
    per_sample_distance,
    predict,
    squared_distance,
)

REWARDS = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}
BALANCED = np.repeat(np.arange(10), 7)


def test_ce_ocs_of_balanced_labels_is_uniform():
    assert np.allclose(ocs_cross_entropy(BALANCED, 10), np.full(10, 0.1))
    assert np.allclose(ocs_cross_entropy(np.array([0, 0, 0, 2]), 3), [0.75, 0.0, 0.25])


def test_reward_ocs_balanced_ten_classes():
    ocs = ocs_reward(BALANCED, 10, **REWARDS)
    assert ocs.shape == (11,)
    assert np.allclose(ocs[:10], 0.1 - 0.9 * 4) and np.allclose(ocs[:10], -3.5)
    assert ocs[10] == 0.0 and np.argmax(ocs) == 10  # the OCS policy abstains


def test_gaussian_ocs_is_mean_and_population_std():
    y = np.array([0.0, 2.0, 4.0, 6.0])
    assert np.allclose(ocs_gaussian(y), [3.0, np.sqrt(5.0)])
    assert np.allclose(ocs_gaussian(BALANCED), [4.5, np.sqrt(8.25)])


def test_dispatcher_and_its_checks():
    assert np.allclose(optimal_constant_solution("ce", BALANCED, 10), 0.1)
    assert np.allclose(optimal_constant_solution("reward_mse", BALANCED, 10, REWARDS)[:10], -3.5)
    assert np.allclose(
        optimal_constant_solution("gaussian_nll", BALANCED, 10), ocs_gaussian(BALANCED)
    )
    with pytest.raises(ValueError, match="unknown loss 'mse'"):
        optimal_constant_solution("mse", BALANCED, 10)
    with pytest.raises(ValueError, match="wrong_reward"):
        optimal_constant_solution("reward_mse", BALANCED, 10, {"correct_reward": 1.0})
    with pytest.raises(ValueError, match="labels must lie in"):
        ocs_cross_entropy(np.array([0, 10]), 10)


def test_kl_of_ocs_to_itself_is_zero():
    q = ocs_cross_entropy(np.array([0, 1, 1, 2, 2, 2]), 3)
    logits = np.log(q)[None].repeat(4, 0) + np.arange(4)[:, None]  # any shift, same softmax
    assert np.allclose(kl_categorical(logits, q), 0.0, atol=1e-12)
    assert distance_to_ocs(
        "gaussian_nll", _raw_gaussian([[2.0, 3.0]]), [2.0, 3.0]
    ) == pytest.approx(0.0, abs=1e-9)
    assert distance_to_ocs("reward_mse", np.array([[-3.5, 0.0]]), [-3.5, 0.0]) == 0.0


def test_kl_categorical_matches_torch_and_is_stable():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 4)) * 3
    q = np.array([0.1, 0.2, 0.3, 0.4])
    ref = torch.nn.functional.kl_div(
        torch.log(torch.tensor(q))[None].expand(5, 4),
        torch.log_softmax(torch.tensor(z), 1),
        reduction="none",
        log_target=True,
    ).sum(1)
    assert np.allclose(kl_categorical(z, q), ref.numpy())
    huge = np.array([[1000.0, 0.0, 0.0, 0.0]])  # one-hot prediction: KL = -log q_0
    assert kl_categorical(huge, q)[0] == pytest.approx(-np.log(0.1))
    with pytest.raises(ValueError, match="every entry > 0"):
        kl_categorical(z, [0.5, 0.5, 0.0, 0.0])


def test_kl_gaussian_matches_torch():
    mu, sd = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 3.0])
    ref = torch.distributions.kl_divergence(
        torch.distributions.Normal(torch.tensor(mu), torch.tensor(sd)),
        torch.distributions.Normal(torch.tensor(4.5), torch.tensor(2.0)),
    )
    assert np.allclose(kl_gaussian(mu, sd, 4.5, 2.0), ref.numpy())


def _raw_gaussian(mean_std):
    """Raw outputs whose (mean, softplus-std) are ``mean_std``."""
    ms = np.asarray(mean_std, dtype=np.float64)
    return np.stack([ms[:, 0], np.log(np.expm1(ms[:, 1] - GaussianNLLLoss.min_std))], axis=1)


def test_predictions_follow_the_losses():
    z = torch.tensor([[0.0, np.log(3.0)], [1.0, -2.0]])
    assert np.allclose(
        predict("ce", z), [[0.25, 0.75], [1 / (1 + np.exp(-3)), 1 - 1 / (1 + np.exp(-3))]]
    )
    assert np.array_equal(predict("reward_mse", z), z.numpy().astype(np.float64))
    mean, std = GaussianNLLLoss.mean_std(z)
    assert np.allclose(predict("gaussian_nll", z), np.stack([mean, std], 1), atol=1e-7)
    assert np.allclose(mean_prediction("ce", z), predict("ce", z).mean(0))
    with pytest.raises(ValueError, match="2 columns"):
        predict("gaussian_nll", np.zeros((2, 3)))


def test_squared_distance_by_hand():
    out = np.array([[0.0, 0.0], [1.0, 2.0]])
    assert np.allclose(squared_distance(out, [1.0, 0.0]), [1.0, 4.0])
    assert distance_to_ocs("reward_mse", out, [1.0, 0.0]) == 2.5
    assert np.allclose(per_sample_distance("reward_mse", out, [1.0, 0.0]), [1.0, 4.0])
