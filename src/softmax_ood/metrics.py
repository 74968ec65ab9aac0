"""OOD-detection metrics (FPR@95%TPR, AUROC, AUPR-In, AUPR-Out) and classifier summaries.

Sign convention
---------------
Every score passed to this module is **higher = more in-distribution** (MSP, max-logit,
negative energy, ...). Two labelings of the binary "detect it" problem are in use:

* ``positive="id"`` (default) -- in-distribution samples are the positives and the score is
  used as is. This is the convention of ODIN (Liang et al. 2018), Energy (Liu et al. 2020) and
  LogitNorm (Wei et al. 2022), whose tables report FPR95 with it: *the fraction of OOD samples
  still accepted as ID when 95% of ID samples are accepted*.
* ``positive="ood"`` -- the OpenOOD / pytorch-ood convention: OOD samples are the positives and
  they are ranked by ``-score``. FPR95 then means *the fraction of ID samples rejected as OOD when
  95% of OOD samples are rejected*.

AUROC is identical under both conventions (swapping the classes and negating the score maps the
ROC curve onto itself reflected through the anti-diagonal, which preserves area). FPR95 is **not**
the same number under the two conventions, and neither is "the" AUPR: this module always reports
both ``aupr_in`` (ID positive, ranked by ``score``) and ``aupr_out`` (OOD positive, ranked by
``-score``) with those fixed meanings whatever ``positive`` says; ``positive`` only changes which
FPR95 is reported.

Definitions (ID positive; ``t`` runs over the distinct score values, high to low)
---------------------------------------------------------------------------------
.. math::
    \\mathrm{TPR}(t) = \\frac{|\\{i \\in \\mathrm{ID}: s_i \\ge t\\}|}{n_\\mathrm{ID}}, \\qquad
    \\mathrm{FPR}(t) = \\frac{|\\{j \\in \\mathrm{OOD}: s_j \\ge t\\}|}{n_\\mathrm{OOD}}

* ``fpr95`` = :math:`\\mathrm{FPR}(t^*)` where :math:`t^*` is the **first** operating point (scanning
  thresholds from high to low) with :math:`\\mathrm{TPR} \\ge 0.95`; i.e. exactly
  ``fpr[np.searchsorted(tpr, 0.95, side="left")]`` on
  ``sklearn.metrics.roc_curve(y, s, drop_intermediate=False)``. Note that the reference code of
  Outlier Exposure / Energy / LogitNorm (``fpr_and_fdr_at_recall``) instead picks the operating
  point whose recall is *closest* to 0.95 (``argmin |recall - 0.95|``), which may lie *below*
  95% TPR; on ties-free data with many samples both agree to ~1/n, but they can differ on small or
  tie-heavy sets.
* ``auroc`` = trapezoidal area under that ROC curve (ties count 1/2), equal to
  ``sklearn.metrics.roc_auc_score``:
  :math:`\\mathrm{AUROC} = P(s_\\mathrm{ID} > s_\\mathrm{OOD}) + \\tfrac12 P(s_\\mathrm{ID} = s_\\mathrm{OOD})`.
* ``aupr_in`` = average precision with ID positive, :math:`\\sum_k (R_k - R_{k-1}) P_k`, equal to
  ``sklearn.metrics.average_precision_score(y_id, s)``; ``aupr_out`` = the same with OOD positive
  and score ``-s`` (``average_precision_score(y_ood, -s)``).

Implementation: one ``argsort`` of the concatenated scores, cumulative class counts at the distinct
score values, and closed forms for everything else -- several times faster than calling sklearn
(see ``workflow/bench/bench_metrics.py``) while agreeing with it to floating-point rounding.

:see Paper: Hendrycks & Gimpel 2017 (MSP baseline, FPR/AUROC/AUPR protocol); Liang et al. 2018
    (ODIN); Liu et al. 2020 (Energy); Wei et al. 2022 (LogitNorm); Yang et al. 2022 (OpenOOD).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "ood_metrics",
    "fpr_at_tpr",
    "auroc",
    "aupr_in",
    "aupr_out",
    "accuracy",
    "mean_logit_norm",
    "OODMetrics",
    "POSITIVE_CHOICES",
]

POSITIVE_CHOICES = ("id", "ood")


# --------------------------------------------------------------------------- input checks


def _to_numpy(x: Any) -> np.ndarray:
    """Convert an array-like (including a CPU/GPU torch tensor) to a NumPy array without copying if possible."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch.Tensor, without importing torch
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _as_scores(x: Any, name: str) -> np.ndarray:
    """Validate a 1-D, non-empty, finite, real score array; return it as a floating array."""
    a = _to_numpy(x)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of scores, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty")
    if a.dtype == bool or np.issubdtype(a.dtype, np.integer):
        a = a.astype(np.float64)
    elif not np.issubdtype(a.dtype, np.floating):
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _check_positive(positive: str) -> str:
    if positive not in POSITIVE_CHOICES:
        raise ValueError(f"positive must be one of {POSITIVE_CHOICES}, got {positive!r}")
    return positive


