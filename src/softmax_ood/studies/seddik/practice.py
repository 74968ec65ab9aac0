r"""The softmax classifier in practice: training to convergence, LOO projections and data.

Data are rows: ``X`` is (n, p), labels ``y`` are integers ``0..k-1`` (class 0 is the paper's
:math:`\mathcal C_1`). The objective is the paper's

.. math:: \mathcal L(W) = \frac1n\sum_i\bigl(\operatorname{logsumexp}(W^\top x_i)
          - w_{y_i}^\top x_i\bigr) + \frac\lambda2\|W\|_F^2,\qquad W\in\mathbb R^{p\times k},

with no bias (as in the paper). For two classes the minimiser has ``w_2 = -w_1`` and the scalar
form of :mod:`.theory` uses ``w = w_1``.

**scikit-learn's C.** ``LogisticRegression`` (lbfgs, L2) minimises
:math:`C\sum_i\ell_i + \frac12\|\theta\|^2`. For :math:`k>2` (multinomial, one vector per
class) :math:`\theta=W`; multiplying sklearn's objective by :math:`1/(Cn)` gives
:math:`\frac1n\sum_i\ell_i+\frac1{2Cn}\|W\|^2`, the paper's objective when
:math:`1/(Cn)=\lambda`, i.e. :math:`C=1/(\lambda n)`. For :math:`k=2` sklearn fits one vector :math:`v` with logit
:math:`v^\top x = (w_2-w_1)^\top x = -2w^\top x` (the logit of class 1); the paper's regulariser at :math:`w_2=-w_1`
is :math:`\lambda\|w\|^2=\frac\lambda4\|v\|^2`, so :math:`\frac1{2Cn}=\frac\lambda4`, i.e.
:math:`C=2/(\lambda n)` and :math:`w = -v/2`. (A naive :math:`C=1/\lambda` is off by the factor
:math:`n`, and by 2 more for two classes.)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_softmax, softmax

__all__ = [
    "DigitsPair",
    "MixtureSpec",
    "SoftmaxFit",
    "accuracy",
    "class_statistics",
    "fit_softmax",
    "fashion_idx",
    "load_digits_pair",
    "loo_projections",
    "paper_mixture",
    "paper_objective",
    "sklearn_C",
    "structured_mixture",
]


# ----------------------------------------------------------------------------- objective


def _lbfgs_options(max_iter: int, tol: float, lam: float) -> dict:
    """scipy L-BFGS-B options shared by both solvers: stop on the gradient, scaled by lam."""
    return {
        "maxiter": max_iter,
        "maxcor": 30,
        "ftol": 0.0,
        "gtol": tol * lam * 1e-3,
        "maxfun": 4 * max_iter,
    }


def _onehot(y: np.ndarray, k: int) -> np.ndarray:
    Y = np.zeros((len(y), k))
    Y[np.arange(len(y)), y] = 1.0
    return Y


def paper_objective(W: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float):
    """Value and gradient (same shape as ``W`` (p, k)) of the paper's objective."""
    n = X.shape[0]
    T = X @ W
    lsm = log_softmax(T, axis=1)
    Y = _onehot(y, W.shape[1])
    value = -np.sum(Y * lsm) / n + 0.5 * lam * np.sum(W * W)
    grad = X.T @ (np.exp(lsm) - Y) / n + lam * W
    return value, grad


@dataclass(frozen=True)
class SoftmaxFit:
    """A trained softmax classifier. ``weights`` (p, k); ``w`` is ``weights[:, 0]`` (two-class
    scalar form); ``grad_norm`` is the final gradient's max-norm over ``lam * max|W|``."""

    weights: np.ndarray
    lam: float
    n_iter: int
    grad_norm: float
    solver: str

    @property
    def k(self) -> int:
        return self.weights.shape[1]

    @property
    def w(self) -> np.ndarray:
        return self.weights[:, 0]

    def logits(self, X: np.ndarray) -> np.ndarray:
        return X @ self.weights

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.argmax(self.logits(X), axis=1)


def sklearn_C(lam: float, n: int, k: int) -> float:
    """scikit-learn's ``C`` for the paper's objective (see the module docstring)."""
    return (2.0 if k == 2 else 1.0) / (lam * n)


def _hessian(W: np.ndarray, X: np.ndarray, lam: float) -> np.ndarray:
    """Hessian of the paper's objective over ``vec W = (w_1; ...; w_k)``, shape (pk, pk)."""
    n, p = X.shape
    k = W.shape[1]
    S = softmax(X @ W, axis=1)
    H = np.empty((k, p, k, p))
    for a in range(k):
        for b in range(a, k):
            d = S[:, a] * ((a == b) - S[:, b])
            H[a, :, b, :] = (X.T * d) @ X / n
            H[b, :, a, :] = H[a, :, b, :].T
    return H.reshape(k * p, k * p) + lam * np.eye(k * p)


