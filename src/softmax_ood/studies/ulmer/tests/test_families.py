"""Every model family with hand-built weights and hand-checked predictions and metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from softmax_ood.studies.ulmer.models import (
    BayesByBackpropNet,
    DeepEnsemble,
    MCDropoutNet,
    SingleNet,
)
from softmax_ood.studies.ulmer.scaling import scale_inputs
from softmax_ood.studies.ulmer.softmax_note import naive_softmax
from softmax_ood.studies.ulmer.uncertainty import METRICS

X = torch.tensor([[2.0]])  # hidden = relu(2) = 2, logits (2s, -2s) for output weights (s, -s)
P4 = 1.0 / (1.0 + math.exp(-4.0))  # softmax([2, -2])[0]


def _set_single(net: SingleNet, sign: float = 1.0) -> SingleNet:
    with torch.no_grad():
        net.net.hidden[0].weight.fill_(1.0)
        net.net.hidden[0].bias.zero_()
        net.net.out.weight.copy_(torch.tensor([[sign], [-sign]]))
        net.net.out.bias.zero_()
    return net


def _h(p: float) -> float:
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def test_single_network_hand_value():
    net = _set_single(SingleNet(1, 2, (1,)))
    with torch.no_grad():
        p = net.predict_probs(X)
    assert p.shape == (1, 1, 2)
    assert p[0, 0, 0].item() == pytest.approx(P4, rel=1e-6)
    lp = net.predict_log_probs(X)
    assert METRICS["max_prob"](lp).item() == pytest.approx(P4, rel=1e-6)
    assert METRICS["predictive_entropy"](lp).item() == pytest.approx(_h(P4), rel=1e-5)
    assert METRICS["class_variance"](lp).item() == 0.0
    assert METRICS["mutual_information"](lp).item() == pytest.approx(0.0, abs=1e-12)


def test_mc_dropout_hand_value_with_p0_and_with_every_unit_dropped():
    mc = MCDropoutNet(1, 2, (1,), dropout=0.0, k_samples=3)
    mc.net.load_state_dict(_set_single(SingleNet(1, 2, (1,))).net.state_dict())
    with torch.no_grad():
        p = mc.predict_probs(X)
    assert p.shape == (3, 1, 2)
    assert torch.allclose(p[:, 0, 0], torch.full((3,), P4))
    # p close to 1 drops the only hidden unit in (almost) every sample: logits 0, uniform
    mc.net.dropout = 0.999999
    with torch.no_grad():
        q = mc.predict_probs(X, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(q, torch.full_like(q, 0.5))


def test_bayes_by_backprop_with_zero_posterior_std_is_its_mean_network():
    bbb = BayesByBackpropNet(1, 2, (1,), prior_sigma=1.0, rho_init=-60.0, k_samples=4)
    with torch.no_grad():
        bbb.layers[0].weight_mu.fill_(1.0)
        bbb.layers[0].bias_mu.zero_()
        bbb.layers[1].weight_mu.copy_(torch.tensor([[1.0], [-1.0]]))
        bbb.layers[1].bias_mu.zero_()
        p = bbb.predict_probs(X, generator=torch.Generator().manual_seed(0))
    assert p.shape == (4, 1, 2)
    assert torch.allclose(p[:, 0, 0], torch.full((4,), P4), atol=1e-7)
    lp = torch.log(p.double())
    assert METRICS["mutual_information"](lp).item() == pytest.approx(0.0, abs=1e-9)


def test_ensemble_of_opposite_members_hand_values():
    ens = DeepEnsemble(
        [_set_single(SingleNet(1, 2, (1,)), 1.0), _set_single(SingleNet(1, 2, (1,)), -1.0)]
    )
    with torch.no_grad():
        lp = ens.predict_log_probs(X)
    assert lp.shape == (2, 1, 2)
    # mean prediction (1/2, 1/2): max prob 1/2, entropy log 2; each member has entropy H(P4)
    assert METRICS["max_prob"](lp).item() == pytest.approx(0.5)
    assert METRICS["predictive_entropy"](lp).item() == pytest.approx(math.log(2))
    assert METRICS["mutual_information"](lp).item() == pytest.approx(math.log(2) - _h(P4))
    # class variance: each class probability is P4 or 1 - P4 around 1/2: (P4 - 1/2)^2
    assert METRICS["class_variance"](lp).item() == pytest.approx((P4 - 0.5) ** 2)


def test_ensemble_of_identical_members_equals_one_member():
    a = _set_single(SingleNet(1, 2, (1,)))
    ens = DeepEnsemble([a, _set_single(SingleNet(1, 2, (1,)))])
    with torch.no_grad():
        lp = ens.predict_log_probs(X)
    assert METRICS["mutual_information"](lp).item() == pytest.approx(0.0, abs=1e-12)
    assert METRICS["class_variance"](lp).item() == 0.0
    assert METRICS["max_prob"](lp).item() == pytest.approx(P4, rel=1e-6)


def test_models_use_the_stable_softmax_where_the_naive_one_is_nan():
    net = _set_single(SingleNet(1, 2, (1,))).double()
    x = torch.tensor([[1e4]], dtype=torch.float64)  # logits (1e4, -1e4)
    with torch.no_grad():
        logits = net.sample_logits(x)
        lp = net.predict_log_probs(x)
    assert np.isnan(naive_softmax(logits.numpy())[..., 0]).all()  # inf / inf
    assert torch.isfinite(lp[..., 0]).all() and lp[0, 0, 0].item() == 0.0
    assert METRICS["max_prob"](lp).item() == 1.0
    assert METRICS["predictive_entropy"](lp).item() == 0.0


def test_scale_inputs_about_an_origin_hand_values():
    x = torch.tensor([[1.0, 2.0]])
    # raw value r = x*std + mean; scaling r by alpha about raw 0 = origin -mean/std
    out = scale_inputs(x, 10.0, 0, origin=np.array([-3.0, 0.0]))
    assert torch.equal(out, torch.tensor([[37.0, 2.0]]))  # -3 + 10 * (1 + 3)
