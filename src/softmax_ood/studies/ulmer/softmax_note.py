"""Checks of the softmax-properties note used by the Ulmer & Cinà study.

For a fixed logit vector :math:`z`, :math:`y(\\alpha) = S(\\alpha z)` sharpens as
:math:`\\alpha \\to \\infty` to a one-hot vector on the arg-max (Property 5a), or, when the maximum
is attained ``n`` times, to mass :math:`1/n` on each tied maximum (corollary of 5a); it flattens to
the uniform distribution as :math:`\\alpha \\to 0^+` (5b) and concentrates on the arg-min as
:math:`\\alpha \\to -\\infty` (5c). The Jacobian is :math:`J = \\operatorname{diag}(y) - y y^\\top`
(Property 4); it vanishes in the one-hot limit, which is Lemma 2 of Ulmer & Cinà.

All softmax evaluations use the stable NumPy kernels of :mod:`softmax_ood.softmax` (max-shift),
so :math:`\\alpha z` with entries of size ``1e4`` and more stays finite.

:see Paper: "The softmax function: properties" note (Properties 4, 5a-c, the stable softmax);
    Ulmer & Cinà, "Know your limits", Lemma 2 and Appendix A.4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from softmax_ood.softmax import log_softmax, softmax, softmax_jacobian

__all__ = [
    "NOTE_VECTORS",
    "default_note_alphas",
    "softmax_entropy",
    "expected_limits",
    "sharpness_table",
    "jacobian_check",
]

NOTE_VECTORS: dict[str, tuple[float, ...]] = {
    "distinct": (2.0, 1.0, 0.5, -1.0),
    "tied_max": (2.0, 2.0, 0.5, -1.0),
}
"""Default logit vectors: a unique maximum, and a maximum attained twice (-> 1/2 each)."""


def default_note_alphas(n: int = 25, max_exponent: float = 3.0) -> np.ndarray:
    """``np.logspace(-max_exponent, max_exponent, n)`` (shrinking and growing scales)."""
    return np.logspace(-max_exponent, max_exponent, n)


def softmax_entropy(z: np.ndarray) -> float:
    """Shannon entropy (nats) of :math:`S(z)` from the stable log-softmax (``0 log 0 = 0``)."""
    z = np.asarray(z, dtype=np.float64)
    p, lp = softmax(z), log_softmax(z)
    return float(-np.sum(np.where(p > 0, p * lp, 0.0)))


def _as_vectors(vectors) -> dict[str, np.ndarray]:
    if vectors is None:
        vectors = NOTE_VECTORS
    if not isinstance(vectors, Mapping):
        vectors = {"z": vectors}
    return {str(k): np.asarray(v, dtype=np.float64) for k, v in vectors.items()}


def expected_limits(z: Sequence[float] | np.ndarray) -> dict[str, float]:
    """The note's limits of max probability and entropy of :math:`S(\\alpha z)`.

    With ``C`` classes, ``n_max`` / ``n_min`` the multiplicities of the maximum / minimum of ``z``:
    :math:`\\alpha\\to+\\infty`: max prob :math:`1/n_{max}`, entropy :math:`\\log n_{max}`;
    :math:`\\alpha\\to 0`: :math:`1/C`, :math:`\\log C`;
    :math:`\\alpha\\to-\\infty`: :math:`1/n_{min}`, :math:`\\log n_{min}`.
    """
    z = np.asarray(z, dtype=np.float64)
    n_max = int(np.sum(z == z.max()))
    n_min = int(np.sum(z == z.min()))
    c = z.size
    return {
        "max_prob_inf": 1.0 / n_max,
        "entropy_inf": float(np.log(n_max)),
        "max_prob_zero": 1.0 / c,
        "entropy_zero": float(np.log(c)),
        "max_prob_neg_inf": 1.0 / n_min,
        "entropy_neg_inf": float(np.log(n_min)),
    }


def sharpness_table(
    vectors: Mapping[str, Sequence[float]] | Sequence[float] | None = None,
    alphas: Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """Max probability and entropy of :math:`S(\\alpha z)` over ``alphas`` (any sign).

    :param vectors: ``{name: z}`` or one vector (named ``"z"``); default :data:`NOTE_VECTORS`.
    :param alphas: scales; default :func:`default_note_alphas`.
    :return: one row per vector x alpha: ``vector, alpha, n_classes, max_prob, entropy,
        entropy_ratio`` (entropy / log C), ``mass_on_max`` (total probability on the indices
        where ``z`` is maximal), ``mass_on_min``, ``top_prob_each`` (mean probability of each
        tied maximal index).
    """
    alphas = default_note_alphas() if alphas is None else np.asarray(alphas, dtype=np.float64)
    rows = []
    for name, z in _as_vectors(vectors).items():
        is_max, is_min = z == z.max(), z == z.min()
        for alpha in alphas:
            p = softmax(alpha * z)
            rows.append(
                {
                    "vector": name,
                    "alpha": float(alpha),
                    "n_classes": int(z.size),
                    "max_prob": float(p.max()),
                    "entropy": softmax_entropy(alpha * z),
                    "entropy_ratio": softmax_entropy(alpha * z) / float(np.log(z.size)),
                    "mass_on_max": float(p[is_max].sum()),
                    "mass_on_min": float(p[is_min].sum()),
                    "top_prob_each": float(p[is_max].mean()),
                }
            )
    return pd.DataFrame(rows)


def jacobian_check(
    vectors: Mapping[str, Sequence[float]] | Sequence[float] | None = None,
    alphas: Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """Property 4: :math:`\\operatorname{diag}(y) - yy^\\top` against torch autograd.

    For each vector and scale, ``softmax_jacobian(softmax(alpha z))`` (NumPy, float64) is compared
    with ``torch.autograd.functional.jacobian(torch.softmax)`` at ``alpha z`` (float64).

    :return: ``vector, alpha, max_abs_diff`` (max entry-wise difference), ``jacobian_max_abs``
        (largest entry of ``|J|``; -> 0 in the one-hot limit, Lemma 2 of Ulmer & Cinà), and
        ``row_sum_max_abs`` (rows of ``J`` sum to 0 by shift invariance, Property 1).
    """
    alphas = np.array([1.0]) if alphas is None else np.asarray(alphas, dtype=np.float64)
    rows = []
    for name, z in _as_vectors(vectors).items():
        for alpha in alphas:
            za = alpha * z
            analytic = softmax_jacobian(softmax(za))
            auto = torch.autograd.functional.jacobian(
                lambda t: torch.softmax(t, dim=-1), torch.as_tensor(za, dtype=torch.float64)
            ).numpy()
            rows.append(
                {
                    "vector": name,
                    "alpha": float(alpha),
                    "max_abs_diff": float(np.max(np.abs(analytic - auto))),
                    "jacobian_max_abs": float(np.max(np.abs(analytic))),
                    "row_sum_max_abs": float(np.max(np.abs(analytic.sum(axis=1)))),
                }
            )
    return pd.DataFrame(rows)