def _newton(W, X, y, lam, steps=50, tol=1e-11):
    """Exact Newton steps (the objective is smooth and lam-strongly convex) until the
    gradient's max-norm is below ``tol * lam * max|W|``; returns ``(W, steps taken)``."""
    p, k = W.shape
    for it in range(steps):
        _, g = paper_objective(W, X, y, lam)
        if np.max(np.abs(g)) <= tol * max(lam * np.max(np.abs(W)), 1e-300):
            return W, it
        W = W - np.linalg.solve(_hessian(W, X, lam), g.T.ravel()).reshape(k, p).T
    return W, steps


def _fit_binary(X, y, lam, tol, max_iter, w0, polish):
    """Scalar form: ``(1/n) sum log(1 + exp(-2 s_i w^T x_i)) + lam |w|^2``, ``s = +1 / -1``."""
    n, p = X.shape
    s = np.where(y == 0, 1.0, -1.0)

    def fun(w):
        t = X @ w
        val = np.mean(np.logaddexp(0.0, -2.0 * s * t)) + lam * w @ w
        grad = -2.0 * X.T @ (s * expit(-2.0 * s * t)) / n + 2.0 * lam * w
        return val, grad

    w = np.zeros(p) if w0 is None else np.array(w0, dtype=float)
    res = minimize(
        fun,
        w,
        jac=True,
        method="L-BFGS-B",
        options=_lbfgs_options(max_iter, tol, lam),
    )
    w, n_iter = res.x, int(res.nit)
    if polish and p <= 3000:
        for _ in range(50):
            t = X @ w
            g = fun(w)[1]
            if np.max(np.abs(g)) <= 2 * tol * max(lam * np.max(np.abs(w)), 1e-300):
                break
            d = 4.0 * expit(2.0 * t) * expit(-2.0 * t)
            H = (X.T * d) @ X / n + 2.0 * lam * np.eye(p)
            w = w - np.linalg.solve(H, g)
    return w, n_iter


def fit_softmax(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    k: int | None = None,
    solver: str = "lbfgs",
    tol: float = 1e-10,
    max_iter: int = 20_000,
    W0: np.ndarray | None = None,
    polish: bool = True,
    reduce_binary: bool = True,
) -> SoftmaxFit:
    """Minimise the paper's objective to convergence.

    ``solver="lbfgs"``: scipy L-BFGS on the objective itself, then (if ``polish`` and
    ``p * k <= 3000``) exact Newton steps; ``solver="sklearn"``: ``LogisticRegression`` with
    :func:`sklearn_C` and no intercept, mapped back to the paper's ``W``. With two classes and
    ``reduce_binary`` the L-BFGS/Newton run on the scalar form ``w`` (``W = [w, -w]``, exact:
    the minimiser has ``w_2 = -w_1``), halving the dimension."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=int)
    n, p = X.shape
    k = int(k if k is not None else y.max() + 1)
    if solver == "sklearn":
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(
            C=sklearn_C(lam, n, k), fit_intercept=False, tol=1e-12, max_iter=max_iter
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y)
        if k == 2:
            v = clf.coef_[0]  # logit of classes_[1]: v = w_2 - w_1 = -2 w
            W = np.stack([-v / 2, v / 2], axis=1)
        else:
            W = clf.coef_.T.copy()
        n_iter = int(np.max(clf.n_iter_))
    elif solver == "lbfgs" and k == 2 and reduce_binary:
        w, n_iter = _fit_binary(X, y, lam, tol, max_iter, None if W0 is None else W0[:, 0], polish)
        W = np.stack([w, -w], axis=1)
    elif solver == "lbfgs":
        W = np.zeros((p, k)) if W0 is None else np.array(W0, dtype=float)

        def fun(v):
            val, g = paper_objective(v.reshape(p, k), X, y, lam)
            return val, g.ravel()

        res = minimize(
            fun,
            W.ravel(),
            jac=True,
            method="L-BFGS-B",
            options=_lbfgs_options(max_iter, tol, lam),
        )
        W = res.x.reshape(p, k)
        n_iter = int(res.nit)
        if polish and p * k <= 3000:
            W, _ = _newton(W, X, y, lam, tol=tol)
    else:
        raise ValueError(f"solver must be 'lbfgs' or 'sklearn', got {solver!r}")
    _, g = paper_objective(W, X, y, lam)
    gn = float(np.max(np.abs(g)) / max(lam * np.max(np.abs(W)), 1e-300))
    return SoftmaxFit(weights=W, lam=float(lam), n_iter=n_iter, grad_norm=gn, solver=solver)


def accuracy(fit: SoftmaxFit, X: np.ndarray, y: np.ndarray) -> float:
    """Fraction of rows of ``X`` whose largest logit is their label."""
    return float(np.mean(fit.predict(np.asarray(X)) == np.asarray(y)))


def loo_projections(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    *,
    method: str = "exact",
    fit: SoftmaxFit | None = None,
) -> np.ndarray:
    """Leave-one-out logits :math:`W_{-i}^\\top x_i`, shape (n, k) (Fig. 3 uses column 0).

    ``W_{-i}`` minimises the objective with sample ``i`` removed *keeping the 1/n* (the paper's
    definition, ``x_i`` replaced by 0). ``method="exact"``: n refits by exact Newton steps started at ``W`` (to the same
    tolerance as :func:`fit_softmax`).
    ``method="newton"``: one Newton step from ``W`` on each leave-one-out objective, in closed
    form by Woodbury: :math:`z_i = t_i + A_i(I - S_iA_i)^{-1}(s_i - y_i)` with
    :math:`A_i=\\frac1n(I\\otimes x_i)^\\top H^{-1}(I\\otimes x_i)`, ``S_i`` the softmax
    Jacobian — for two classes this is Theorem 4.4 with the corrected sign."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=int)
    n, p = X.shape
    fit = fit if fit is not None else fit_softmax(X, y, lam)
    W, k = fit.weights, fit.k
    if method == "exact":
        out = np.empty((n, k))
        for i in range(n):
            Xi = X.copy()
            Xi[i] = 0.0
            Wi, _ = _newton(W, Xi, y, lam)
            out[i] = X[i] @ Wi
        return out
    if method != "newton":
        raise ValueError(f"method must be 'exact' or 'newton', got {method!r}")
    T = X @ W
    S = softmax(T, axis=1)
    Hinv = np.linalg.inv(_hessian(W, X, lam)).reshape(k, p, k, p)
    A = np.einsum("ip,apbq,iq->iab", X, Hinv, X) / n
    Sj = np.einsum("ia,ab->iab", S, np.eye(k)) - S[:, :, None] * S[:, None, :]
    M = np.linalg.solve(np.eye(k) - Sj @ A, (S - _onehot(y, k))[..., None])[..., 0]
    return T + np.einsum("iab,ib->ia", A, M)