def _check_tpr(tpr: float) -> float:
    t = float(tpr)
    if not (0.0 < t <= 1.0):  # also rejects NaN
        raise ValueError(f"tpr must be in (0, 1], got {tpr!r}")
    return t


# --------------------------------------------------------------------------- shared core


def _grouped_counts(id_scores: np.ndarray, ood_scores: np.ndarray):
    """Sort once and count each class per distinct score value.

    :return: ``(values, A0, B0)`` where ``values`` (length K) are the distinct scores in ascending
        order and ``A0``/``B0`` (length K+1, int64, leading 0) are the cumulative numbers of ID /
        OOD samples with score ``<= values[k-1]`` (``A0[k]`` counts groups ``0..k-1``).
    """
    n_id = id_scores.size
    dtype = np.result_type(id_scores.dtype, ood_scores.dtype)
    s = np.concatenate([id_scores.astype(dtype, copy=False), ood_scores.astype(dtype, copy=False)])
    # The sort need not be stable: equal scores are grouped and only per-group counts are used.
    order = np.argsort(s, kind="quicksort")
    s_sorted = s[order]
    # last index of every group of equal values (ascending order)
    ends = np.flatnonzero(s_sorted[1:] != s_sorted[:-1])
    ends = np.append(ends, s.size - 1)
    is_id = order < n_id  # ID samples occupy the first n_id slots of the concatenation
    cum_id = np.cumsum(is_id, dtype=np.int64)
    A0 = np.empty(ends.size + 1, dtype=np.int64)
    A0[0] = 0
    A0[1:] = cum_id[ends]
    C0 = np.empty_like(A0)
    C0[0] = 0
    C0[1:] = ends + 1
    B0 = C0 - A0
    return s_sorted[ends], A0, B0


def _metrics_from_counts(values, A0, B0, *, positive: str, tpr: float) -> dict[str, float]:
    """All metrics from the grouped cumulative counts (see :func:`_grouped_counts`)."""
    n_id = int(A0[-1])
    n_ood = int(B0[-1])
    n = n_id + n_ood
    a = np.diff(A0)  # ID count per distinct value (ascending)
    b = np.diff(B0)  # OOD count per distinct value
    C0 = A0 + B0

    # AUROC: trapezoid on the ID-positive ROC, exact integer arithmetic.
    # Between consecutive thresholds FP grows by b_k while TP goes from n_id-A0[k+1] to n_id-A0[k].
    twice_area = np.dot(b, (2 * n_id) - A0[:-1] - A0[1:])
    au = float(twice_area) / (2.0 * n_id * n_ood)

    # AUPR-In: thresholds high->low; at group k TP = n_id - A0[k], predicted pos = n - C0[k].
    prec_in = (n_id - A0[:-1]) / (n - C0[:-1])
    ap_in = float(np.dot(a, prec_in)) / n_id

    # AUPR-Out: OOD positive on -score, thresholds = scores low->high; TP = B0[k+1], pos = C0[k+1].
    prec_out = B0[1:] / C0[1:]
    ap_out = float(np.dot(b, prec_out)) / n_ood

    if positive == "id":
        # ROC points (with origin) high->low: tpr_j = (n_id - A0[K-j]) / n_id, j = 0..K.
        tpr_curve = (n_id - A0[::-1]) / n_id
        j = int(np.searchsorted(tpr_curve, tpr, side="left"))
        k = A0.size - 1 - j  # index into A0/B0 of the "<= values[k-1]" prefix excluded
        fpr = (n_ood - int(B0[k])) / n_ood
        thr = float(values[k])  # accepted as ID iff score >= thr
    else:
        # OOD-positive ROC points (with origin), thresholds on -score high->low = score low->high.
        tpr_curve = B0 / n_ood
        j = int(np.searchsorted(tpr_curve, tpr, side="left"))
        fpr = int(A0[j]) / n_id
        thr = float(values[j - 1])  # flagged as OOD iff score <= thr

    return {"fpr95": fpr, "auroc": au, "aupr_in": ap_in, "aupr_out": ap_out, "tpr_threshold": thr}


