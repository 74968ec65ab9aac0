"""Scores: hand-computed values, the HIGHER = MORE IN-DISTRIBUTION sign, ODIN and GradNorm details."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers_models import B_2x3, LinearModel, TinyGodinModel, W_2x3, image_linear_model
from torch import nn

from softmax_ood.scores import (
    SCORES,
    ScoreInputs,
    build_score,
    compute_scores,
    energy,
    godin_score,
    gradnorm,
    max_logit,
    msp,
    msp_log_odds,
    odin,
    odin_perturbation,
)

F64 = torch.float64
PEAKED = torch.tensor([[10.0, 0.0, 0.0]], dtype=F64)
FLAT = torch.zeros(1, 3, dtype=F64)

# inputs of LinearModel(W_2x3, B_2x3): [10, 0] -> logits [10, 0.5, -10.5]; [0, -0.5] -> [0, 0, 0]
X_ID = torch.tensor([[10.0, 0.0]], dtype=F64)
X_OOD = torch.tensor([[0.0, -0.5]], dtype=F64)
ODIN_PARAMS = {"temperature": 1000.0, "eps": 0.0014, "std": [0.5, 0.25]}
ODIN_HP = {"temperature": 1000.0, "eps": 0.0014}


def gradnorm_autograd(features, classifier: nn.Linear, *, temperature: float = 1.0):
    """The oracle of :func:`~softmax_ood.scores.gradnorm`: GradNorm by explicit per-sample
    backward passes, the L1 norm of d/dW of the mean over classes of -log softmax(z / T)
    (Huang et al. 2021, Eq. (4)-(5)), on a detached copy of the weight."""
    weight = classifier.weight.detach().clone().requires_grad_(True)
    bias = None if classifier.bias is None else classifier.bias.detach()
    n_cls = classifier.out_features
    targets = torch.ones((1, n_cls), dtype=weight.dtype) / n_cls
    scores = []
    with torch.enable_grad():
        for phi in features.detach():
            outputs = F.linear(phi[None], weight, bias)
            loss = torch.mean(
                torch.sum(-targets * F.log_softmax(outputs / temperature, dim=-1), dim=-1)
            )
            (layer_grad,) = torch.autograd.grad(loss, weight)
            scores.append(torch.sum(torch.abs(layer_grad)))
    return torch.stack(scores) if scores else features.new_empty((0,))


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


def _hand_odin_step(model, x, *, temperature, eps, std):
    """ODIN step for a purely linear model, with the input gradient written out by hand."""
    W = model.fc.weight.detach()
    z = model(x).detach()
    y_hat = z.argmax(1)
    p = torch.softmax(z / temperature, 1)
    grad = ((p - F.one_hot(y_hat, z.shape[1])) @ W / temperature).reshape(x.shape)
    sign = torch.where(grad >= 0, 1.0, -1.0).to(x.dtype)
    std_b = torch.as_tensor(std, dtype=x.dtype).reshape((1, -1) + (1,) * (x.ndim - 2))
    return x - eps * sign / std_b


LOGIT_SCORES = {"msp": msp_log_odds, "energy": energy, "maxlogit": max_logit}

# ----------------------------------------------------------------- the sign contract


@pytest.mark.parametrize("name", sorted(SCORES))
def test_docstring_states_the_sign(name):
    assert "HIGHER = MORE IN-DISTRIBUTION" in SCORES[name].__doc__


@pytest.mark.parametrize("name", sorted(LOGIT_SCORES))
def test_peaked_logits_score_higher(name):
    score = LOGIT_SCORES[name]
    assert score(PEAKED).item() > score(FLAT).item()


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("msp", {}),
        ("energy", {"temperature": 1.0}),
        ("maxlogit", {}),
        ("odin", ODIN_HP),
        ("gradnorm", {}),
    ],
)
def test_id_like_input_scores_higher_through_compute_scores(name, params):
    model = LinearModel()
    torch.testing.assert_close(model(X_OOD), FLAT)  # flat logits: maximal uncertainty
    s_id = compute_scores(name, model, X_ID, params, std=ODIN_PARAMS["std"])
    s_ood = compute_scores(name, model, X_OOD, params, std=ODIN_PARAMS["std"])
    assert s_id.shape == s_ood.shape == (1,)
    assert s_id[0] > s_ood[0]


def test_godin_aligned_feature_scores_higher():
    model = TinyGodinModel()
    aligned = torch.tensor([[1.0, 0.0]], dtype=F64)  # along class 0's weight
    between = torch.tensor([[1.0, -1.0]], dtype=F64)  # cosines 1/sqrt2, -1/sqrt2, 0: max < 1
    assert (
        compute_scores("godin", model, aligned, {})[0]
        > compute_scores("godin", model, between, {})[0]
    )


# ----------------------------------------------------------------- logit scores by hand


def test_msp_by_hand():
    z = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], dtype=F64)
    den = math.e + math.e**2 + math.e**3
    torch.testing.assert_close(msp(z), torch.tensor([math.e**3 / den, 1 / 3], dtype=F64))
    den2 = math.exp(0.5) + math.exp(1.0) + math.exp(1.5)
    assert msp(z, temperature=2.0)[0].item() == pytest.approx(math.exp(1.5) / den2, rel=1e-12)


def test_msp_log_odds_by_hand_and_monotone_in_msp():
    z = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], dtype=F64)
    p = msp(z)
    torch.testing.assert_close(msp_log_odds(z), torch.log(p / (1 - p)))
    assert msp_log_odds(z)[1].item() == pytest.approx(math.log(0.5))
    zs = torch.randn(200, 5, generator=torch.Generator().manual_seed(0), dtype=F64) * 3
    order_p = torch.argsort(msp(zs))
    assert torch.equal(torch.argsort(msp_log_odds(zs))[order_p.argsort()], torch.arange(200))


def _norm50_logits() -> torch.Tensor:
    """float32 logits of norm 50 (LogitNorm under SGD reaches 45) whose exact MSPs differ."""
    g = torch.Generator().manual_seed(3)
    z = torch.randn(64, 10, generator=g, dtype=F64)
    z[:, 0] += 30.0  # one dominant class, the rest spread: exact MSPs 1 - O(e^-30), all distinct
    z = z / z.norm(dim=1, keepdim=True) * 50.0
    return z.float()


def test_softmax_scores_do_not_tie_at_logit_norm_50():
    z = _norm50_logits()
    exact = msp_log_odds(z)  # exact order (float64 log-odds of the float32 logits)
    assert len(torch.unique(exact)) == len(z)
    # what the naive float32 MSP does: ties at exactly 1.0
    assert (torch.softmax(z, dim=1).amax(dim=1) == 1.0).sum() > 1
    for name, params in [("msp", {}), ("msp", {"temperature": 2.0})]:
        s = build_score(name, params)
        out = s(ScoreInputs(None, None, None, z))
        assert len(torch.unique(out)) == len(z), name
    # GradNorm's softmax: distinct where the features and the exact softmax differ
    head = torch.nn.Linear(4, 10)
    phi = torch.randn(64, 4, generator=torch.Generator().manual_seed(4)) * 20
    assert len(torch.unique(gradnorm(phi, head))) == len(phi)


def test_odin_does_not_tie_at_large_logits():
    model = LinearModel()
    x = torch.tensor([[40.0, 0.0], [41.0, 0.0], [42.0, 0.0]], dtype=F64)
    s = odin(model, x, temperature=1.0, eps=0.0, std=1.0)
    assert bool((s[1:] > s[:-1]).all()), s


def test_energy_by_hand():
    z = torch.tensor([[1.0, 2.0, 3.0]], dtype=F64)
    assert energy(z).item() == pytest.approx(math.log(math.e + math.e**2 + math.e**3), rel=1e-12)
    expected = 2.0 * math.log(math.exp(0.5) + math.exp(1.0) + math.exp(1.5))
    assert energy(z, temperature=2.0).item() == pytest.approx(expected, rel=1e-12)
    # stable for huge logits
    assert energy(torch.tensor([[1000.0, 1001.0]], dtype=F64)).item() == pytest.approx(
        1001.0 + math.log1p(math.exp(-1.0)), rel=1e-15
    )


def test_max_logit_by_hand():
    z = torch.tensor([[1.0, -2.0, 3.0], [-5.0, -4.0, -6.0]], dtype=F64)
    torch.testing.assert_close(max_logit(z), torch.tensor([3.0, -4.0], dtype=F64))


def test_energy_small_temperature_tends_to_max_logit():
    z = _rand(20, 10) * 3
    m = max_logit(z)
    gaps = []
    for T in (1.0, 0.1, 1e-2, 1e-4):
        e = energy(z, temperature=T)
        gap = e - m
        assert bool((gap >= -1e-12).all())  # T·LSE(z/T) >= max z (up to rounding)
        assert bool((gap <= T * math.log(10) + 1e-12).all())  # ... <= max z + T log C
        gaps.append(gap.max().item())
    assert gaps[-1] < 1e-3 and gaps == sorted(gaps, reverse=True)


def test_logit_scores_shapes_and_input_checks():
    z = _rand(7, 4)
    for fn in LOGIT_SCORES.values():
        assert fn(z).shape == (7,)
    with pytest.raises(ValueError, match="shape"):
        msp(torch.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        max_logit(torch.zeros(3, 2, dtype=torch.long))
    for bad in (0, -1.0, float("nan"), None):
        with pytest.raises(ValueError, match="temperature"):
            energy(z, temperature=bad)


# ----------------------------------------------------------------- ODIN


@pytest.mark.parametrize("T", [1.0, 1000.0])
def test_odin_eps_zero_is_msp_at_temperature(T):
    model = LinearModel()
    x = _rand(9, 2)
    s = odin(model, x, temperature=T, eps=0.0, std=[0.5, 0.25])
    torch.testing.assert_close(s, msp_log_odds(model(x).detach(), temperature=T), rtol=0, atol=0)


def test_odin_perturbation_matches_hand_gradient_sign_2d():
    model = LinearModel()
    x = _rand(50, 2, seed=1) * 2
    kw = {"temperature": 1000.0, "eps": 0.0014, "std": [0.5, 0.25]}
    x_tilde = odin_perturbation(model, x, **kw)
    torch.testing.assert_close(x_tilde, _hand_odin_step(model, x, **kw), rtol=0, atol=1e-15)
    step = (x_tilde - x).abs()
    torch.testing.assert_close(
        step, torch.tensor([[0.0014 / 0.5, 0.0014 / 0.25]], dtype=F64).expand(50, 2)
    )


def test_odin_perturbation_per_channel_std_on_images():
    model = image_linear_model(channels=3, height=2, width=2)
    x = _rand(6, 3, 2, 2, seed=2)
    std = (63.0 / 255.0, 62.1 / 255.0, 66.7 / 255.0)  # the reference code's CIFAR-10 stds
    kw = {"temperature": 1000.0, "eps": 0.0014, "std": std}
    x_tilde = odin_perturbation(model, x, **kw)
    torch.testing.assert_close(x_tilde, _hand_odin_step(model, x, **kw), rtol=0, atol=1e-15)
    for c in range(3):
        step = (x_tilde - x)[:, c].abs()
        torch.testing.assert_close(step, torch.full_like(step, 0.0014 / std[c]), rtol=1e-12, atol=0)


def test_odin_scalar_std():
    model = image_linear_model()
    x = _rand(4, 3, 2, 2, seed=3)
    x_tilde = odin_perturbation(model, x, temperature=10.0, eps=0.01, std=0.5)
    torch.testing.assert_close((x_tilde - x).abs(), torch.full_like(x, 0.02), rtol=1e-12, atol=0)
    torch.testing.assert_close(
        x_tilde, odin_perturbation(model, x, temperature=10.0, eps=0.01, std=[0.5, 0.5, 0.5])
    )


def test_odin_zero_gradient_counts_as_positive():
    """Reference: gradient = (ge(grad, 0) - 0.5) * 2, so a zero gradient steps by -eps/std."""
    model = LinearModel(weight=torch.tensor([[1.0, 0.0], [2.0, 0.0]]), bias=torch.zeros(2))
    x = torch.tensor([[1.0, 3.0]], dtype=F64)  # logits depend on x[0] only: d/dx[1] == 0
    x_tilde = odin_perturbation(model, x, temperature=1.0, eps=0.1, std=1.0)
    assert x_tilde[0, 1].item() == pytest.approx(3.0 - 0.1)


def test_odin_raises_the_tempered_softmax_score():
    model = image_linear_model()
    x = _rand(32, 3, 2, 2, seed=4)
    before = msp_log_odds(model(x).detach(), temperature=1000.0)
    after = odin(model, x, temperature=1000.0, eps=0.0014, std=[0.25, 0.25, 0.25])
    assert bool((after > before).all())


def test_odin_batch_size_does_not_change_result():
    model = image_linear_model()
    x = _rand(10, 3, 2, 2, seed=5)
    kw = {"temperature": 1000.0, "eps": 0.0014, "std": [0.2, 0.3, 0.4]}
    full = odin(model, x, batch_size=512, **kw)
    torch.testing.assert_close(odin(model, x, batch_size=1, **kw), full, rtol=0, atol=0)
    torch.testing.assert_close(odin(model, x, batch_size=3, **kw), full, rtol=0, atol=0)


def test_odin_leaves_training_flags_and_grads_untouched():
    model = LinearModel()
    model.train()
    model.recorder.eval()  # a mixed state must come back exactly
    sentinel = torch.full_like(model.fc.bias, 7.0)
    model.fc.bias.grad = sentinel.clone()
    x = _rand(5, 2)
    odin(model, x, temperature=1000.0, eps=0.0014, std=[0.5, 0.25], batch_size=2)
    assert model.training and model.fc.training and not model.recorder.training
    assert model.recorder.seen_training and not any(model.recorder.seen_training)  # ran in eval
    assert model.fc.weight.grad is None
    torch.testing.assert_close(model.fc.bias.grad, sentinel)
    assert not x.requires_grad and x.grad is None


def test_odin_works_under_no_grad():
    model = LinearModel()
    x = _rand(4, 2)
    with torch.no_grad():
        s = odin(model, x, **ODIN_PARAMS)
    torch.testing.assert_close(s, odin(model, x, **ODIN_PARAMS))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"std": [0.5, 0.25, 0.1]}, "channels"),
        ({"std": [0.5, 0.0]}, "std"),
        ({"std": "abc"}, "std"),
        ({"eps": -0.001}, "eps"),
        ({"temperature": 0.0}, "temperature"),
    ],
)
def test_odin_input_checks(kw, match):
    params = {**ODIN_PARAMS, **kw}
    with pytest.raises(ValueError, match=match):
        odin(LinearModel(), _rand(3, 2), **params)


def test_odin_has_no_code_defaults_for_paper_hyperparameters():
    with pytest.raises(TypeError):
        odin(LinearModel(), _rand(3, 2), std=0.5)  # temperature and eps are required


# ----------------------------------------------------------------- GradNorm


def test_gradnorm_by_hand():
    fc = LinearModel().fc
    phi = torch.tensor([[2.0, -1.0]], dtype=F64)
    T = 2.0
    z = (W_2x3.to(F64) @ phi[0] + B_2x3.to(F64)).numpy()
    p = np.exp(z / T) / np.exp(z / T).sum()
    grad_W = np.outer(p - 1 / 3, phi[0].numpy()) / T  # d/dW of -(1/C) sum_c log softmax(z/T)_c
    assert gradnorm(phi, fc, temperature=T).item() == pytest.approx(np.abs(grad_W).sum(), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("T", [1.0, 0.5, 10.0])
def test_gradnorm_closed_form_equals_autograd(seed, T):
    gen = torch.Generator().manual_seed(seed)
    n_cls, dim = [(3, 2), (10, 16), (100, 8), (7, 64), (2, 5)][seed]
    fc = nn.Linear(dim, n_cls, dtype=F64)
    with torch.no_grad():
        fc.weight.copy_(torch.randn(n_cls, dim, generator=gen, dtype=F64))
        fc.bias.copy_(torch.randn(n_cls, generator=gen, dtype=F64))
    feats = torch.relu(3 * torch.randn(25, dim, generator=gen, dtype=F64))
    fast = gradnorm(feats, fc, temperature=T)
    slow = gradnorm_autograd(feats, fc, temperature=T)
    torch.testing.assert_close(fast, slow, rtol=1e-6, atol=1e-6)
    # float32 heads agree as well (the closed form computes in float64)
    fc32 = fc.float()
    torch.testing.assert_close(
        gradnorm(feats.float(), fc32, temperature=T).float(),
        gradnorm_autograd(feats.float(), fc32, temperature=T),
        rtol=1e-4,  # the float32 autograd loop is the less exact one
        atol=1e-6,
    )
    assert fc.weight.grad is None


def test_gradnorm_without_bias():
    fc = nn.Linear(4, 3, bias=False, dtype=F64)
    feats = _rand(6, 4)
    torch.testing.assert_close(
        gradnorm(feats, fc), gradnorm_autograd(feats, fc), rtol=1e-10, atol=1e-12
    )


def test_gradnorm_reference_code_all_ones_targets_is_C_times_ours():
    """gradnorm_ood/test_ood.py uses targets = torch.ones((N, num_classes)); we use 1/C (the paper's KL).

    The two differ by the constant factor C, so AUROC / FPR95 are identical.
    """
    n_cls, dim = 10, 6
    fc = nn.Linear(dim, n_cls, dtype=F64)
    feats = _rand(8, dim, seed=7)
    logsoftmax = nn.LogSoftmax(dim=-1)
    ref = []
    for phi in feats:  # batch size 1, as the reference forces
        fc.zero_grad()
        outputs = fc(phi[None]) / 1.0
        targets = torch.ones((1, n_cls), dtype=F64)
        loss = torch.mean(torch.sum(-targets * logsoftmax(outputs), dim=-1))
        loss.backward()
        ref.append(torch.sum(torch.abs(fc.weight.grad.data)))
    torch.testing.assert_close(
        torch.stack(ref), n_cls * gradnorm(feats, fc), rtol=1e-10, atol=1e-12
    )


def test_gradnorm_peaked_higher_than_flat_and_zero_at_uniform():
    fc = nn.Linear(3, 3, bias=False, dtype=F64)
    with torch.no_grad():
        fc.weight.copy_(torch.eye(3))
    peaked = torch.tensor([[10.0, 0.0, 0.0]], dtype=F64)
    flat = torch.tensor([[1.0, 1.0, 1.0]], dtype=F64)  # equal logits: p = u
    assert gradnorm(flat, fc).item() == pytest.approx(0.0, abs=1e-15)
    assert gradnorm(peaked, fc).item() > gradnorm(flat, fc).item()


def test_gradnorm_rejects_godin_and_non_linear_heads():
    feats = _rand(3, 2)
    with pytest.raises(ValueError, match="linear last layer"):
        gradnorm(feats, TinyGodinModel().get_classifier())
    with pytest.raises(ValueError, match="nn.Linear"):
        gradnorm(feats, nn.Sequential(nn.Linear(2, 3)))
    with pytest.raises(ValueError, match="num_classes"):
        gradnorm(feats, LinearModel().fc, num_classes=10)
    assert gradnorm(feats, LinearModel().fc, num_classes=3).shape == (3,)


# ----------------------------------------------------------------- GODIN


def test_godin_score_is_max_cosine_by_hand():
    head = TinyGodinModel().get_classifier()
    feats = torch.tensor([[1.0, 0.0], [1.0, 1.0], [-2.0, -2.0]], dtype=F64)
    # cosines with w = (1,0), (0,1), (-1,-1)/sqrt2
    expected = torch.tensor([1.0, 1 / math.sqrt(2), 1.0], dtype=F64)
    torch.testing.assert_close(godin_score(feats, head), expected)


def test_godin_score_needs_a_godin_head():
    with pytest.raises(ValueError, match="cosine"):
        godin_score(_rand(2, 2), LinearModel().fc)


# ----------------------------------------------------------------- compute_scores


def test_compute_scores_matches_direct_calls():
    model = LinearModel()
    x = _rand(11, 2, seed=8)
    with torch.no_grad():
        logits = model(x)
    for name, fn in LOGIT_SCORES.items():
        out = compute_scores(name, model, x, None)
        assert isinstance(out, np.ndarray) and out.shape == (11,)
        np.testing.assert_allclose(out, fn(logits).numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        compute_scores("energy", model, x, {"temperature": 3.0}),
        energy(logits, temperature=3.0).numpy(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        compute_scores("odin", model, x, ODIN_HP, std=ODIN_PARAMS["std"]),
        odin(model, x, **ODIN_PARAMS).numpy(),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        compute_scores("gradnorm", model, x, {"temperature": 1.0}),
        gradnorm_autograd(x, model.fc).numpy(),
        rtol=1e-10,
    )
    godin_model = TinyGodinModel()
    np.testing.assert_allclose(
        compute_scores("godin", godin_model, x, {}),
        godin_score(x, godin_model.get_classifier()).detach().numpy(),
        rtol=1e-12,
    )


@pytest.mark.parametrize("name", sorted(SCORES))
def test_compute_scores_batch_size_invariant(name):
    model = TinyGodinModel() if name == "godin" else LinearModel()
    params = ODIN_HP if name == "odin" else {}
    x = _rand(7, 2, seed=9)
    full = compute_scores(name, model, x, params, std=ODIN_PARAMS["std"], batch_size=512)
    np.testing.assert_allclose(
        compute_scores(name, model, x, params, std=ODIN_PARAMS["std"], batch_size=2),
        full,
        rtol=1e-12,
    )


def test_compute_scores_restores_training_flag():
    model = LinearModel().train()
    compute_scores("msp", model, _rand(4, 2), {})
    assert model.training and not any(model.recorder.seen_training)


def test_compute_scores_unknown_name_lists_choices():
    with pytest.raises(ValueError, match="unknown score 'mahalanobis'") as err:
        compute_scores("mahalanobis", LinearModel(), _rand(2, 2), {})
    for name in SCORES:
        assert name in str(err.value)


def test_compute_scores_param_checks():
    model, x = LinearModel(), _rand(2, 2)
    with pytest.raises(ValueError, match="'msp'.*'eps'"):
        compute_scores("msp", model, x, {"eps": 0.1})
    with pytest.raises(ValueError, match="'maxlogit'.*'temperature'"):
        compute_scores("maxlogit", model, x, {"temperature": 2.0})
    with pytest.raises(
        ValueError, match="'odin'.*'batch_size'"
    ):  # batch_size is an argument, not a param
        compute_scores("odin", model, x, {**ODIN_HP, "batch_size": 4})
    with pytest.raises(ValueError, match="'odin'.*'std'"):  # std comes from the data
        compute_scores("odin", model, x, ODIN_PARAMS)
    with pytest.raises(ValueError, match=r"'odin' requires parameter\(s\) \['eps'\]"):
        compute_scores("odin", model, x, {"temperature": 1000.0})
    with pytest.raises(ValueError, match="batch_size"):
        compute_scores("msp", model, x, {}, batch_size=0)


def test_compute_scores_head_mismatch_errors():
    x = _rand(2, 2)
    with pytest.raises(ValueError, match="'gradnorm' is defined for a linear last layer"):
        compute_scores("gradnorm", TinyGodinModel(), x, {})
    with pytest.raises(ValueError, match="'godin' is defined for a godin last layer"):
        compute_scores("godin", LinearModel(), x, {})


def test_registry_declares_needs_and_heads():
    assert SCORES["msp"].needs == {"logits"} and SCORES["odin"].needs == {"input_grad"}
    assert SCORES["gradnorm"].head == "linear" and SCORES["godin"].head == "godin"
    assert build_score("gradnorm", {}).supports(LinearModel())
    assert not build_score("gradnorm", {}).supports(TinyGodinModel())
    assert build_score("godin", {}).supports(TinyGodinModel())
    assert build_score("msp", {}).supports(TinyGodinModel())  # any head


def test_no_score_has_a_fit_step_nobody_calls():
    """Score.fit was never called by apply_scores: removed, not kept as a dead hook."""
    assert not any(hasattr(cls, "fit") for cls in SCORES.values())
