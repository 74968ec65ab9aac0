"""Seddik's sanity rows' measurements: the fixed point against the ridge closed form (S1) and
Fig. 5's class statistics independent of the classifier (S2)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement
from .common import _with_seed


def ridge_sanity(validation: pd.DataFrame) -> Measurement:
    """``n`` times the largest relative deviation of the squared-loss fixed point from the ridge
    closed form.

    The two routes are both deterministic equivalents but treat the rank-k mean terms
    differently, so they agree up to O(1/n) (``test_ridge_gap_is_order_one_over_n``): ``n ×``
    the gap stays O(1) as n grows, while a wrong printed form (δ with C̃, the printed R_2, ...)
    leaves an O(1) relative gap, i.e. ``n ×`` gap of order n."""
    cf = validation[
        (validation["check"] == "ridge") & (validation["reference_kind"] == "closed_form")
    ]
    if cf.empty:
        return Measurement(math.nan, "the validation frame has no ridge closed-form rows")
    ref = cf["reference"].astype(float).abs()
    rel = (cf["theory"].astype(float) - cf["reference"].astype(float)).abs() / np.maximum(
        ref, 1e-12
    )
    worst = cf.loc[rel.idxmax()]
    n = float(cf["n"].iloc[0])
    lams = ", ".join(f"{v:g}" for v in sorted(cf["lam"].unique()))
    return Measurement(
        float(n * rel.max()),
        f"largest relative gap {rel.max():.3g} (1/n = {1 / n:.3g}) over {len(cf)} comparisons "
        f"at λ ∈ {{{lams}}}, p={int(cf['p'].iloc[0])}, n={int(n)}; worst: {worst['quantity']} "
        f"of class {worst['cls']} at λ={worst['lam']:g} ({worst['theory']:.6g} vs "
        f"{worst['reference']:.6g}); deterministic on both sides, so no test",
    )


def statistics_independent(frame: pd.DataFrame) -> Measurement:
    """S2: per network, the share of the points behind the theory's class statistics that are
    also fit or test points (the Fig. 5 frame's ``statistics`` panel); the value is the largest
    share over networks (0: independent statistics). The detail gives the statistics' size and
    smallest class per network. A frame without that panel (made before it existed) gives an
    undefined statistic."""
    st = _with_seed(frame)
    st = st[st["panel"] == "statistics"] if "panel" in st.columns else st.iloc[:0]
    if st.empty:
        return Measurement(
            math.nan,
            "the Fig. 5 frame does not record where the theory's class statistics come from",
        )
    shares, parts = [], []
    for seed, g in st.groupby("seed", sort=True):
        size = g[(g["split"] == "stats") & (g["cls"] == "all")]["n_points"]
        per_class = g[(g["split"] == "stats") & (g["cls"] != "all")]["n_points"]
        fit = g.loc[g["split"] == "train", "value"].astype(float).sum()
        test = g.loc[g["split"] == "test", "value"].astype(float).sum()
        total = float(size.iloc[0]) if len(size) else math.nan
        shares.append((fit + test) / total if total > 0 else math.nan)
        parts.append(
            f"seed {seed}: {int(total) if math.isfinite(total) else 'n/a'} points"
            + (f" (smallest class {int(per_class.min())})" if len(per_class) else "")
            + f", {int(fit)} of them fit points, {int(test)} test points"
        )
    value = float(np.max(shares)) if not np.any(np.isnan(shares)) else math.nan
    what = (
        "independent of the fit and test parts"
        if value == 0
        else "shared with the classifier's own points: the weights match is built in"
        if value > 0
        else "undefined"
    )
    return Measurement(value, f"class statistics {what}; " + "; ".join(parts))
