"""Losses: formulas, LogitNorm properties (Wei et al. 2022) and the build_loss registry."""

import math

import pytest
import torch
import torch.nn.functional as F

from softmax_ood.losses import (
    LOSSES,
    CrossEntropy,
    GodinLoss,
    LogitNormLoss,
    LogitPenaltyLoss,
    build_loss,
)

GEN = torch.Generator().manual_seed(0)


def _batch(n=16, k=10, scale=3.0, dtype=torch.float64):
    logits = scale * torch.randn(n, k, generator=GEN, dtype=dtype)
    target = torch.randint(0, k, (n,), generator=GEN)
    return logits, target


def _per_sample(loss, logits, target):
    return torch.stack([loss(logits[i : i + 1], target[i : i + 1]) for i in range(len(target))])


def paper_bound(k, tau):
    """Wei et al. 2022, Prop. 3.3."""
    return math.log(1 + (k - 1) * math.exp(-2 / tau))


def exact_minimum(k, tau):
    """min over directions of the LogitNorm loss, reached at f ∝ (1, -1/(k-1), ..., -1/(k-1))."""
    return math.log(1 + (k - 1) * math.exp(-math.sqrt(k / (k - 1)) / tau))


# ----------------------------------------------------------------- cross-entropy


def test_ce_matches_hand_computation():
    logits = torch.tensor([[1.0, 2.0, 3.0], [0.5, -0.5, 0.0]], dtype=torch.float64)
    target = torch.tensor([2, 1])
    by_hand = [
        -(3.0 - math.log(math.e**1 + math.e**2 + math.e**3)),
        -(-0.5 - math.log(math.exp(0.5) + math.exp(-0.5) + 1.0)),
    ]
    assert CrossEntropy()(logits, target).item() == pytest.approx(sum(by_hand) / 2, rel=1e-12)


def test_ce_gradient_is_softmax_minus_onehot():
    logits, target = _batch(n=5, k=4)
    logits.requires_grad_(True)
    CrossEntropy()(logits, target).backward()
    expected = (torch.softmax(logits.detach(), 1) - F.one_hot(target, 4)) / 5  # mean over N
    torch.testing.assert_close(logits.grad, expected, rtol=1e-10, atol=1e-12)


def test_godin_loss_is_plain_ce_and_heads_declared():
    logits, target = _batch()
    torch.testing.assert_close(GodinLoss()(logits, target), F.cross_entropy(logits, target))
    assert GodinLoss.requires_head == "godin"
    for name in ("ce", "logitnorm", "logitpenalty"):
        assert LOSSES[name].requires_head == "linear"


# ----------------------------------------------------------------- LogitNorm


def test_logitnorm_matches_reference_implementation():
    logits, target = _batch()
    tau = 0.04
    norms = torch.norm(logits, p=2, dim=-1, keepdim=True) + 1e-7
    reference = F.cross_entropy(torch.div(logits, norms) / tau, target)
    torch.testing.assert_close(LogitNormLoss(tau=tau)(logits, target), reference, rtol=0, atol=0)


def test_logitnorm_equals_ce_on_normalised_logits():
    logits, target = _batch()
    tau = 0.5
    normalised = logits / (tau * logits.norm(dim=1, keepdim=True))
    torch.testing.assert_close(
        LogitNormLoss(tau=tau, eps=0.0)(logits, target), F.cross_entropy(normalised, target)
    )
    # normalised logits have the constant norm 1/tau
    torch.testing.assert_close(
        normalised.norm(dim=1), torch.full((16,), 1 / tau, dtype=torch.float64)
    )


@pytest.mark.parametrize("s", [1e-3, 0.1, 2.0, 10.0, 1e4])
def test_logitnorm_invariant_to_positive_rescaling(s):
    logits, target = _batch()
    exact = LogitNormLoss(tau=0.04, eps=0.0)
    torch.testing.assert_close(
        exact(s * logits, target), exact(logits, target), rtol=1e-12, atol=1e-12
    )
    # with the reference eps = 1e-7 the invariance holds up to O(eps / ||f||)
    ref = LogitNormLoss(tau=0.04)
    torch.testing.assert_close(ref(s * logits, target), ref(logits, target), rtol=1e-4, atol=1e-4)


