"""Invariants of the softmax from shared/papers/softmax-properties-note.txt, on NumPy and torch."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from softmax_ood.softmax import log_softmax, logsumexp, softmax, softmax_jacobian

PROPS = settings(derandomize=True, max_examples=60, deadline=None)

finite = st.floats(-30.0, 30.0, allow_nan=False, allow_infinity=False)
vectors = st.integers(2, 8).flatmap(lambda n: arrays(np.float64, n, elements=finite))
pairs = st.integers(2, 8).flatmap(
    lambda n: st.tuples(
        arrays(np.float64, n, elements=finite), arrays(np.float64, n, elements=finite)
    )
)
reals = st.floats(-50.0, 50.0, allow_nan=False)


def _normalise(v):
    return v / v.sum(axis=-1, keepdims=True)


# ----------------------------------------------------------------- basic agreement


@PROPS
@given(vectors)
def test_numpy_matches_torch(x):
    t = torch.from_numpy(x)
    np.testing.assert_allclose(softmax(x), torch.softmax(t, 0).numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        log_softmax(x), torch.log_softmax(t, 0).numpy(), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(logsumexp(x), torch.logsumexp(t, 0).item(), rtol=1e-12)


def test_torch_in_torch_out_numpy_in_numpy_out():
    x = np.array([[1.0, 2.0, 3.0]])
    t = torch.from_numpy(x)
    for fn in (softmax, log_softmax, logsumexp):
        assert isinstance(fn(x), np.ndarray)
        assert isinstance(fn(t), torch.Tensor)
    assert isinstance(softmax_jacobian(softmax(x)), np.ndarray)
    assert isinstance(softmax_jacobian(softmax(t)), torch.Tensor)


def test_dim_argument_and_keepdim():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(softmax(x, dim=0).sum(axis=0), np.ones(3))
    np.testing.assert_allclose(softmax(x, dim=1).sum(axis=1), np.ones(2))
    assert logsumexp(x, dim=1, keepdim=True).shape == (2, 1)
    assert logsumexp(x, dim=0).shape == (3,)
    np.testing.assert_allclose(np.exp(log_softmax(x, dim=0)), softmax(x, dim=0))


def test_integer_input_is_promoted():
    np.testing.assert_allclose(softmax(np.array([0, 0])), [0.5, 0.5])


def test_neg_inf_entries():
    p = softmax(np.array([0.0, -np.inf]))
    np.testing.assert_array_equal(p, [1.0, 0.0])
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf


# ----------------------------------------------------------------- Properties 1-3


@PROPS
@given(vectors, reals)
def test_shift_invariance(x, c):
    """Property 1: S(x + c1) = S(x)."""
    np.testing.assert_allclose(softmax(x + c), softmax(x), rtol=1e-9, atol=1e-15)


@PROPS
@given(vectors)
def test_inverse_up_to_constant(x):
    """Property 2: x = log p + c1, with c = logsumexp(x)."""
    log_p = np.log(softmax(x))
    c = x - log_p
    np.testing.assert_allclose(c, np.full_like(c, c[0]), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(c[0], logsumexp(x), rtol=1e-9, atol=1e-9)


@PROPS
@given(vectors, st.floats(-3.0, 3.0, allow_nan=False))
def test_scaling(x, alpha):
    """Property 3, Eq. (39): S(αx) ∝ S(x)^α, in log space: log S(αx) = α log S(x) + const."""
    lhs = log_softmax(alpha * x)
    rhs = alpha * log_softmax(x)
    d = lhs - rhs
    np.testing.assert_allclose(d, np.full_like(d, d[0]), atol=1e-8)
    np.testing.assert_allclose(lhs, log_softmax(rhs), atol=1e-8)


@PROPS
@given(pairs)
def test_superposition_sum(pair):
    """Property 3, Eq. (37): S(x1 + x2) ∝ S(x1) ⊙ S(x2)."""
    x1, x2 = pair
    np.testing.assert_allclose(
        log_softmax(x1 + x2), log_softmax(log_softmax(x1) + log_softmax(x2)), atol=1e-8
    )


@PROPS
@given(pairs)
def test_superposition_difference(pair):
    """Property 3, Eq. (38): S(x1 - x2) ∝ S(x1) ./ S(x2)."""
    x1, x2 = pair
    np.testing.assert_allclose(
        log_softmax(x1 - x2), log_softmax(log_softmax(x1) - log_softmax(x2)), atol=1e-8
    )


@PROPS
@given(vectors)
def test_sign_flip(x):
    """Property 3, Eq. (40): S(-x) ∝ 1 ./ S(x)."""
    np.testing.assert_allclose(softmax(-x), _normalise(1.0 / softmax(x)), rtol=1e-7, atol=1e-15)


def test_scaling_in_probability_space_small_example():
    x = np.array([0.3, -1.2, 2.0, 0.0])
    for alpha in (0.5, 2.0, 3.0):
        np.testing.assert_allclose(softmax(alpha * x), _normalise(softmax(x) ** alpha), rtol=1e-12)


# ----------------------------------------------------------------- Property 4: Jacobian


@PROPS
@given(vectors)
def test_jacobian_matches_autograd(x):
    t = torch.from_numpy(x)
    auto = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, 0), t)
    p = torch.softmax(t, 0)
    torch.testing.assert_close(softmax_jacobian(p), auto, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(softmax_jacobian(softmax(x)), auto.numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_structure_batched():
    p = torch.softmax(torch.randn(4, 5, generator=torch.Generator().manual_seed(0)), 1)
    J = softmax_jacobian(p)
    assert J.shape == (4, 5, 5)
    torch.testing.assert_close(J, J.transpose(-1, -2))  # symmetric
    torch.testing.assert_close(
        J.sum(-1), torch.zeros(4, 5), atol=1e-7, rtol=0
    )  # J 1 = 0 (shift invariance)
    torch.testing.assert_close(torch.diagonal(J, dim1=-2, dim2=-1), p * (1 - p))
    eig = torch.linalg.eigvalsh(J)
    assert bool((eig > -1e-7).all())  # positive semi-definite
    np.testing.assert_allclose(softmax_jacobian(p.numpy()), J.numpy(), rtol=1e-6)


# ----------------------------------------------------------------- Property 5: sharpness


@pytest.mark.parametrize("module", ["numpy", "torch"])
def test_sharpness_limits(module):
    x = np.array([0.5, 2.0, -1.0, 1.9])
    if module == "torch":
        x = torch.from_numpy(x)
    one_hot = np.eye(4)[1]
    hot = np.asarray(softmax(1e4 * x))
    np.testing.assert_allclose(hot, one_hot, atol=1e-12)  # α → ∞: delta on the argmax
    cold = np.asarray(softmax(1e-9 * x))
    np.testing.assert_allclose(cold, np.full(4, 0.25), atol=1e-8)  # α → 0+: uniform
    neg = np.asarray(softmax(-1e4 * x))
    np.testing.assert_allclose(neg, np.eye(4)[2], atol=1e-12)  # α → -∞: delta on the argmin


def test_sharpness_is_monotone_in_alpha():
    x = np.array([0.5, 2.0, -1.0, 1.9])
    peaks = [softmax(a * x).max() for a in (0.0, 0.1, 1.0, 3.0, 10.0, 100.0)]
    assert peaks[0] == pytest.approx(0.25)
    assert all(a < b for a, b in zip(peaks, peaks[1:], strict=False))


def test_tied_maxima_share_the_mass():
    x = np.array([3.0, 3.0, 1.0])
    np.testing.assert_allclose(softmax(1e4 * x), [0.5, 0.5, 0.0], atol=1e-12)


# ----------------------------------------------------------------- numerical stability


def test_stable_where_naive_overflows():
    x = np.array([1000.0, 1001.0, 999.0])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.sum(np.exp(x))
    assert np.isnan(naive).all()  # inf / inf
    p = softmax(x)
    assert np.isfinite(p).all()
    expected = softmax(np.array([1.0, 2.0, 0.0]))  # shift invariance
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    np.testing.assert_allclose(p.sum(), 1.0)
    np.testing.assert_allclose(
        logsumexp(x), 1001.0 + np.log1p(np.exp(-1.0) + np.exp(-2.0)), rtol=1e-15
    )
    assert np.isfinite(log_softmax(x)).all()
    assert torch.isfinite(softmax(torch.from_numpy(x))).all()
    with np.errstate(all="raise"):  # the stable form raises no floating-point warning at all
        assert np.isfinite(softmax(x)).all()
        assert np.isfinite(softmax(x.astype(np.float32))).all()


def test_stable_for_very_negative_inputs():
    x = np.array([-1000.0, -1001.0, -999.0])
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        naive = np.exp(x) / np.sum(np.exp(x))
    assert np.isnan(naive).all()  # 0 / 0
    np.testing.assert_allclose(softmax(x), softmax(np.array([1.0, 0.0, 2.0])), rtol=1e-12)


def test_precise_log_softmax_agrees_and_keeps_the_confident_rows_accurate():
    """``precise`` (the temperature fit's form, log1p of the non-max terms) agrees with the plain
    form to rounding, and keeps -log p of a very confident row (~1e-30) where the plain form
    rounds it to 0."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 7)) * 3
    np.testing.assert_allclose(
        log_softmax(z, dim=1, precise=True), log_softmax(z, dim=1), atol=1e-12
    )
    confident = np.array([[0.0, -69.0, -80.0]])
    assert log_softmax(confident, dim=1)[0, 0] == 0.0
    assert -log_softmax(confident, dim=1, precise=True)[0, 0] == pytest.approx(
        np.exp(-69.0) + np.exp(-80.0), rel=1e-12
    )
    with pytest.raises(ValueError, match="NumPy array"):
        log_softmax(torch.zeros(2, 3), dim=1, precise=True)
    with pytest.raises(ValueError, match="2-D array"):
        log_softmax(np.zeros(3), precise=True)