# --------------------------------------------------------------------------- public API


def ood_metrics(
    id_scores, ood_scores, *, positive: str = "id", tpr: float = 0.95
) -> dict[str, float]:
    """FPR at ``tpr`` TPR, AUROC, AUPR-In and AUPR-Out from one sort of the scores.

    Scores are **higher = more in-distribution**. See the module docstring for exact definitions.

    .. math::
        \\mathrm{FPR95} = \\mathrm{FPR}(t^*),\\quad
        t^* = \\max\\{t : \\mathrm{TPR}(t) \\ge 0.95\\}

    i.e. the *first* ROC operating point (thresholds scanned high to low over distinct scores) whose
    TPR reaches ``tpr`` -- not the point whose TPR is *closest* to it, as in the
    ``fpr_and_fdr_at_recall`` reference code of OE/Energy/LogitNorm.

    :param id_scores: ``(n_id,)`` scores of in-distribution samples.
    :param ood_scores: ``(n_ood,)`` scores of OOD samples.
    :param positive: ``"id"`` (default; ODIN/Energy/LogitNorm): ``fpr95`` is the fraction of OOD
        samples with ``score >= tpr_threshold`` when ``tpr`` of ID samples are accepted.
        ``"ood"`` (OpenOOD/pytorch-ood): OOD is positive and ranked by ``-score``; ``fpr95`` is the
        fraction of ID samples with ``score <= tpr_threshold`` when ``tpr`` of OOD samples are
        flagged. ``auroc``, ``aupr_in`` and ``aupr_out`` do not depend on ``positive``.
    :param tpr: target true-positive rate in ``(0, 1]``.
    :return: dict with ``fpr95``, ``auroc``, ``aupr_in`` (ID positive, score),
        ``aupr_out`` (OOD positive, ``-score``), all fractions in ``[0, 1]``, and
        ``tpr_threshold`` (the score threshold of the chosen operating point, in score units).
    :raises ValueError: empty or non-1-D inputs, NaN/inf scores, bad ``positive``, ``tpr`` outside
        ``(0, 1]``.
    """
    positive = _check_positive(positive)
    tpr = _check_tpr(tpr)
    ids = _as_scores(id_scores, "id_scores")
    oods = _as_scores(ood_scores, "ood_scores")
    values, A0, B0 = _grouped_counts(ids, oods)
    return _metrics_from_counts(values, A0, B0, positive=positive, tpr=tpr)


def fpr_at_tpr(id_scores, ood_scores, tpr: float = 0.95, positive: str = "id") -> float:
    """False-positive rate at the first operating point with TPR ``>= tpr`` (see :func:`ood_metrics`).

    Scores are higher = more ID; ``positive`` selects which class the TPR refers to.
    """
    return ood_metrics(id_scores, ood_scores, positive=positive, tpr=tpr)["fpr95"]


