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

from softmax_ood.softmax import log_softmax, softmax, softmax_jacobian

__all__ = [
    "naive_softmax",
    "note_checks",
    "render_checks",
    "softmax_entropy",
    "expected_limits",
    "sharpness_table",
    "jacobian_check",
    "property_checks",
    "PROPERTIES",
]


def naive_softmax(z: np.ndarray) -> np.ndarray:
    """The textbook formula :math:`e^{z_i} / \\sum_j e^{z_j}` with no max-shift, for comparison
    only: in float64 it overflows to ``inf / inf = nan`` once a logit exceeds ~709."""
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)


def softmax_entropy(z: np.ndarray) -> float:
    """Shannon entropy (nats) of :math:`S(z)` from the stable log-softmax (``0 log 0 = 0``)."""
    z = np.asarray(z, dtype=np.float64)
    p, lp = softmax(z), log_softmax(z)
    return float(-np.sum(np.where(p > 0, p * lp, 0.0))) + 0.0  # + 0.0: no "-0" in tables


def _as_vectors(vectors) -> dict[str, np.ndarray]:
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
    vectors: Mapping[str, Sequence[float]] | Sequence[float],
    alphas: Sequence[float] | np.ndarray,
) -> pd.DataFrame:
    """Max probability and entropy of :math:`S(\\alpha z)` over ``alphas`` (any sign).

    :param vectors: ``{name: z}`` or one vector (named ``"z"``).
    :param alphas: scales (any sign).
    :return: one row per vector x alpha: ``vector, alpha, n_classes, max_prob, entropy,
        entropy_ratio`` (entropy / log C), ``mass_on_max`` (total probability on the indices
        where ``z`` is maximal), ``mass_on_min``, ``top_prob_each`` (mean probability of each
        tied maximal index).
    """
    alphas = np.asarray(alphas, dtype=np.float64)
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
    vectors: Mapping[str, Sequence[float]] | Sequence[float],
    alphas: Sequence[float] | np.ndarray,
) -> pd.DataFrame:
    """Property 4: :math:`\\operatorname{diag}(y) - yy^\\top` against torch autograd.

    For each vector and scale, ``softmax_jacobian(softmax(alpha z))`` (NumPy, float64) is compared
    with ``torch.autograd.functional.jacobian(torch.softmax)`` at ``alpha z`` (float64).

    :return: ``vector, alpha, max_abs_diff`` (max entry-wise difference), ``jacobian_max_abs``
        (largest entry of ``|J|``; -> 0 in the one-hot limit, Lemma 2 of Ulmer & Cinà), and
        ``row_sum_max_abs`` (rows of ``J`` sum to 0 by shift invariance, Property 1).
    """
    import torch  # only this check needs autograd; the note's other checks are NumPy

    alphas = np.asarray(alphas, dtype=np.float64)
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


def note_checks(
    vectors: Mapping[str, Sequence[float]] | Sequence[float],
    alphas: Sequence[float] | np.ndarray,
) -> pd.DataFrame:
    """Each property of the note the report states, with its measured number.

    For every vector, at the largest, the smallest positive and the most negative scale of
    ``alphas``: max probability and entropy of :math:`S(\\alpha z)` next to the note's limit
    (:func:`expected_limits`: one-hot / shared among ties, uniform, arg-min); the largest
    deviation of :math:`\\operatorname{diag}(y) - yy^\\top` from autograd over all scales; and
    whether the naive formula gives NaN at the largest scale while the stable softmax stays
    finite and sums to 1.

    :return: ``vector, check, alpha, measured, expected, abs_error``.
    """
    alphas = np.asarray(alphas, dtype=np.float64)
    pos, neg = alphas[alphas > 0], alphas[alphas < 0]
    rows = []
    for name, z in _as_vectors(vectors).items():
        lim = expected_limits(z)
        table = sharpness_table({name: z}, alphas).set_index("alpha")
        cases = []
        if pos.size:
            cases += [("inf", float(pos.max())), ("zero", float(pos.min()))]
        if neg.size:
            cases.append(("neg_inf", float(neg.min())))
        for tag, alpha in cases:
            for column in ("max_prob", "entropy"):
                measured = float(table.loc[alpha, column])
                expected = lim[f"{column}_{tag}"]
                rows.append(
                    {
                        "vector": name,
                        "check": f"{column} as alpha -> {tag.replace('_', ' ')}",
                        "alpha": alpha,
                        "measured": measured,
                        "expected": expected,
                        "abs_error": abs(measured - expected),
                    }
                )
        jac = jacobian_check({name: z}, alphas)
        rows.append(
            {
                "vector": name,
                "check": "max |diag(y) - yy^T - autograd Jacobian| over all alphas",
                "alpha": float("nan"),
                "measured": float(jac["max_abs_diff"].max()),
                "expected": 0.0,
                "abs_error": float(jac["max_abs_diff"].max()),
            }
        )
        big = float(np.abs(alphas).max())
        stable = softmax(big * z)
        # exp overflows past log(max float64) ~ 709.78: inf / inf
        naive_nan_expected = float((big * z).max() > np.log(np.finfo(np.float64).max))
        rows.append(
            {
                "vector": name,
                "check": "naive exp(z)/sum exp(z) is NaN at the largest |alpha| (1 = yes)",
                "alpha": big,
                "measured": float(np.isnan(naive_softmax(big * z)).any()),
                "expected": naive_nan_expected,
                "abs_error": abs(
                    float(np.isnan(naive_softmax(big * z)).any()) - naive_nan_expected
                ),
            }
        )
        rows.append(
            {
                "vector": name,
                "check": "stable softmax sum - 1 at the largest |alpha|",
                "alpha": big,
                "measured": float(stable.sum() - 1.0),
                "expected": 0.0,
                "abs_error": float(abs(stable.sum() - 1.0)),
            }
        )
    return pd.DataFrame(rows)


