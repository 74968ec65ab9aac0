"""Models: shapes, MC dropout with p = 0, Bayes-by-backprop's KL, ensembles, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from softmax_ood.studies.ulmer.data import synthetic_2d
from softmax_ood.studies.ulmer.models import (
    KINDS,
    BayesByBackpropNet,
    BayesLinear,
    MCDropoutNet,
    ModelConfig,
    SingleNet,
    train_model,
)
from softmax_ood.studies.ulmer.tests.helpers import BLOBS, model_cfg, optim

SMALL = model_cfg()
OPT = optim()


@pytest.fixture(scope="module")
def toy():
    return synthetic_2d(40, 3, seed=0, **BLOBS)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_predictions_and_shapes(toy, kind):
    x, y = toy
    a = train_model(kind, x, y, SMALL, OPT, seed=3)
    b = train_model(kind, x, y, SMALL, OPT, seed=3)
    xt = torch.as_tensor(x[:7])
    with torch.no_grad():
        pa = a.predict_probs(xt, generator=torch.Generator().manual_seed(1))
        pb = b.predict_probs(xt, generator=torch.Generator().manual_seed(1))
        la = a.predict_log_probs(xt, generator=torch.Generator().manual_seed(1))
    s = {"single": 1, "mc_dropout": 4, "bbb": 4, "ensemble": 3, "mcmc": 4}[kind]
    assert pa.shape == (s, 7, 3)
    assert torch.equal(pa, pb)
    assert torch.allclose(pa.sum(-1), torch.ones(s, 7), atol=1e-6)
    assert torch.allclose(la.exp(), pa)


def test_different_seeds_differ(toy):
    x, y = toy
    a = train_model("single", x, y, SMALL, OPT, seed=0)
    b = train_model("single", x, y, SMALL, OPT, seed=1)
    assert not torch.equal(a.net.out.weight, b.net.out.weight)


def test_training_leaves_global_rng_untouched(toy):
    x, y = toy
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train_model("mc_dropout", x, y, SMALL, OPT, seed=0)
    assert torch.equal(torch.rand(3), expected)


def test_training_fits_the_toy_data(toy):
    x, y = toy
    model = train_model("single", x, y, SMALL, optim(epochs=60), seed=0)
    with torch.no_grad():
        pred = model.predict_probs(torch.as_tensor(x)).mean(0).argmax(-1).numpy()
    assert (pred == y).mean() > 0.85


def test_mc_dropout_with_p0_equals_single_net(toy):
    x, y = toy
    torch.manual_seed(0)
    single = SingleNet(2, 3, (8, 8))
    mc = MCDropoutNet(2, 3, (8, 8), dropout=0.0, k_samples=5)
    mc.net.load_state_dict(single.net.state_dict())
    xt = torch.as_tensor(x)
    with torch.no_grad():
        ref = single.predict_probs(xt)[0]
        samples = mc.predict_probs(xt)
    assert samples.shape[0] == 5
    assert all(torch.equal(s, ref) for s in samples)
    # and training both from the same seed gives the same weights
    cfg = model_cfg(dropout=0.0)
    a = train_model("single", x, y, cfg, OPT, seed=5)
    b = train_model("mc_dropout", x, y, cfg, OPT, seed=5)
    assert all(
        torch.equal(p, q) for p, q in zip(a.net.parameters(), b.net.parameters(), strict=True)
    )


def test_mc_dropout_samples_differ_and_are_reproducible():
    torch.manual_seed(0)
    mc = MCDropoutNet(2, 3, (32,), dropout=0.5, k_samples=3)
    x = torch.randn(4, 2)
    with torch.no_grad():
        a = mc.predict_probs(x, generator=torch.Generator().manual_seed(0))
        b = mc.predict_probs(x, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, b)
    assert not torch.equal(a[0], a[1])


def test_bbb_kl_hand_value_and_zero_at_prior():
    layer = BayesLinear(1, 1, prior_sigma=1.0, rho_init=0.0)
    rho_half = 0.5 + math.log(-math.expm1(-0.5))  # softplus(rho) = 0.5
    with torch.no_grad():
        layer.weight_mu.zero_()
        layer.weight_rho.fill_(rho_half)
        layer.bias_mu.zero_()
        layer.bias_rho.fill_(rho_half)
    # per parameter: log(1/0.5) + 0.5**2 / 2 - 1/2 = 0.31814718...; two parameters
    assert layer.kl().item() == pytest.approx(2 * 0.3181471805599453, rel=1e-6)

    torch.manual_seed(0)
    net = BayesByBackpropNet(2, 3, (8,), prior_sigma=0.7, rho_init=-3.0, k_samples=2)
    assert net.kl().item() > 0.0
    rho_prior = 0.7 + math.log(-math.expm1(-0.7))  # softplus(rho) = prior sigma
    with torch.no_grad():
        for layer in net.layers:
            layer.weight_mu.zero_()
            layer.bias_mu.zero_()
            layer.weight_rho.fill_(rho_prior)
            layer.bias_rho.fill_(rho_prior)
    assert net.kl().item() == pytest.approx(0.0, abs=1e-5)


def test_bbb_kl_nonnegative_for_random_posteriors():
    gen = torch.Generator().manual_seed(0)
    layer = BayesLinear(5, 4, prior_sigma=0.5, rho_init=0.0)
    for _ in range(5):
        with torch.no_grad():
            for p in layer.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 2)
        assert layer.kl().item() >= 0.0


def test_ensemble_members_are_independent(toy):
    x, y = toy
    ens = train_model("ensemble", x, y, SMALL, OPT, seed=0)
    w = [m.net.out.weight for m in ens.members]
    assert len(w) == 3 and not torch.equal(w[0], w[1])
    # member 0 of run 0 is not the single net of run 0 (own derived seed)
    single = train_model("single", x, y, SMALL, OPT, seed=0)
    assert not torch.equal(w[0], single.net.out.weight)


def test_model_config_has_no_defaults_and_checks_values():
    cfg = model_cfg(hidden=[4, 5])
    assert cfg.hidden == (4, 5) and isinstance(cfg, ModelConfig)
    with pytest.raises(TypeError):
        ModelConfig(hidden=(4,))  # no defaults: every value comes from the config
    with pytest.raises(ValueError, match="dropout"):
        model_cfg(dropout=1.0)
    with pytest.raises(ValueError, match="unknown model kind"):
        train_model("svm", np.zeros((2, 2)), np.array([0, 1]), SMALL, OPT, seed=0)


def test_minibatch_training_is_deterministic(toy):
    x, y = toy
    opt = optim(batch_size=32, epochs=5)
    a = train_model("bbb", x, y, SMALL, opt, seed=2)
    b = train_model("bbb", x, y, SMALL, opt, seed=2)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def test_side_by_side_ensemble_members_train_as_if_alone(toy):
    """Stacked training: each member's weights equal those it gets when trained alone."""
    from softmax_ood.studies.ulmer.models import SingleNet, _fit_members

    x, y = (torch.as_tensor(a) for a in toy)
    x = x.to(torch.float32)

    def members(seeds):
        out = []
        for s in seeds:
            torch.manual_seed(s)
            out.append(SingleNet(2, 3, (8,)))
        return out

    cfg = optim(epochs=3, batch_size=32)
    both = members([11, 12])
    _fit_members(both, x, y, cfg, [11, 12])
    alone = members([12])
    _fit_members(alone, x, y, cfg, [12])
    for a, b in zip(both[1].parameters(), alone[0].parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_gaussian_control_tends_to_its_output_bias_far_out(toy):
    """The control's last hidden units exp(-t^2) vanish along a ray: logits -> output bias."""
    model = train_model("control", *toy, model_cfg(hidden=(8, 8)), optim(epochs=5), seed=0)
    x = torch.tensor([[1.0, 0.5]], dtype=torch.float64) * 1e4
    net = model.to(torch.float64)
    with torch.no_grad():
        z = net.sample_logits(x)[0, 0]
    torch.testing.assert_close(z, net.net.out.bias.detach(), rtol=0, atol=1e-9)
    relu = train_model("single", *toy, model_cfg(hidden=(8, 8)), optim(epochs=5), seed=0)
    relu = relu.to(torch.float64)
    with torch.no_grad():
        z1, z2, z4 = (relu.sample_logits(x * k)[0, 0] for k in (1.0, 2.0, 4.0))
    # the ReLU network's logits keep growing, linearly along the ray
    assert float((z2 - z1).abs().max()) > 10.0
    torch.testing.assert_close(z4 - z2, 2 * (z2 - z1), rtol=1e-9, atol=1e-6)
