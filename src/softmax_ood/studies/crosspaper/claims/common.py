"""What every part of the cross-paper claims reads: the papers each row joins, the study's
settings (shifts, losses, selection and confirmation texts) and two small measurement helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement
from ....analysis.measures import per_seed
from ...seddik import claims as seddik

__all__ = [
    "FAR",
    "KANG",
    "PAPERS",
    "RAY",
    "SEDDIK",
    "SELECTION",
    "ULMER",
    "WEI",
    "losses",
    "per_seed_values",
    "ray_kw",
    "shifts",
    "slope",
    "image_kw",
]

WEI = "Wei et al. 2022 (LogitNorm)"  # the LogitNorm study's paper name
KANG = "Kang et al. 2024"
ULMER = "Ulmer & Cinà 2021"
SEDDIK = seddik.PAPER
#: the papers each kind of row joins (the ``paper`` column)
PAPERS = {
    "fitted": WEI,
    "changes": f"{KANG} × {WEI}",
    "predictions_change": f"{KANG} × {WEI}",
    "discriminator_null": f"{KANG} × {WEI}",
    "score_rises": f"{KANG} × {WEI}",
    "score_separated": f"{KANG} × {WEI}",
    "ocs_trend": f"{KANG} × {WEI}",
    "far_nontrivial": f"{KANG} × {WEI}",
    "same_rate": f"{KANG} × {WEI}",
    "rays_certain": f"{ULMER} × {WEI}",
    "normalised_uncertain": f"{ULMER} × {WEI}",
    "normalised_below_ce": f"{ULMER} × {WEI}",
    "rays_linear": f"{ULMER} × {WEI}",
    "normalised_bounded": f"{ULMER} × {WEI}",
    "score_reads_raw": f"{ULMER} × {WEI}",
    "features_informative": f"{SEDDIK} × {WEI}",
    "stats_independent": f"{SEDDIK} × {WEI}",
    "seddik_weights": f"{SEDDIK} × {WEI}",
    "seddik_logits": f"{SEDDIK} × {WEI}",
    "seddik_accuracy": f"{SEDDIK} × {WEI}",
    "seddik_same_weights": f"{SEDDIK} × {WEI}",
    "seddik_same_logits": f"{SEDDIK} × {WEI}",
}
RAY = "ray"
FAR = "far_ood"
SELECTION = "fixed in advance in the config (shifts, image budget, alphas, bars; discriminator alpha 10, the authors')"


def shifts(section: dict) -> list[str]:
    g = section["grid"]
    return list(g["corruptions"]) + (["rotation"] if g["rotations"] else [])


def losses(section: dict) -> list[str]:
    """The two networks compared: the baseline's loss, then the method's."""
    return [section["baseline"], section["method"]]


def _seeds(section: dict) -> str:
    return ", ".join(str(s) for s in section["seeds"])


def image_kw(section: dict) -> dict[str, str]:
    """Selection and confirmation of the rows read on the test images (shifts, premises)."""
    conf = f"seeds {_seeds(section)} × the first {section['grid']['eval_size']} test images"
    return {"selection": SELECTION, "confirmation": conf}


def ray_kw(section: dict) -> dict[str, str]:
    """Selection and confirmation of the rows read along the rays."""
    return {
        "selection": SELECTION,
        "confirmation": f"seeds {_seeds(section)} × rays through "
        f"the first {section['rays']['n_points']} test images",
    }


def per_seed_values(values: pd.Series, what: str) -> Measurement:
    """Per-seed values (index: seed) as samples for the engine (Kang's helper, NaNs dropped)."""
    return per_seed(values.dropna().astype(float), what)


def slope(x: np.ndarray, y: np.ndarray) -> float:
    """The least-squares slope of ``y`` on ``x`` (NaN: fewer than 2 points or no spread)."""
    if len(x) < 2 or np.ptp(x) == 0:
        return math.nan
    return float(np.polyfit(x, y, 1)[0])
