"""The toy study's claims: a premise (the noise does not drown the line) and the claim (the
slope is positive), each one :class:`~softmax_ood.analysis.claims.Claim` (its spec beside its
named measurement), judged by the shared engine over seeds."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from softmax_ood.analysis.claims import Claim, ClaimSpec, Measurement, judge

from .lines import slopes


@dataclass
class Evidence:
    """What the measurements read: the per-seed fits of the lines frame."""

    table: pd.DataFrame
    rise: float


def residual_to_rise(ev: Evidence) -> Measurement:
    ratio = ev.table["residual_sd"] / ev.rise
    return Measurement(float(ratio.mean()), samples=tuple(ratio))


def fitted_slope(ev: Evidence) -> Measurement:
    return Measurement(float(ev.table["slope"].mean()), samples=tuple(ev.table["slope"]))


def claims(section: dict) -> list[Claim]:
    return [
        Claim(
            ClaimSpec(
                "P-fit",
                "the residual spread is below the line's rise",
                "residual sd / |true slope|",
                1.0,
                "<",
                kind="premise",
            ),
            residual_to_rise,
        ),
        Claim(
            ClaimSpec(
                "slope",
                "the fitted slope is positive",
                "least-squares slope",
                0.0,
                ">",
                requires=("P-fit",),
            ),
            fitted_slope,
        ),
    ]


def claim_specs(section: dict) -> list[ClaimSpec]:
    return [c.spec for c in claims(section)]


def claims_table(frames: dict, section: dict) -> pd.DataFrame:
    evidence = Evidence(slopes(frames["lines"]), abs(float(section["slope"])) or 1.0)
    return judge("Toy 2099", claims(section), evidence, alpha=float(section["alpha"]))
