"""The premises of the cross-paper study: the networks fitted, the discriminator reads clean
images as ID, each shift is a graded axis (it changes the images and the decisions, its OOD
score rises and spans more than the null tolerance), and image statistics (the floor battery) do not solve
LogitNorm's far OOD sets. Each claim is its spec beside its named measurement."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ....analysis.claims import Claim, ClaimSpec, Measurement, spearman
from ....analysis.measures import separation
from ....analysis.premises import FITTED_SHARE, fitted
from .common import image_kw, losses, per_seed_values, shifts
from .evidence import Evidence

__all__ = ["fit_premises", "shift_premises"]


def fitted_share(ev: Evidence, loss: str) -> Measurement:
    fit = ev.frames["fit"]
    f = fit[fit["loss"] == loss].set_index("seed")
    family = str(f["family"].iloc[0]) if len(f) else "ce"
    return fitted(
        f["train_loss"],
        f["ocs_loss"],
        loss={"logitnorm": "logit_norm"}.get(family, family),
        what=loss,
    )


def clean_score_gap(ev: Evidence) -> Measurement:
    ood = ev.frames["ood_scores"]
    clean = ood[ood["shift"] == "none"]
    reps = (
        np.abs(np.asarray(clean["per_repeat"].iloc[0], dtype=float) - 0.5)
        if len(clean)
        else np.array([])
    )
    return Measurement(
        float(reps.mean()) if len(reps) else math.nan,
        f"clean test split: OOD score {ev.scores.get('id', math.nan):.3f}; |score − 0.5| per "
        "repeat " + ", ".join(f"{v:.3f}" for v in reps),
        samples=tuple(reps),
    )


def fit_premises(section: dict) -> list[Claim]:
    c, kw = section["claims"], image_kw(section)
    return [
        *(
            Claim(
                ClaimSpec(
                    f"fitted:{loss}",
                    f"Premise: the {loss} network fitted (training loss far below its OCS's)",
                    "share of the OCS's training loss removed, per seed",
                    FITTED_SHARE,
                    ">",
                    kind="premise",
                    **kw,
                ),
                partial(fitted_share, loss=loss),
            )
            for loss in losses(section)
        ),
        Claim(
            ClaimSpec(
                "discriminator_null",
                "Premise: the discriminator scores the clean test images as ID (OOD score 0.5)",
                "|OOD score − 0.5| of the clean test split, per discriminator repeat",
                float(c["null_tolerance"]),
                "<",
                kind="premise",
                **kw,
            ),
            clean_score_gap,
        ),
    ]


def least_change(ev: Evidence, s: str) -> Measurement:
    levels = ev.frames["levels"]
    rows = levels[(levels["shift"] == s) & (levels["level"] > 0)]
    if rows.empty:
        return Measurement(math.nan, f"{s}: no level")
    least = rows.loc[rows["change"].astype(float).idxmin()]
    per = np.asarray(
        levels.set_index("eval_set").loc[least["eval_set"], "change_per_image"], dtype=float
    )
    return Measurement(
        float(per.mean()),
        f"{s}: smallest mean change at {least['eval_set']} ({per.mean():.4f}; per level "
        + ", ".join(f"{r.eval_set}: {float(r.change):.4f}" for r in rows.itertuples())
        + f"), {len(per)} images",
        samples=tuple(per),
    )


def decisions_changed(ev: Evidence, s: str) -> Measurement:
    ser = ev.axes[s].series
    top = ser["level"].max()
    at_top = ser[ser["level"] == top].groupby("seed")["changed"].mean()
    return per_seed_values(
        at_top,
        f"{s}@{top:g}: share of decisions changed vs clean (mean of {ev.base}, {ev.method})",
    )


def score_rises(ev: Evidence, s: str) -> Measurement:
    axis = ev.axes[s]
    return spearman(
        axis.levels,
        axis.scores,
        what=f"{s}: OOD score per level "
        + ", ".join(f"{lvl:g}: {v:.3f}" for lvl, v in zip(axis.levels, axis.scores, strict=True))
        + "; ",
        alternative="greater",
    )


def score_separated(ev: Evidence, s: str) -> Measurement:
    axis = ev.axes[s]
    reps = ev.frames["ood_scores"].set_index("eval_set")["per_repeat"]
    top_name, zero_name = axis.names[-1], axis.names[0]
    return separation(
        np.asarray(reps.get(top_name, []) if len(axis.levels) > 1 else [], dtype=float),
        np.asarray(reps.get(zero_name, []), dtype=float),
        float(ev.bars["null_tolerance"]),
        f"{s}: top level {top_name} vs level 0 ({zero_name})",
    )


def far_floor(ev: Evidence, name: str) -> Measurement:
    return ev.far_floors[name]


def shift_premises(section: dict) -> list[Claim]:
    c, kw = section["claims"], image_kw(section)
    out = []
    for s in shifts(section):
        out += [
            Claim(
                ClaimSpec(
                    f"changes:{s}",
                    f"Premise: every {s} level changes the images vs the level below",
                    "mean |pixel change| vs the level below, per image, at the level changing least",
                    float(c["change_epsilon"]),
                    ">",
                    kind="premise",
                    **kw,
                ),
                partial(least_change, s=s),
            ),
            Claim(
                ClaimSpec(
                    f"predictions_change:{s}",
                    f"Premise: the top {s} level changes the networks' decisions",
                    "share of images whose arg-max differs from the clean image's, per seed",
                    float(c["prediction_epsilon"]),
                    ">",
                    kind="premise",
                    **kw,
                ),
                partial(decisions_changed, s=s),
            ),
            Claim(
                ClaimSpec(
                    f"score_rises:{s}",
                    f"Premise: the OOD score rises with the {s} level (the axis is graded)",
                    "Spearman rho(level, OOD score), level 0 included, exact one-sided p",
                    0.0,
                    ">",
                    kind="premise",
                    **kw,
                ),
                partial(score_rises, s=s),
            ),
            Claim(
                ClaimSpec(
                    f"score_separated:{s}",
                    f"Premise: the top {s} level is clearly more OOD than level 0 (OOD score "
                    f"higher by more than the null tolerance {float(c['null_tolerance']):g}, "
                    "Kang's bar)",
                    "OOD score(top level) − OOD score(level 0), Welch t-test over the "
                    "discriminator repeats",
                    float(c["null_tolerance"]),
                    ">",
                    kind="premise",
                    requires=("discriminator_null",),
                    **kw,
                ),
                partial(score_separated, s=s),
            ),
        ]
    return out + [
        Claim(
            ClaimSpec(
                f"far_nontrivial:{name}",
                f"Premise: image statistics (the floor battery) do not solve LogitNorm's OOD set {name}",
                "share of the set the floor battery's best detector accepts at 95 % ID recall (FPR95, selection half), "
                "one-sided binomial test",
                float(c["far_floor_fpr95"]),
                ">",
                kind="premise",
                **kw,
            ),
            partial(far_floor, name=name),
        )
        for name in section["far_ood"]
    ]
