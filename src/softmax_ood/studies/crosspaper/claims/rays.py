"""Claims (b): Ulmer & Cinà's Theorem 1 asked of the LogitNorm study's networks along rays
``alpha * x'`` in their input space, with the sanity rows that are true by construction. Each
claim is its spec beside its named measurement."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired
from .common import losses, per_seed_values, ray_kw
from .evidence import Evidence

__all__ = ["certainty_claims", "normalised_claims", "sanity_claims"]


def raw_msp_far_out(ev: Evidence, loss: str) -> Measurement:
    return per_seed_values(
        ev.rays_at(loss, ev.top_alpha)["msp"],
        f"{loss}: mean raw-logit MSP at alpha = {ev.top_alpha:g}",
    )


def certainty_claims(section: dict) -> list[Claim]:
    return [
        Claim(
            ClaimSpec(
                f"rays_certain:{loss}",
                f"Sanity: Theorem 1's conclusion for the {loss} network: along rays far from "
                "the data its raw-logit confidence tends to 1 (true by construction for a "
                "network that is piecewise affine in eval mode; rays_linear checks that)",
                "per seed mean MSP (raw logits) at the largest alpha",
                float(section["claims"]["certain_max_prob"]),
                ">",
                kind="sanity",
                requires=(f"fitted:{loss}",),
                **ray_kw(section),
            ),
            partial(raw_msp_far_out, loss=loss),
        )
        for loss in losses(section)
    ]


def normalised_msp_far_out(ev: Evidence) -> Measurement:
    base, method, top, low = ev.base, ev.method, ev.top_alpha, ev.low_alpha
    at = ev.rays_at(method, top)
    on_data = ev.rays_at(method, low)["msp_normalised"].mean()
    control = ev.rays_at(base, top)["msp_normalised"].mean()
    return per_seed_values(
        at["msp_normalised"],
        f"{method}: mean MSP of the normalised logits at alpha = {top:g} (raw: "
        f"{at['msp'].mean():.4f}; normalised at alpha = {low:g}, the images themselves: "
        f"{on_data:.4f}; {base}'s normalised logits at alpha = {top:g}: {control:.4f}; "
        f"normalised_below_ce:{method} compares the two)",
    )


def normalised_msp_below_base(ev: Evidence) -> Measurement:
    base, method, top, low = ev.base, ev.method, ev.top_alpha, ev.low_alpha
    on_data = ev.rays_at(method, low)["msp_normalised"].mean()
    on_base = ev.rays_at(base, low)["msp_normalised"]
    try:
        d = paired(
            ev.rays_at(method, top)["msp_normalised"],
            ev.rays_at(base, top)["msp_normalised"],
            names=(method, base),
        )
    except ValueError as err:
        return Measurement(math.nan, f"normalised MSP: {err}")
    return replace(
        d,
        detail=f"normalised MSP at alpha = {top:g}: {d.detail}; on the images "
        f"themselves (alpha = {low:g}): {method} {on_data:.4f}, {base} "
        f"{on_base.mean():.4f}",
    )


def normalised_claims(section: dict) -> list[Claim]:
    base, method = section["baseline"], section["method"]
    return [
        Claim(
            ClaimSpec(
                f"normalised_uncertain:{method}",
                "The normalised logits LogitNorm trains on stay uncertain along the same rays "
                f"(alone no finding about LogitNorm or rays: {base}'s normalised logits and the "
                f"clean images' are in the detail; normalised_below_ce:{method} is the "
                "comparison)",
                "per seed mean MSP of softmax(z / (tau ‖z‖)) at the largest alpha",
                float(section["claims"]["certain_max_prob"]),
                "<",
                requires=(f"fitted:{method}",),
                **ray_kw(section),
            ),
            normalised_msp_far_out,
        ),
        Claim(
            ClaimSpec(
                f"normalised_below_ce:{method}",
                "LogitNorm's training keeps its normalised logits less certain along the rays "
                f"than the {base} network's normalised logits (what the loss adds beyond the "
                "normalisation)",
                f"per seed normalised MSP at the largest alpha, {method} − {base} (paired)",
                0.0,
                "<",
                requires=(f"fitted:{base}", f"fitted:{method}"),
                **ray_kw(section),
            ),
            normalised_msp_below_base,
        ),
    ]


def log_log_slope_deviation(ev: Evidence, loss: str) -> Measurement:
    r = ev.rays_of(loss)
    a_sorted = sorted(r["alpha"].unique())
    devs = {}
    if len(a_sorted) >= 2:
        a1, a2 = a_sorted[-2], a_sorted[-1]
        for seed, g in r.groupby("seed"):
            n1 = float(g.loc[g["alpha"] == a1, "logit_norm"].iloc[0])
            n2 = float(g.loc[g["alpha"] == a2, "logit_norm"].iloc[0])
            devs[seed] = abs(math.log(n2 / n1) / math.log(a2 / a1) - 1.0)
    dv = pd.Series(devs, dtype=float)
    return Measurement(
        float(dv.max()) if len(dv) else math.nan,
        f"{loss}: |log-log slope − 1| per seed "
        + ", ".join(f"{k}: {v:.2g}" for k, v in dv.items()),
    )


def largest_normalised_logit(ev: Evidence) -> Measurement:
    rays, tau = ev.frames["rays"], float(ev.section["tau"])
    mx = float(rays["max_normalised_logit"].max()) * tau if len(rays) else math.nan
    return Measurement(mx, f"largest |normalised logit| {mx / tau:.3f} vs 1/tau = {1 / tau:g}")


def score_gap_to_raw(ev: Evidence) -> Measurement:
    r = ev.rays_of(ev.method)
    raw_gap = float(r["score_vs_raw"].max()) if len(r) else math.nan
    norm_gap = float(r["score_vs_normalised"].median()) if len(r) else math.nan
    return Measurement(
        raw_gap,
        f"{ev.method}: largest relative gap of the core's MSP score to the raw logits' "
        f"log-odds {raw_gap:.2g}; to the normalised logits' (median over rays) {norm_gap:.3g}",
    )


def sanity_claims(section: dict) -> list[Claim]:
    method = section["method"]
    return [
        *(
            Claim(
                ClaimSpec(
                    f"rays_linear:{loss}",
                    f"Sanity: the {loss} network's raw logits grow linearly far out (ReLU network)",
                    "largest |log-log slope of the mean logit norm − 1| over seeds, two largest "
                    "alphas",
                    float(section["claims"]["linear_tolerance"]),
                    "<=",
                    kind="sanity",
                ),
                partial(log_log_slope_deviation, loss=loss),
            )
            for loss in losses(section)
        ),
        Claim(
            ClaimSpec(
                "normalised_bounded",
                "Sanity: the normalised logits are bounded by 1/tau on every ray",
                "largest max_i |z_i| / (tau ‖z‖) × tau over every ray, alpha and seed",
                1.0,
                "<=",
                kind="sanity",
            ),
            largest_normalised_logit,
        ),
        Claim(
            ClaimSpec(
                "score_reads_raw",
                f"Sanity: the OOD score the LogitNorm study evaluates ({method}'s MSP) reads the "
                "raw logits, not the normalised ones",
                "largest relative gap between the core's MSP score and the raw logits' MSP "
                "log-odds",
                1e-9,
                "<=",
                kind="sanity",
            ),
            score_gap_to_raw,
        ),
    ]
