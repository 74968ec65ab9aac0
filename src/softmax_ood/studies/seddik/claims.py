"""Seddik et al.'s claims as data, measured on the study's frames and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`).

* ``P1`` (premise): the fixed point is right where an exact answer exists: with the squared
  loss it reproduces the ridge closed form (Marchenko–Pastur deterministic equivalent) up to
  the O(1/n) terms the two routes treat differently (statistic: n × relative gap). If the
  implementation fails this, the accuracy comparisons below cannot be read as tests of the paper.
* ``C1``: Fig. 2, the theory predicts the trained classifier's test accuracy on Gaussian mixtures
  at every ``p`` (largest gap over ``p`` between theory and the seed-mean of practice).
* ``C2``: the same on digits (Fig. 4, over the training sizes ``n``).
* ``C3``: the same on the network features of Fig. 5 (k classes, one fit).

Gaps are in accuracy points (percent); the bar is the config's ``claims.max_gap_points``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims

__all__ = ["PAPER", "claim_specs", "evaluate_seddik_claims", "gap_over", "ridge_premise"]

PAPER = "Seddik et al. 2021"


def claim_specs(max_gap_points: float, ridge_n_gap: float) -> list[ClaimSpec]:
    return [
        ClaimSpec(
            "P1",
            "The fixed point is exact where an exact answer exists: with the squared loss it "
            "reproduces the ridge closed form (Marchenko–Pastur) up to O(1/n)",
            "n × largest relative |fixed point − closed form| over λ, classes and (m, σ, test "
            "accuracy)",
            threshold=ridge_n_gap,
            direction="<=",
            premise=True,
        ),
        ClaimSpec(
            "C1",
            "Fig. 2: on Gaussian mixtures the theory predicts the trained softmax classifier's "
            "test accuracy at every p",
            "largest |theory − practice (mean over seeds)| test accuracy over p, points",
            threshold=max_gap_points,
            direction="<=",
            requires=("P1",),
        ),
        ClaimSpec(
            "C2",
            "Fig. 4: on digits the theory predicts the trained classifier's test accuracy",
            "largest |theory − practice (mean over seeds)| test accuracy over n, points",
            threshold=max_gap_points,
            direction="<=",
            requires=("P1",),
        ),
        ClaimSpec(
            "C3",
            "Fig. 5: on network features the k-class theory predicts the test accuracy",
            "|theory − practice| test accuracy, points",
            threshold=max_gap_points,
            direction="<=",
            requires=("P1",),
        ),
    ]


def ridge_premise(validation: pd.DataFrame) -> Measurement:
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
        f"largest relative gap {rel.max():.3g} (1/n = {1 / n:.3g}) over {len(cf)} comparisons at λ ∈ {{{lams}}}, p={int(cf['p'].iloc[0])}, "
        f"n={int(cf['n'].iloc[0])}; worst: {worst['quantity']} of class {worst['cls']} at "
        f"λ={worst['lam']:g} ({worst['theory']:.6g} vs {worst['reference']:.6g})",
    )


def gap_over(frame: pd.DataFrame, x: str) -> Measurement:
    """Largest |theory − mean practice| test accuracy (points) over the values of column ``x``."""
    sel = frame[(frame["split"] == "test") & (frame["cls"] == "all")]
    th = sel[sel["source"] == "theory"].groupby(x)["accuracy"].mean()
    pr = sel[sel["source"] == "practice"].groupby(x)["accuracy"].agg(["mean", "std", "count"])
    common = sorted(set(th.index) & set(pr.index))
    if not common:
        return Measurement(math.nan, f"no {x} with both theory and practice rows")
    gaps = {v: 100 * abs(th[v] - pr.loc[v, "mean"]) for v in common}
    worst = max(gaps, key=gaps.get)
    std = pr.loc[worst, "std"]
    per = ", ".join(f"{v}: {g:.2f}" for v, g in gaps.items())
    return Measurement(
        float(gaps[worst]),
        f"worst at {x}={worst}: theory {100 * th[worst]:.2f} % vs practice "
        f"{100 * pr.loc[worst, 'mean']:.2f} ± {100 * std if not math.isnan(std) else math.nan:.2f} % "
        f"({int(pr.loc[worst, 'count'])} seeds); gap per {x}: {per}",
    )


def fig5_gap(frame: pd.DataFrame) -> Measurement:
    acc = frame[
        (frame["panel"] == "accuracy") & (frame["split"] == "test") & (frame["cls"] == "all")
    ]
    th = acc.loc[acc["source"] == "theory", "value"]
    pr = acc.loc[acc["source"] == "practice", "value"]
    if th.empty or pr.empty:
        return Measurement(math.nan, "the Fig. 5 frame has no test accuracy rows")
    t, p = float(th.iloc[0]), float(pr.iloc[0])
    k = int(frame.loc[frame["panel"] == "weights", "output"].max()) + 1
    n_test = int(frame.loc[frame["panel"] == "logits", "index"].max()) + 1
    return Measurement(
        100 * abs(t - p),
        f"theory {100 * t:.2f} % vs practice {100 * p:.2f} % on {n_test} test points, k={k}",
    )


def evaluate_seddik_claims(
    fig2: pd.DataFrame,
    fig4: pd.DataFrame,
    fig5: pd.DataFrame,
    validation: pd.DataFrame,
    *,
    max_gap_points: float,
    ridge_n_gap: float,
) -> pd.DataFrame:
    """The claims table (premise first); columns of :data:`softmax_ood.analysis.claims.COLUMNS`."""
    measurements = {
        "P1": ridge_premise(validation),
        "C1": gap_over(fig2, "p"),
        "C2": gap_over(fig4, "n"),
        "C3": fig5_gap(fig5),
    }
    return evaluate_claims(
        PAPER, claim_specs(max_gap_points, ridge_n_gap), measurements, alpha=0.05
    )
