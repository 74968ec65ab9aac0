"""Seddik's claims table: :func:`claims`, the study's claims in their declaration order
(premises, claims, sanity rows), each one unit of spec and named measurement
(:mod:`.premises`, :mod:`.matches`), judged by the shared engine on the study's
:class:`~.evidence.Evidence`."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, judge
from ..shared import HEADLINE
from .common import IMAGES, LOGIT_GAP_BAR, PAPER, WEIGHT_RATIO_BAR
from .evidence import Evidence, Settings
from .matches import c1, c1_train, c2, c3, c3_logits, c3_weights, c4, c5
from .premises import p1, p2, p3, p4, s1, s2


def claims(section: Mapping, weight_ratio_expected: float | None = None) -> list[Claim]:
    """The study's claims for a ``seddik.claims`` section (its bars; ``images``: the image
    pair's name), premises first, the sanity rows last; ``weight_ratio_expected``
    (:func:`~.weights.expected_weight_ratio` of the Fig. 5 frame) sets C3-weights' effect
    (``None``: no effect, power n/a)."""
    s = Settings.of(section, weight_ratio_expected)
    units = (p1, p2, p3, p4, c1, c1_train, c2, c3_weights, c3_logits, c3, c4, c5, s1, s2)
    return [unit(s) for unit in units]


def claim_specs(
    max_gap_points: float,
    ridge_n_gap: float,
    weight_ratio_bar: float = WEIGHT_RATIO_BAR,
    logit_gap_bar: float = LOGIT_GAP_BAR,
    weight_ratio_expected: float | None = None,
    images: str = IMAGES,
) -> list[ClaimSpec]:
    """The specs of :func:`claims` (each with what decided its settings and what confirms it);
    ``weight_ratio_expected`` sets C3-weights' effect (``None``: no effect, power n/a)."""
    section = {
        "max_gap_points": max_gap_points,
        "ridge_n_gap": ridge_n_gap,
        "weight_ratio_bar": weight_ratio_bar,
        "logit_gap_bar": logit_gap_bar,
        "images": images,
    }
    return [c.spec for c in claims(section, weight_ratio_expected)]


def evaluate_seddik_claims(
    fig2: pd.DataFrame,
    fig4: pd.DataFrame,
    fig5: pd.DataFrame,
    validation: pd.DataFrame,
    fig3: pd.DataFrame | None = None,
    *,
    max_gap_points: float,
    ridge_n_gap: float,
    alpha: float = 0.05,
    weight_ratio_bar: float = WEIGHT_RATIO_BAR,
    logit_gap_bar: float = LOGIT_GAP_BAR,
    images: str = IMAGES,
) -> pd.DataFrame:
    """The claims table (premises first, the sanity row last); columns of
    :data:`softmax_ood.analysis.claims.COLUMNS`."""
    evidence = Evidence(
        fig2,
        fig4,
        fig5,
        validation,
        fig3,
        max_gap_points=max_gap_points,
        alpha=alpha,
        weight_ratio_bar=weight_ratio_bar,
    )
    section = {
        "max_gap_points": max_gap_points,
        "ridge_n_gap": ridge_n_gap,
        "weight_ratio_bar": weight_ratio_bar,
        "logit_gap_bar": logit_gap_bar,
        "images": images,
    }
    return judge(
        PAPER,
        claims(section, evidence.weight_ratio_expected),
        evidence,
        alpha=alpha,
        headline=HEADLINE,
    )


def claims_table(frames: dict, bars: dict) -> pd.DataFrame:
    """The study's claims table from its frames and the claims' bars (the shared claims rule's
    function)."""
    return evaluate_seddik_claims(**frames, **bars)
