"""The toy study's claims: a premise (the noise does not drown the line) and the claim (the
slope is positive), judged by the shared engine over seeds."""

from __future__ import annotations

import pandas as pd

from softmax_ood.analysis.claims import ClaimSpec, Measurement, evaluate_claims

from .lines import slopes


def claim_specs(section: dict) -> list[ClaimSpec]:
    return [
        ClaimSpec(
            "P-fit",
            "the residual spread is below the line's rise",
            "residual sd / |true slope|",
            1.0,
            "<",
            kind="premise",
        ),
        ClaimSpec(
            "slope",
            "the fitted slope is positive",
            "least-squares slope",
            0.0,
            ">",
            requires=("P-fit",),
        ),
    ]


def claims_table(frames: dict, section: dict) -> pd.DataFrame:
    table = slopes(frames["lines"])
    rise = abs(float(section["slope"])) or 1.0
    measurements = {
        "P-fit": Measurement(
            float((table["residual_sd"] / rise).mean()),
            samples=tuple(table["residual_sd"] / rise),
        ),
        "slope": Measurement(float(table["slope"].mean()), samples=tuple(table["slope"])),
    }
    return evaluate_claims(
        "Toy 2099", claim_specs(section), measurements, alpha=float(section["alpha"])
    )