#: the note's identities checked by :func:`property_checks` (check-name prefix -> claim id)
PROPERTIES = {
    "Property 1": "note-P1",
    "Property 2": "note-P2",
    "Property 3": "note-P3",
    "two outputs": "note-logistic",
}


def property_checks(
    vectors: Mapping[str, Sequence[float]] | Sequence[float],
    *,
    shift: float = 100.0,
    scales: tuple[float, float] = (2.5, -0.7),
) -> pd.DataFrame:
    r"""The note's Properties 1-3 and its two-output (logistic) case, each the largest
    entry-wise error of the identity in float64 with the stable softmax:

    * Property 1 (shift invariance): :math:`S(z + c\mathbf 1) = S(z)`, ``c = shift``;
    * Property 2 (the inverse): :math:`z = \log S(z) + c\mathbf 1`: the spread of
      :math:`z - \log S(z)` over the entries (one constant);
    * Property 3 (superposition and scaling):
      :math:`S(a_1 z + a_2 z' + c\mathbf 1) \propto S(z)^{a_1} \odot S(z')^{a_2}` with
      ``(a_1, a_2) = scales`` and ``z'`` the reversed vector, the right side normalised;
    * two outputs: :math:`S((z_1, z_2))_1 = 1 / (1 + e^{z_2 - z_1})` on the first two entries.

    :return: ``vector, check, alpha (NaN), measured, expected (0), abs_error`` like
        :func:`note_checks`.
    """
    rows = []
    a1, a2 = scales
    for name, z in _as_vectors(vectors).items():
        w = z[::-1].copy()
        two = z[:2]
        errors = {
            "Property 1: max |S(z + c) - S(z)|": np.abs(softmax(z + shift) - softmax(z)).max(),
            "Property 2: spread of z - log S(z) (one constant)": np.ptp(z - log_softmax(z)),
            "Property 3: max |S(a1 z + a2 z' + c) - S(z)^a1 S(z')^a2 / sum|": np.abs(
                softmax(a1 * z + a2 * w + shift)
                - softmax(a1 * log_softmax(z) + a2 * log_softmax(w))
            ).max(),
            "two outputs: |S(z1, z2)_1 - 1/(1 + exp(z2 - z1))|": abs(
                softmax(two)[0] - 1.0 / (1.0 + np.exp(two[1] - two[0]))
            ),
        }
        for check, err in errors.items():
            rows.append(
                {
                    "vector": name,
                    "check": check,
                    "alpha": float("nan"),
                    "measured": float(err),
                    "expected": 0.0,
                    "abs_error": float(err),
                }
            )
    return pd.DataFrame(rows)


def render_checks(checks: pd.DataFrame, title: str = "The softmax note, checked") -> str:
    """Markdown of :func:`note_checks`: one row per property with the measured number."""
    lines = [
        f"### {title}",
        "",
        "| vector | check | alpha | measured | expected | abs. error |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for _, r in checks.iterrows():
        alpha = "all" if np.isnan(r["alpha"]) else f"{r['alpha']:g}"
        lines.append(
            f"| {r['vector']} | {r['check']} | {alpha} | {r['measured']:.6g} | "
            f"{r['expected']:.6g} | {r['abs_error']:.3g} |"
        )
    return "\n".join(lines) + "\n"