def test_logitnorm_not_invariant_to_negative_rescaling():
    logits = torch.tensor([[3.0, 0.0, 0.0]], dtype=torch.float64)
    target = torch.tensor([0])
    loss = LogitNormLoss(tau=0.5)
    assert loss(-logits, target) > loss(logits, target)


@pytest.mark.parametrize("k", [2, 3, 10, 100])
@pytest.mark.parametrize("tau", [0.04, 0.3, 1.0, 2.0])
def test_logitnorm_lower_bound_prop_3_3(k, tau):
    logits, target = _batch(n=64, k=k)
    per_sample = _per_sample(LogitNormLoss(tau=tau), logits, target)
    assert bool((per_sample >= paper_bound(k, tau) - 1e-12).all())
    # the tighter exact minimum also holds for every sample
    assert bool((per_sample >= exact_minimum(k, tau) - 1e-9).all())


def test_paper_numeric_example():
    # "when k = 10 and we set tau = 1 ... the lower bound is about 0.7966"
    assert paper_bound(10, 1.0) == pytest.approx(0.7966, abs=1e-4)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("tau", [0.04, 0.3, 1.0])
def test_logitnorm_one_hot_direction(k, tau):
    """Logits along the label's one-hot direction give log(1 + (k-1) e^{-1/tau})."""
    loss = LogitNormLoss(tau=tau, eps=0.0)
    for scale in (0.01, 1.0, 100.0):
        logits = torch.zeros(1, k, dtype=torch.float64)
        logits[0, 0] = scale
        value = loss(logits, torch.tensor([0])).item()
        assert value == pytest.approx(
            math.log(1 + (k - 1) * math.exp(-1 / tau)), rel=1e-10, abs=1e-14
        )  # CE loses ~1e-16 absolute to cancellation
        assert value >= paper_bound(k, tau)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("tau", [0.04, 0.3, 1.0])
def test_logitnorm_bound_is_not_attained(k, tau):
    """Prop. 3.3 is valid but loose: the exact minimum (centred one-hot direction) exceeds it.

    The proof bounds f_y <= 1/tau and f_j >= -1/tau separately; both cannot hold with
    ||f|| = 1/tau, so for every k >= 2 the true minimum is log(1 + (k-1) e^{-sqrt(k/(k-1))/tau}).
    """
    loss = LogitNormLoss(tau=tau, eps=0.0)
    centred = torch.full((1, k), -1.0 / (k - 1), dtype=torch.float64)
    centred[0, 0] = 1.0
    value = loss(centred, torch.tensor([0])).item()
    assert value == pytest.approx(exact_minimum(k, tau), rel=1e-10, abs=1e-14)
    assert exact_minimum(k, tau) > paper_bound(k, tau)
    # the centred direction beats the plain one-hot direction and random directions
    one_hot = torch.zeros(1, k, dtype=torch.float64)
    one_hot[0, 0] = 1.0
    assert value <= loss(one_hot, torch.tensor([0])).item()
    logits, _ = _batch(n=256, k=k)
    per_sample = _per_sample(loss, logits, torch.zeros(256, dtype=torch.long))
    assert value <= per_sample.min().item() + 1e-15


def test_logitnorm_bound_and_minimum_vanish_as_tau_shrinks():
    for k in (2, 10):
        values = [exact_minimum(k, tau) for tau in (1.0, 0.3, 0.1, 0.04)]
        assert all(a > b for a, b in zip(values, values[1:], strict=False))
        assert values[-1] < 1e-6
        assert paper_bound(k, 0.04) < values[-1]


def test_logitnorm_gradient_orthogonal_to_logits():
    """Scale invariance implies d loss / d f ⟂ f (Euler), so training cannot change ||f||."""
    logits, target = _batch(n=1)
    logits.requires_grad_(True)
    LogitNormLoss(tau=0.1, eps=0.0)(logits, target).backward()
    assert abs(torch.dot(logits.grad[0], logits.detach()[0]).item()) < 1e-12


