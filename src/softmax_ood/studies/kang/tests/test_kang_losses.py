"""The two Kang et al. losses appended to :mod:`softmax_ood.losses`: reward MSE and Gaussian NLL."""

from __future__ import annotations

import math

import pytest
import torch

from softmax_ood.losses import LOSSES, GaussianNLLLoss, RewardMSELoss, build_loss

PAPER_REWARDS = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}


def test_registered_with_output_counts():
    assert LOSSES["reward_mse"] is RewardMSELoss and LOSSES["gaussian_nll"] is GaussianNLLLoss
    assert RewardMSELoss.num_outputs(10) == 11 and GaussianNLLLoss.num_outputs(10) == 2
    loss = build_loss("reward_mse", PAPER_REWARDS)
    assert getattr(loss, "num_outputs", None)(3) == 4
    assert getattr(build_loss("gaussian_nll", {}), "num_outputs", None)(3) == 2
    for name in ("reward_mse", "gaussian_nll"):
        assert LOSSES[name].requires_head == "linear"


def test_reward_params_have_no_code_defaults():
    with pytest.raises(ValueError, match="reward_mse.*correct_reward"):
        build_loss("reward_mse", {})
    with pytest.raises(TypeError):
        RewardMSELoss()


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"correct_reward": float("nan")}, "correct_reward"),
        ({"wrong_reward": "x"}, "wrong_reward"),
        ({"abstain_reward": True}, "abstain_reward"),
        ({"correct_reward": -5.0}, "must exceed"),
    ],
)
def test_reward_params_checked(kw, match):
    with pytest.raises(ValueError, match=match):
        RewardMSELoss(**{**PAPER_REWARDS, **kw})


def test_reward_targets_and_loss_by_hand():
    loss = RewardMSELoss(**PAPER_REWARDS)
    target = torch.tensor([0, 2])
    expected = torch.tensor([[1.0, -4.0, -4.0, 0.0], [-4.0, -4.0, 1.0, 0.0]])
    assert torch.equal(loss.reward_targets(target, 3), expected)
    assert loss(expected.clone(), target).item() == 0.0
    outputs = torch.zeros(2, 4)
    # squared errors: (1 + 16 + 16 + 0) per row, mean over 8 entries
    assert loss(outputs, target).item() == pytest.approx(66.0 / 8.0)
    with pytest.raises(ValueError, match="num_classes \\+ 1"):
        loss(torch.zeros(2), target)


def test_reward_ocs_is_the_loss_minimiser():
    """The constant prediction minimising the reward MSE is the mean reward per action."""
    loss = RewardMSELoss(**PAPER_REWARDS)
    target = torch.tensor([0, 0, 1, 2, 2, 2])
    p = torch.tensor([2 / 6, 1 / 6, 3 / 6])
    ocs = torch.cat([p * 1.0 + (1 - p) * -4.0, torch.zeros(1)])
    f = ocs.repeat(len(target), 1).requires_grad_(True)
    loss(f, target).backward()
    assert f.grad.sum(0).abs().max().item() < 1e-6


def test_gaussian_nll_matches_normal_log_prob():
    outputs = torch.tensor([[0.5, -1.0], [3.0, 2.0], [-2.0, 0.3]])
    target = torch.tensor([1, 4, 0])
    mean, std = GaussianNLLLoss.mean_std(outputs)
    assert torch.allclose(std, torch.nn.functional.softplus(outputs[:, 1]) + 1e-6)
    ref = -torch.distributions.Normal(mean, std).log_prob(target.float()).mean()
    assert GaussianNLLLoss()(outputs, target).item() == pytest.approx(ref.item(), rel=1e-6)
    with pytest.raises(ValueError, match="\\(N, 2\\)"):
        GaussianNLLLoss()(torch.zeros(3, 3), target)


def test_gaussian_ocs_is_the_loss_minimiser():
    """At mean = label mean and std = population std of the labels the gradient of the mean
    loss over a constant prediction vanishes."""
    y = torch.tensor([0.0, 1.0, 1.0, 5.0, 9.0], dtype=torch.float64)
    mu, sd = y.mean().item(), y.std(unbiased=False).item()
    raw_sd = math.log(math.expm1(sd - GaussianNLLLoss.min_std))  # inverse softplus
    c = torch.tensor([mu, raw_sd], dtype=torch.float64, requires_grad=True)
    GaussianNLLLoss()(c.expand(len(y), 2), y).backward()
    assert c.grad.abs().max().item() < 1e-9


def test_new_losses_are_differentiable():
    torch.manual_seed(0)
    target = torch.randint(0, 5, (8,))
    for name, kw, width in (("reward_mse", PAPER_REWARDS, 6), ("gaussian_nll", {}, 2)):
        x = torch.randn(8, width, requires_grad=True)
        value = build_loss(name, kw)(x, target)
        assert value.ndim == 0 and torch.isfinite(value)
        value.backward()
        assert torch.isfinite(x.grad).all()