# ----------------------------------------------------------------------------- data


def class_statistics(X: np.ndarray, y: np.ndarray, k: int | None = None):
    """Empirical ``(means (k, p), covs (k, p, p), gammas (k,))`` (covariances with 1/n_c)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=int)
    k = int(k if k is not None else y.max() + 1)
    means = np.stack([X[y == c].mean(0) for c in range(k)])
    covs = np.stack([np.cov(X[y == c], rowvar=False, bias=True) for c in range(k)])
    gammas = np.bincount(y, minlength=k) / len(y)
    return means, covs, gammas


@dataclass(frozen=True)
class MixtureSpec:
    """A Gaussian mixture: ``means`` (k, p), ``covs`` (k, p, p), ``gammas`` (k,)."""

    means: np.ndarray
    covs: np.ndarray
    gammas: np.ndarray

    @property
    def p(self) -> int:
        return self.means.shape[1]

    def counts(self, n: int) -> np.ndarray:
        """Exact class counts ``round(gamma * n)`` (last class takes the remainder)."""
        c = np.round(self.gammas[:-1] * n).astype(int)
        return np.append(c, n - c.sum())

    def sample(self, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """``(X (n, p), y)`` with exact proportions, classes in blocks, seeded."""
        rng = np.random.default_rng(seed)
        Xs, ys = [], []
        for c, nc in enumerate(self.counts(n)):
            C = self.covs[c]
            Z = rng.standard_normal((nc, self.p))
            if not np.array_equal(C, np.eye(self.p)):
                Z = Z @ np.linalg.cholesky(C + 1e-12 * np.eye(self.p)).T
            Xs.append(self.means[c] + Z)
            ys.append(np.full(nc, c))
        return np.vstack(Xs), np.concatenate(ys)


def paper_mixture(p: int, *, mean_norm: float = 0.5, gammas=(1 / 3, 2 / 3)) -> MixtureSpec:
    """Fig. 2 setting: ``C_l = I``, ``mu_1 = mean_norm e_1``, ``mu_2 = mean_norm e_2``."""
    k = len(gammas)
    means = np.zeros((k, p))
    means[np.arange(k), np.arange(k)] = mean_norm
    return MixtureSpec(means, np.stack([np.eye(p)] * k), np.asarray(gammas, dtype=float))


def structured_mixture(
    p: int, *, k: int = 2, mean_norm: float = 1.0, gammas=None, seed: int = 0
) -> MixtureSpec:
    """``k`` classes with different non-identity covariances and random means of norm
    ``mean_norm`` (validation and timing): class 0 Toeplitz ``0.5^|i-j|``, class 1
    ``diag(linspace(0.5, 1.5))``, class ``c >= 2`` ``(1 + 0.2 c)`` Toeplitz ``(-0.3)^|i-j|``;
    ``gammas`` defaults to uniform."""
    rng = np.random.default_rng(seed)
    i = np.abs(np.arange(p)[:, None] - np.arange(p)[None, :])
    covs = [0.5**i, np.diag(np.linspace(0.5, 1.5, p))]
    covs += [(1 + 0.2 * c) * (-0.3) ** i for c in range(2, k)]
    means = rng.standard_normal((k, p))
    means *= mean_norm / np.linalg.norm(means, axis=1, keepdims=True)
    g = np.full(k, 1.0 / k) if gammas is None else np.asarray(gammas, dtype=float)
    return MixtureSpec(means, np.stack(covs[:k]), g)


@dataclass(frozen=True)
class DigitsPair:
    """Two image classes (scikit-learn's 8x8 digits, p = 64, or raw 28x28 Fashion-MNIST,
    p = 784: :func:`load_digits_pair`), centred by the midpoint of the two class means;
    statistics from the whole pool."""

    X: np.ndarray
    y: np.ndarray
    digits: tuple[int, int]
    means: np.ndarray
    covs: np.ndarray
    gammas: np.ndarray


#: where Debian's ``dataset-fashion-mnist`` installs the IDX files (``dpkg -L``)
FASHION_DIRS = ("/usr/share/datasets/fashion-mnist", "/usr/share/dataset-fashion-mnist")
SOURCES = ("sklearn", "fashion")


def fashion_idx(part: str = "train", dirs=FASHION_DIRS) -> tuple[np.ndarray, np.ndarray]:
    """Raw Fashion-MNIST ``(images uint8 (N, 28, 28), labels uint8 (N,))`` of ``part``
    (``train``: 60,000; ``t10k``: 10,000) read with the project's IDX reader from the first of
    ``dirs`` holding them.

    :raises FileNotFoundError: one sentence naming the package to install."""
    from pathlib import Path

    from ...paper_data import read_mnist_idx

    for d in dirs:
        img = Path(d) / f"{part}-images-idx3-ubyte.gz"
        lab = Path(d) / f"{part}-labels-idx1-ubyte.gz"
        if img.is_file() and lab.is_file():
            return read_mnist_idx(img), read_mnist_idx(lab)
    raise FileNotFoundError(
        f"Fashion-MNIST IDX files ({part}) not found in {', '.join(dirs)}; install them with "
        "'apt-get install dataset-fashion-mnist'"
    )


def load_digits_pair(
    digits: tuple[int, int] = (1, 2),
    *,
    balance: bool = True,
    seed: int = 0,
    source: str = "sklearn",
    per_class: int | None = None,
) -> DigitsPair:
    """Classes ``digits[0]`` (class 0) vs ``digits[1]`` (class 1); ``balance`` subsamples the
    larger class (seeded) so that ``gamma = (1/2, 1/2)`` as in the paper's Figs. 3-4.

    :param source: ``"sklearn"``: scikit-learn's 8x8 digits (p = 64, pixels / 16);
        ``"fashion"``: raw 28x28 Fashion-MNIST training images (p = 784, pixels / 255, the
        paper's dimension; a declared stand-in for MNIST digits), ``digits`` then name
        Fashion-MNIST classes.
    :param per_class: keep this many images per class (seeded draw; ``None``: all, or the
        smaller class's count when balancing).
    """
    if source == "sklearn":
        from sklearn.datasets import load_digits

        data = load_digits()
        X, t = data.data / 16.0, data.target
    elif source == "fashion":
        images, t = fashion_idx("train")
        X = images.reshape(len(images), -1).astype(np.float64) / 255.0
    else:
        raise ValueError(f"unknown digits source {source!r}; expected one of {', '.join(SOURCES)}")
    idx = [np.flatnonzero(t == d) for d in digits]
    rng = np.random.default_rng(seed)
    if balance or per_class is not None:
        cap = [len(i) for i in idx]
        if balance:
            cap = [min(cap)] * len(idx)
        if per_class is not None:
            cap = [min(c, int(per_class)) for c in cap]
        idx = [np.sort(rng.choice(i, c, replace=False)) for i, c in zip(idx, cap, strict=True)]
    Xp = np.vstack([X[i] for i in idx])
    y = np.concatenate([np.full(len(i), c) for c, i in enumerate(idx)])
    means = np.stack([Xp[y == c].mean(0) for c in range(2)])
    Xp = Xp - means.mean(0)  # "centred means": mu_1 = -mu_2
    means, covs, gammas = class_statistics(Xp, y, 2)
    return DigitsPair(Xp, y, tuple(digits), means, covs, gammas)
