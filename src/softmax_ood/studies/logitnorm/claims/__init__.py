"""The LogitNorm paper's claims (Wei et al. 2022), declared as data and measured on this run.

:func:`claims` lists them in order, each one :class:`~softmax_ood.analysis.claims.Claim`: its
spec (what the paper says, the statistic, its threshold, what selected its settings and what
confirms it) beside its named measurement, a function of the study's :class:`.evidence.Evidence`
(the frames, the section, and what several claims share, computed once). The shared engine
(:func:`softmax_ood.analysis.claims.judge`) measures and judges them all with one rule
(one-sided test at ``alpha``, power to detect the effect). The premises are in
:mod:`.premises`, the comparisons with CE in :mod:`.comparisons`, the other models' and
architectures' claims in :mod:`.models`, what the paper printed in :mod:`.paper`.

Premises first:

* ``P0`` CE fitted (final training loss far below its constant solution's, log of the classes).
* ``P0-ln`` the LogitNorm model fitted, the same bar (its constant solution: equal logits, the
  uniform softmax, loss log of the classes); it gates every claim resting on that model.
* ``P1`` CE overconfident on ID data (temperature fitted on validation > 1).
* ``P2`` CE's logits larger on ID than on OOD (Table 5's observation).
* ``P-floor-<set>`` one per OOD test set: the set is not trivial (the floor battery's best
  detector's FPR95 exceeds CE's, :mod:`.floor`, :mod:`softmax_ood.analysis.battery`). Far sets where it fails on the selection half of the
  test images are left out of the headline average (:func:`.floor.set_status` names them: *not
  kept*, or *trivial* where the floor solves them); the headline sets are the others.
* ``P-ce-fpr`` the paper's regime: CE's MSP FPR95 on the headline sets is substantial
  (``ce_fpr_floor``; the paper's 49.52 % beside it).
* ``P-ln-norm`` LogitNorm's raw ID logit norm within ``logit_norm_factor`` of the paper's 1.48;
  it gates the claim that rests on the logit scale (``C4``, Table 4's calibration).

The MSP comparisons on the main architecture (``headline``/``C1``, ``C1-near``, ``C5``,
``P-floor-*``, ``P-ce-fpr``) are judged with seeds *and* test images (:mod:`.evidence`);
``C1``/``C1-near`` as a relative FPR95 reduction (% of CE's), with power to detect
``relative_effect`` (one third; the paper reports two thirds). So are the other comparisons:
``C3-*`` (other scores), ``C6`` (GODIN), ``C7`` (each architecture) from every score's per-image
values, ``C4`` from the per-image confidence after TS and correctness (the ECE recomputed on each
resample of the ID test images). A comparison whose per-image values the samples frame lacks
falls back to seeds only, and its detail says so.

Two rows test what the paper claims beyond the FPR95 reduction, with the same test as ``C1``:
``C1-auroc`` (Table 1's AUROC, LogitNorm - CE) and ``C9`` (Sec. 1 / Table 2, LogitNorm "not only
outperforms" post-hoc scores: LogitNorm's MSP FPR95 below CE's with Energy, the score fixed in
advance as CE's best in the paper's Table 2). The paper's effects of these rows and the paper's
relative reduction (``paper_value`` of ``headline``/``C1``: 68.4 %) come from
``paper_values.csv``, not retyped.
"""

from __future__ import annotations

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, judge
from ..shared import HEADLINE
from .comparisons import headline_claims, score_claims
from .evidence import Evidence
from .models import architecture_claims, calibration_and_penalty_claims, norm_growth_claims
from .paper import (
    PAPER,
    PAPER_EFFECTS,
    paper_relative_reduction,
    paper_value,
    posthoc_reference,
)
from .premises import fit_premises, regime_premises

__all__ = [
    "PAPER",
    "PAPER_EFFECTS",
    "Evidence",
    "claim_specs",
    "claims",
    "claims_table",
    "evaluate_logitnorm_claims",
    "paper_relative_reduction",
    "paper_value",
    "posthoc_reference",
]


def claims(spec: dict) -> list[Claim]:
    """The study's claims in declaration order (premises, the comparisons with CE, the other
    models and architectures), each its spec beside its named measurement."""
    return [
        *fit_premises(spec),  # P0, P0-ln, P1, P2
        *regime_premises(spec),  # P-floor-<set>..., P-ce-fpr, P-ln-norm
        *headline_claims(spec),  # headline, C1, C2, C1-near
        *score_claims(spec),  # C3-<score>..., C9, C1-auroc
        *calibration_and_penalty_claims(spec),  # C4, C5-norm, C5
        *architecture_claims(spec),  # C6, C7
        *norm_growth_claims(spec),  # C8
    ]


def claim_specs(spec: dict) -> list[ClaimSpec]:
    """The claims, as data (thresholds in the statistic's unit), each with what decided its
    settings and what confirms it."""
    return [c.spec for c in claims(spec)]


def evaluate_logitnorm_claims(
    runs: pd.DataFrame,
    ood: pd.DataFrame,
    curves: pd.DataFrame,
    samples: pd.DataFrame,
    floor: pd.DataFrame,
    spec: dict,
) -> pd.DataFrame:
    """The claims table of this study (see :mod:`softmax_ood.analysis.claims`)."""
    evidence = Evidence(runs, ood, curves, samples, floor, spec)
    return judge(PAPER, claims(spec), evidence, alpha=float(spec["alpha"]), headline=HEADLINE)


def claims_table(frames: dict, spec: dict) -> pd.DataFrame:
    """The study's claims table from its frames (the shared claims rule's function)."""
    f = frames
    return evaluate_logitnorm_claims(
        f["runs"], f["ood"], f["curves"], f["samples"], f["floor"], spec
    )
