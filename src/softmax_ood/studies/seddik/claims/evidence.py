"""What Seddik's claims are measured on (:class:`Evidence`: the study's frames, the bars the
measurements use, and the computations two claims share, cached) and the settings their specs
are written with (:class:`Settings`, from the config's ``seddik.claims`` section)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from .common import IMAGES, LOGIT_GAP_BAR, PAPER_SETTINGS, WEIGHT_RATIO_BAR
from .network import _features_accuracy
from .weights import expected_weight_ratio


@dataclass
class Evidence:
    """The frames the claims are measured on (Figs. 2-5 and the validation) and the bars the
    measurements need; what two claims share is computed once (``cached_property``)."""

    fig2: pd.DataFrame
    fig4: pd.DataFrame
    fig5: pd.DataFrame
    validation: pd.DataFrame
    fig3: pd.DataFrame | None
    max_gap_points: float
    alpha: float
    weight_ratio_bar: float

    @cached_property
    def fig5_accuracy(self) -> pd.DataFrame:
        """Per network, Fig. 5's test accuracy, theory and practice (P3 and C3)."""
        return _features_accuracy(self.fig5)

    @cached_property
    def weight_ratio_expected(self) -> float:
        """The C3-weights ratio an exact theory gives on Fig. 5's own sizes (C3-weights' effect
        in its spec and the power of its measurement)."""
        return expected_weight_ratio(self.fig5)


@dataclass(frozen=True)
class Settings:
    """What the claims' specs are written with: the bars (``claims.max_gap_points``, the
    sanity row's ``ridge_n_gap``, C3-weights' and C3-logits' bars), the exact-theory ratio
    that sets C3-weights' effect (``None``: no effect, power n/a) and the image pair's name."""

    max_gap_points: float
    ridge_n_gap: float
    weight_ratio_bar: float = WEIGHT_RATIO_BAR
    logit_gap_bar: float = LOGIT_GAP_BAR
    weight_ratio_expected: float | None = None
    images: str = IMAGES

    @classmethod
    def of(cls, section: Mapping, weight_ratio_expected: float | None = None) -> Settings:
        """From a ``seddik.claims`` section (its ``alpha`` is the judge's, not a spec's)."""
        return cls(
            max_gap_points=section["max_gap_points"],
            ridge_n_gap=section["ridge_n_gap"],
            weight_ratio_bar=section.get("weight_ratio_bar", WEIGHT_RATIO_BAR),
            logit_gap_bar=section.get("logit_gap_bar", LOGIT_GAP_BAR),
            weight_ratio_expected=weight_ratio_expected,
            images=section.get("images", IMAGES),
        )

    @property
    def b(self) -> float:
        return self.max_gap_points

    @property
    def r_exact(self) -> float | None:
        """The exact-theory ratio where it is defined (finite), else ``None``."""
        r = self.weight_ratio_expected
        return r if r is not None and math.isfinite(r) else None

    @property
    def bar_fixed(self) -> str:
        """The selection text of a row whose setting is the accuracy bar (the default)."""
        return (
            f"fixed in advance: the +- {self.max_gap_points:g}-point bar, {PAPER_SETTINGS}, "
            "the class pair (a documented confusable pair)"
        )