def auroc(id_scores, ood_scores) -> float:
    """Area under the ROC curve (same under both sign conventions).

    .. math:: \\mathrm{AUROC} = P(s_\\mathrm{ID} > s_\\mathrm{OOD}) + \\tfrac12 P(s_\\mathrm{ID} = s_\\mathrm{OOD})
    """
    return ood_metrics(id_scores, ood_scores)["auroc"]


def aupr_in(id_scores, ood_scores) -> float:
    """Average precision with ID as positive class and ``score`` as ranking (higher = more ID).

    .. math:: \\mathrm{AP} = \\sum_k (R_k - R_{k-1}) P_k
    """
    return ood_metrics(id_scores, ood_scores)["aupr_in"]


def aupr_out(id_scores, ood_scores) -> float:
    """Average precision with OOD as positive class, ranked by ``-score``."""
    return ood_metrics(id_scores, ood_scores)["aupr_out"]


def accuracy(logits_or_probs, labels) -> float:
    """Top-1 accuracy: fraction of rows whose argmax equals the label.

    :param logits_or_probs: ``(N, C)`` logits or probabilities (argmax is the same).
    :param labels: ``(N,)`` integer class labels.
    """
    z = _to_numpy(logits_or_probs)
    y = _to_numpy(labels)
    if z.ndim != 2:
        raise ValueError(f"logits_or_probs must be 2-D (N, C), got shape {z.shape}")
    if y.ndim != 1 or y.shape[0] != z.shape[0]:
        raise ValueError(f"labels must have shape ({z.shape[0]},), got {y.shape}")
    if z.shape[0] == 0:
        raise ValueError("empty input")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {y.dtype}")
    return float(np.mean(np.argmax(z, axis=1) == y))


def mean_logit_norm(logits) -> float:
    """Mean L2 norm of the logit vectors (rows), the quantity LogitNorm keeps constant.

    .. math:: \\frac1N \\sum_{i=1}^N \\lVert z_i \\rVert_2
    """
    z = _to_numpy(logits)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D (N, C), got shape {z.shape}")
    if z.size == 0:
        raise ValueError("empty input")
    z = z.astype(np.float64, copy=False)
    if not np.isfinite(z).all():
        raise ValueError("logits contain NaN or inf")
    return float(np.mean(np.linalg.norm(z, axis=1)))


class OODMetrics:
    """Accumulate scores over batches (torchmetrics style), then compute :func:`ood_metrics`.

    Scores are higher = more ID; ``is_ood`` is a boolean/0-1 mask, 1 for OOD samples.

    >>> m = OODMetrics()
    >>> m.update([3.0, 2.0], [0, 0]); m.update([1.0], [1])
    >>> m.compute()["auroc"]
    1.0
    """

    def __init__(self, *, positive: str = "id", tpr: float = 0.95):
        self.positive = _check_positive(positive)
        self.tpr = _check_tpr(tpr)
        self.reset()

    def reset(self) -> None:
        """Drop everything accumulated so far."""
        self._id: list[np.ndarray] = []
        self._ood: list[np.ndarray] = []

    def update(self, scores, is_ood) -> None:
        """Add a batch of ``scores`` with their ``is_ood`` flags (same shape, 1-D)."""
        s = _to_numpy(scores)
        m = _to_numpy(is_ood)
        if s.shape != m.shape or s.ndim != 1:
            raise ValueError(f"scores {s.shape} and is_ood {m.shape} must be 1-D of the same shape")
        if s.size == 0:
            return
        s = _as_scores(s, "scores")
        if m.dtype != bool:
            if not np.isin(m, (0, 1)).all():
                raise ValueError("is_ood must be boolean or 0/1")
            m = m.astype(bool)
        self._id.append(s[~m])
        self._ood.append(s[m])

    def compute(self) -> dict[str, float]:
        """Metrics over everything seen since the last :meth:`reset`."""
        ids = np.concatenate(self._id) if self._id else np.empty(0)
        oods = np.concatenate(self._ood) if self._ood else np.empty(0)
        return ood_metrics(ids, oods, positive=self.positive, tpr=self.tpr)
