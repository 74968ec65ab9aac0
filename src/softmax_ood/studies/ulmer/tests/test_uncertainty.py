"""Hand-checked values of the §3.3 metrics and of their input gradients."""

from __future__ import annotations

import math

import pytest
import torch

from softmax_ood.studies.ulmer.models import DeepEnsemble, SingleNet
from softmax_ood.studies.ulmer.uncertainty import (
    METRICS,
    all_metrics,
    class_variance,
    expected_entropy,
    gradient_norm,
    max_prob,
    mean_log_probs,
    metrics_and_gradients,
    mutual_information,
    predictive_entropy,
)


def _lp(probs) -> torch.Tensor:
    """Log of hand-written probabilities ``(S, N, C)`` (``log 0 = -inf`` on purpose)."""
    return torch.tensor(probs, dtype=torch.float64).log()


def test_uniform_probabilities():
    c = 4
    lp = _lp([[[0.25] * c], [[0.25] * c], [[0.25] * c]])  # S = 3 identical uniform samples
    assert max_prob(lp).item() == pytest.approx(1 / c)
    assert predictive_entropy(lp).item() == pytest.approx(math.log(c))
    assert class_variance(lp).item() == pytest.approx(0.0, abs=1e-15)
    assert mutual_information(lp).item() == pytest.approx(0.0, abs=1e-12)


def test_one_hot_has_zero_entropy_and_no_nan():
    lp = _lp([[[1.0, 0.0, 0.0]]])  # contains log 0 = -inf
    assert max_prob(lp).item() == 1.0
    assert predictive_entropy(lp).item() == 0.0
    assert expected_entropy(lp).item() == 0.0
    assert class_variance(lp).item() == 0.0


def test_hand_computed_two_sample_values():
    # p1 = (0.8, 0.2), p2 = (0.4, 0.6): mean (0.6, 0.4); each class varies by +-0.2 -> var 0.04
    lp = _lp([[[0.8, 0.2]], [[0.4, 0.6]]])
    assert max_prob(lp).item() == pytest.approx(0.6)
    assert class_variance(lp).item() == pytest.approx(0.04)
    assert predictive_entropy(lp).item() == pytest.approx(0.6730116670092565)  # H(.6, .4)
    assert expected_entropy(lp).item() == pytest.approx(0.5867070452737222)  # (H(.8,.2)+H(.4,.6))/2
    assert mutual_information(lp).item() == pytest.approx(0.08630462173553433)
    # fully disagreeing one-hot samples: mean (1/2, 1/2), variance 1/4, MI = log 2
    lp = _lp([[[1.0, 0.0]], [[0.0, 1.0]]])
    assert max_prob(lp).item() == pytest.approx(0.5)
    assert class_variance(lp).item() == pytest.approx(0.25)
    assert mutual_information(lp).item() == pytest.approx(math.log(2))


def test_mean_log_probs_is_log_of_mean():
    lp = _lp([[[0.8, 0.2]], [[0.4, 0.6]]])
    assert torch.allclose(mean_log_probs(lp).exp(), torch.tensor([[0.6, 0.4]], dtype=torch.float64))


def test_huge_logits_give_finite_metrics():
    logits = torch.tensor([[[1e4, 0.0, -1e4], [-2e4, 3e4, 0.0]]], dtype=torch.float32)
    naive = logits.double().exp() / logits.double().exp().sum(-1, keepdim=True)
    assert torch.isnan(naive).any()  # the naive softmax breaks here
    lp = torch.log_softmax(logits, dim=-1)
    out = all_metrics(lp)
    for values in out.values():
        assert torch.isfinite(values).all()
    assert torch.equal(out["max_prob"], torch.ones(2, dtype=torch.float64))
    assert torch.equal(out["predictive_entropy"], torch.zeros(2, dtype=torch.float64))
    # two samples saturated on different classes: finite, mean (1/2, 1/2)
    lp2 = torch.log_softmax(torch.tensor([[[1e4, 0.0]], [[0.0, 1e4]]]), dim=-1)
    assert max_prob(lp2).item() == pytest.approx(0.5)
    assert mutual_information(lp2).item() == pytest.approx(math.log(2))


def test_metric_gradients_are_finite_with_zero_probabilities():
    logits = torch.tensor([[[1e4, 0.0, float("-inf")]], [[0.5, 0.0, 0.2]]], requires_grad=True)
    lp = torch.log_softmax(logits.double(), dim=-1)
    for fn in METRICS.values():
        (grad,) = torch.autograd.grad(fn(lp).sum(), logits, retain_graph=True)
        assert torch.isfinite(grad).all()


def _linear_net(weight) -> SingleNet:
    net = SingleNet(2, 2, hidden=())
    with torch.no_grad():
        net.net.out.weight.copy_(torch.tensor(weight))
        net.net.out.bias.zero_()
    return net.double()


def test_gradient_norm_of_max_prob_hand_checked():
    # logits (x1, -x1): p = sigmoid(2 x1); at x1 = 0.5, d p / d x = p (1 - p) (2, 0)
    net = _linear_net([[1.0, 0.0], [-1.0, 0.0]])
    x = torch.tensor([[0.5, 3.0]], dtype=torch.float64)
    norm = gradient_norm("max_prob", net, x)
    assert norm.item() == pytest.approx(0.3932238664829637)  # 2 * s(1) * (1 - s(1))


def test_identical_ensemble_has_zero_mutual_information_and_gradient():
    torch.manual_seed(0)
    member = SingleNet(2, 3, hidden=(8,)).double()
    ens = DeepEnsemble([member, member, member])
    x = torch.randn(5, 2, dtype=torch.float64)
    res = metrics_and_gradients(ens, x)
    mi, mi_grad = res["mutual_information"]
    assert mi.abs().max().item() < 1e-12
    assert mi_grad.max().item() < 1e-12
    assert res["class_variance"][0].abs().max().item() < 1e-15
    # the single member's entropy equals the ensemble's predictive entropy
    single = metrics_and_gradients(member, x, ["predictive_entropy"])["predictive_entropy"]
    assert torch.allclose(res["predictive_entropy"][0], single[0], atol=1e-12)