# ----------------------------------------------------------------- logit penalty


def test_logitpenalty_is_ce_plus_lambda_mean_norm():
    logits, target = _batch()
    lam = 0.05
    expected = F.cross_entropy(logits, target) + lam * logits.norm(dim=1).mean()
    torch.testing.assert_close(LogitPenaltyLoss(lam=lam)(logits, target), expected)


def test_logitpenalty_by_hand():
    logits = torch.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=torch.float64)
    target = torch.tensor([1, 0])
    ce = (-(4.0 - math.log(math.exp(3) + math.exp(4))) + math.log(2)) / 2
    value = LogitPenaltyLoss(lam=0.5)(logits, target).item()
    assert value == pytest.approx(ce + 0.5 * (5.0 + 0.0) / 2, rel=1e-12)


def test_logitpenalty_zero_lambda_is_ce():
    logits, target = _batch()
    torch.testing.assert_close(
        LogitPenaltyLoss(lam=0.0)(logits, target), F.cross_entropy(logits, target)
    )


# ----------------------------------------------------------------- registry / validation


def test_build_loss_builds_each_loss():
    assert isinstance(build_loss("ce", {}), CrossEntropy)
    assert isinstance(build_loss("ce", None), CrossEntropy)
    ln = build_loss("logitnorm", {"tau": 0.04})
    assert isinstance(ln, LogitNormLoss) and ln.tau == 0.04 and ln.eps == 1e-7
    assert build_loss("logitnorm", {"tau": 0.04, "eps": 0.0}).eps == 0.0
    lp = build_loss("logitpenalty", {"lam": 0.05})
    assert isinstance(lp, LogitPenaltyLoss) and lp.lam == 0.05
    assert isinstance(build_loss("godin", {}), GodinLoss)
    assert sorted(LOSSES) == [
        "ce",
        "gaussian_nll",
        "godin",
        "logitnorm",
        "logitpenalty",
        "reward_mse",
    ]


def test_unknown_loss_lists_choices():
    with pytest.raises(ValueError, match="unknown loss 'focal'") as err:
        build_loss("focal", {})
    for name in LOSSES:
        assert name in str(err.value)


def test_bad_key_names_loss_key_and_accepted():
    with pytest.raises(ValueError) as err:
        build_loss("logitnorm", {"tau": 0.04, "temperature": 1.0})
    msg = str(err.value)
    assert "logitnorm" in msg and "temperature" in msg and "tau" in msg and "eps" in msg
    with pytest.raises(ValueError, match="'ce'.*'lam'"):
        build_loss("ce", {"lam": 0.1})


@pytest.mark.parametrize(("name", "key"), [("logitnorm", "tau"), ("logitpenalty", "lam")])
def test_missing_hyperparameter_is_an_error(name, key):
    with pytest.raises(ValueError, match=f"{name}.*{key}"):
        build_loss(name, {})
    with pytest.raises(TypeError):  # no code default on the class either
        LOSSES[name]()


@pytest.mark.parametrize("tau", [0, 0.0, -0.04, float("nan"), float("inf"), None, "0.04", True])
def test_invalid_tau(tau):
    with pytest.raises(ValueError, match="tau"):
        build_loss("logitnorm", {"tau": tau})


@pytest.mark.parametrize("lam", [-0.01, float("nan"), None])
def test_invalid_lambda(lam):
    with pytest.raises(ValueError, match="lam"):
        LogitPenaltyLoss(lam=lam)


def test_invalid_eps():
    with pytest.raises(ValueError, match="eps"):
        LogitNormLoss(tau=0.04, eps=-1e-7)


def test_losses_are_differentiable_for_each_registry_entry():
    params = {"ce": {}, "logitnorm": {"tau": 0.04}, "logitpenalty": {"lam": 0.05}, "godin": {}}
    logits, target = _batch(dtype=torch.float32)
    for name, kw in params.items():
        x = logits.clone().requires_grad_(True)
        loss = build_loss(name, kw)(x, target)
        assert loss.ndim == 0 and torch.isfinite(loss)
        loss.backward()
        assert torch.isfinite(x.grad).all()
