"""Training to convergence, scikit-learn's C, LOO projections, data loaders, Fig. 2 match."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from softmax_ood.studies.seddik.practice import (
    accuracy,
    fit_softmax,
    load_digits_pair,
    loo_projections,
    paper_mixture,
    paper_objective,
    sklearn_C,
    structured_mixture,
)
from softmax_ood.studies.seddik.theory import solve_binary


@pytest.fixture(scope="module")
def data2():
    return structured_mixture(30, mean_norm=1.5, gammas=(0.4, 0.6)).sample(200, 0)


@pytest.fixture(scope="module")
def data3():
    return structured_mixture(20, k=3, mean_norm=1.5).sample(240, 0)


@pytest.mark.parametrize("lam", [0.05, 2.0])
@pytest.mark.parametrize("which", ["data2", "data3"])
def test_sklearn_C_matches_direct_minimiser(which, lam, request):
    """C = 2/(lam n) (two classes, w = -coef/2) or 1/(lam n) (k > 2) reproduces L-BFGS."""
    X, y = request.getfixturevalue(which)
    k = int(y.max() + 1)
    ours = fit_softmax(X, y, lam)
    sk = fit_softmax(X, y, lam, solver="sklearn")
    assert ours.grad_norm < 1e-9
    scale = np.max(np.abs(ours.weights))
    assert np.max(np.abs(sk.weights - ours.weights)) < 1e-5 * scale
    assert sklearn_C(lam, len(y), k) == pytest.approx((2.0 if k == 2 else 1.0) / (lam * len(y)))


def test_naive_C_is_off(data2):
    from sklearn.linear_model import LogisticRegression

    X, y = data2
    lam = 0.5
    ours = fit_softmax(X, y, lam)
    naive = LogisticRegression(C=1 / lam, fit_intercept=False, tol=1e-10, max_iter=5000).fit(X, y)
    w_naive = -naive.coef_[0] / 2
    assert np.linalg.norm(w_naive - ours.w) > 0.5 * np.linalg.norm(ours.w)


def test_binary_reduction_equals_full_softmax(data2):
    X, y = data2
    a = fit_softmax(X, y, 0.3)
    b = fit_softmax(X, y, 0.3, reduce_binary=False)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-7, atol=1e-10)
    _, g = paper_objective(a.weights, X, y, 0.3)
    assert np.max(np.abs(g)) < 1e-10
    np.testing.assert_allclose(a.weights[:, 1], -a.weights[:, 0])


def test_three_class_fit_is_stationary(data3):
    X, y = data3
    fit = fit_softmax(X, y, 0.2)
    _, g = paper_objective(fit.weights, X, y, 0.2)
    assert np.max(np.abs(g)) < 1e-10
    np.testing.assert_allclose(fit.weights.sum(1), 0.0, atol=1e-9)  # equal lambdas
    assert 0.5 < accuracy(fit, X, y) <= 1.0


def test_loo_newton_step_matches_exact_refits(data2):
    X, y = data2
    idx = np.r_[0:30, 120:150]
    exact = loo_projections(X[idx], y[idx], 0.5, method="exact")
    approx = loo_projections(X[idx], y[idx], 0.5, method="newton")
    assert np.max(np.abs(exact - approx)) < 0.05 * np.std(exact[:, 0])  # O(1/n) step error
    fit = fit_softmax(X[idx], y[idx], 0.5)
    # removing a point moves its own logit against its label (sign of corrected Theorem 4.4)
    t = fit.logits(X[idx])[:, 0]
    assert np.all((t - exact[:, 0]) * np.where(y[idx] == 0, 1, -1) > 0)


def test_paper_mixture_sampler():
    spec = paper_mixture(40)
    np.testing.assert_allclose(np.linalg.norm(spec.means, axis=1), 0.5)
    assert spec.means[0] @ spec.means[1] == 0
    X, y = spec.sample(400, 3)
    assert X.shape == (400, 40) and np.bincount(y).tolist() == [133, 267]
    X2, _ = spec.sample(400, 3)
    np.testing.assert_array_equal(X, X2)


def test_digits_pair():
    d = load_digits_pair()
    assert d.X.shape[1] == 64 and d.digits == (1, 2)
    np.testing.assert_allclose(d.gammas, [0.5, 0.5])
    np.testing.assert_allclose(d.means[0], -d.means[1], atol=1e-12)  # centred means
    assert d.covs.shape == (2, 64, 64)


@pytest.mark.parametrize("p", [50, 200])
def test_fig2_setting_theory_within_two_points(p):
    """Fig. 2 setting (n = 400, gamma = (1/3, 2/3), lam = 20, C = I, |mu| = 1/2)."""
    spec = paper_mixture(p)
    th = solve_binary(spec.means, spec.covs, spec.gammas, 400, 20.0)
    te, tr = [], []
    for seed in range(6):
        X, y = spec.sample(400, seed)
        Xt, yt = spec.sample(4000, 500 + seed)
        fit = fit_softmax(X, y, 20.0)
        te.append(accuracy(fit, Xt, yt))
        tr.append(accuracy(fit, X, y))
    assert abs(np.mean(te) - th.test_accuracy) < 0.02
    assert abs(np.mean(tr) - th.train_accuracy) < 0.02


def _write_idx(path, array):
    import gzip

    array = np.asarray(array, dtype=np.uint8)
    head = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(gzip.compress(head + array.tobytes()))


def test_fashion_idx_reads_the_package_layout_and_names_the_package_when_absent(tmp_path):
    from softmax_ood.studies.seddik.practice import fashion_idx

    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", images)
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", [2, 4, 2])
    x, y = fashion_idx("train", dirs=(str(tmp_path / "missing"), str(tmp_path)))
    assert x.shape == (3, 28, 28) and np.array_equal(x, images)
    assert list(y) == [2, 4, 2]
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        fashion_idx("train", dirs=(str(tmp_path / "missing"),))


def test_digits_pair_sources():
    from softmax_ood.studies.seddik.practice import FASHION_DIRS, load_digits_pair

    d = load_digits_pair((1, 2), balance=True, seed=0, per_class=50)
    assert d.X.shape == (100, 64) and d.gammas.tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="unknown digits source"):
        load_digits_pair((1, 2), source="mnist")
    if not any((Path(p) / "train-images-idx3-ubyte.gz").is_file() for p in FASHION_DIRS):
        pytest.skip("dataset-fashion-mnist not installed")
    f = load_digits_pair((2, 4), balance=True, seed=0, source="fashion", per_class=40)
    assert f.X.shape == (80, 784)
    assert np.allclose(f.means[0], -f.means[1])  # centred means
