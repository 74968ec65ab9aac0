"""Claims (a): Kang et al.'s reversion asked of the LogitNorm study's networks, along each
shift (``ocs_trend:<loss>:<shift>``, ``same_rate:<shift>``) and along LogitNorm's own far OOD
sets (``ocs_trend:<loss>:far_ood``). Each claim is its spec beside its named measurement."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement
from .common import FAR, image_kw, losses, per_seed_values, shifts
from .evidence import Evidence

__all__ = ["far_claims", "shift_claims"]


def reversion_rho(ev: Evidence, loss: str, s: str) -> Measurement:
    return per_seed_values(
        ev.reversion[loss, s].rho,
        f"{loss}, {s}: Spearman rho(OOD score, distance to the OCS) per seed",
    )


def rate_difference(ev: Evidence, s: str) -> Measurement:
    base, method = ev.base, ev.method
    rev = {loss: ev.reversion[loss, s] for loss in (base, method)}
    slopes = {loss: r.rate for loss, r in rev.items()}
    common = sorted(set(slopes[base].dropna().index) & set(slopes[method].dropna().index))
    diff = slopes[method].loc[common] - slopes[base].loc[common]
    if not len(diff):
        return Measurement(math.nan, f"{s}: no slope")
    faster = method if diff.mean() < 0 else base
    ceiling = ev.ceiling
    return Measurement(
        float(diff.mean()),
        f"{s}: slope of ||z||/||z||(clean) (raw logit norm) per unit OOD score, {base} "
        f"{slopes[base].mean():.3f}, {method} {slopes[method].mean():.3f}; difference "
        f"{diff.mean():.3f} (per seed "
        + ", ".join(f"{k}: {v:.3f}" for k, v in diff.items())
        + f"); {faster}'s logits shrink faster. The KL to the OCS (ceiling about log K "
        f"= {ceiling:.3f}, the OCS's entropy) is not used: clean KL "
        + ", ".join(
            f"{loss} {rev[loss].kl_clean:.3f} ({rev[loss].kl_clean / ceiling:.0%} of the "
            f"ceiling), slope of d/d(clean) {rev[loss].kl_rate:.3f}"
            for loss in (base, method)
        ),
        samples=tuple(diff.to_numpy()),
    )


def shift_claims(section: dict) -> list[Claim]:
    c, kw = section["claims"], image_kw(section)
    base, method = section["baseline"], section["method"]
    out = []
    for s in shifts(section):
        needs = (
            f"changes:{s}",
            f"predictions_change:{s}",
            f"score_rises:{s}",
            f"score_separated:{s}",
            "discriminator_null",
        )
        out += [
            Claim(
                ClaimSpec(
                    f"ocs_trend:{loss}:{s}",
                    f"Kang et al.'s reversion holds for the {loss} network under {s}: its "
                    "predictions approach the OCS as the OOD score grows",
                    "per seed Spearman rho(OOD score, KL(softmax(raw logits) ‖ OCS)) over the "
                    "levels; t-test of the seeds' rhos below 0",
                    0.0,
                    "<",
                    requires=(f"fitted:{loss}", *needs),
                    **kw,
                ),
                partial(reversion_rho, loss=loss, s=s),
            )
            for loss in losses(section)
        ]
        out.append(
            Claim(
                ClaimSpec(
                    f"same_rate:{s}",
                    f"LogitNorm's normalisation leaves the rate of reversion under {s} unchanged",
                    f"per seed slope of ||z||(level)/||z||(clean) (raw logit norm, no ceiling) "
                    f"on the OOD score, {method} − {base}; equivalence within ± "
                    f"{c['rate_bar']:g}",
                    float(c["rate_bar"]),
                    "<",
                    test="equivalence",
                    effect=0.0,
                    requires=(f"fitted:{base}", f"fitted:{method}", *needs),
                    **kw,
                ),
                partial(rate_difference, s=s),
            )
        )
    return out


def far_reversion_rho(ev: Evidence, loss: str) -> Measurement:
    """Over the far sets whose ``far_nontrivial`` premise holds, each one point at its score."""
    from scipy import stats

    shift, kept = ev.frames["shift"], ev.far_kept
    if len(kept) < 3:
        sets = ", ".join(k.removeprefix("far:") for k in kept) or "none"
        return Measurement(
            math.nan,
            f"{loss}: {len(kept)} far set(s) not solved by the floor battery ({sets}): fewer "
            "than 3 sets, no rank trend",
        )
    far = shift[shift["eval_set"].isin(kept)]
    rhos = {}
    for seed, g in far[far["loss"] == loss].groupby("seed"):
        x = g["eval_set"].map(ev.scores).to_numpy(float)
        d = g["distance"].to_numpy(float)
        if len(g) >= 3 and np.ptp(x) > 0 and np.ptp(d) > 0:
            rhos[seed] = float(stats.spearmanr(x, d).statistic)
    sets = ", ".join(k.removeprefix("far:") for k in kept) or "none"
    return per_seed_values(
        pd.Series(rhos, dtype=float),
        f"{loss}, LogitNorm's far sets not solved by the floor battery ({sets}): Spearman "
        "rho(OOD score, distance to the OCS) per seed",
    )


def far_claims(section: dict) -> list[Claim]:
    return [
        Claim(
            ClaimSpec(
                f"ocs_trend:{loss}:{FAR}",
                f"Kang et al.'s reversion along LogitNorm's own OOD test sets: the {loss} "
                "network predicts the sets further out on Kang's axis closer to the OCS "
                "(between sets, not within a set: each set one point at its mean score; not "
                "in Kang et al., whose shifts are covariate shifts)",
                "per seed Spearman rho(OOD score, KL(softmax(raw logits) ‖ OCS)) over the far "
                "sets whose far_nontrivial premise holds; t-test of the seeds' rhos below 0",
                0.0,
                "<",
                requires=(f"fitted:{loss}", "discriminator_null"),
                **image_kw(section),
            ),
            partial(far_reversion_rho, loss=loss),
        )
        for loss in losses(section)
    ]
