"""Theorem 1 on each of its four metrics along the paper's feature (``M``) and §6's data-size
claim (``D``), each one claim whole (its declaration beside its measurement)."""

from __future__ import annotations

import math
from functools import partial

from softmax_ood.analysis.claims import Claim, ClaimSpec, Measurement, fmt_mean_std, t_power

from .evidence import (
    DEGENERATE,
    GAIN_TEXT,
    LABELS,
    METRIC_TEXT,
    Evidence,
    effect,
    fine,
    held_out,
    per_seed_text,
    sample_premises,
)

__all__ = ["datasize_claim", "metric_claim"]


def metric_claim(ds: str, kind: str, metric: str) -> Claim:
    return Claim(
        ClaimSpec(
            f"M-{ds}-{kind}-{metric}",
            f"Theorem 1 on the {METRIC_TEXT[metric]}: {LABELS[kind]} tends to "
            f"perfect certainty as the paper's feature of the {ds} data is "
            "scaled, so far out it is more certain than on the held-out data",
            f"per seed, {GAIN_TEXT[metric]} from alpha = 1 to the largest "
            "alpha along the paper's feature (mean over points); power at the "
            "gain perfect certainty would give (the held-out distance from it)",
            0.0,
            ">",
            requires=(f"F-{ds}", *sample_premises(ds, kind)),
        ),
        partial(certainty_gain, ds=ds, kind=kind, metric=metric),
    )


def certainty_gain(ev: Evidence, ds: str, kind: str, metric: str) -> Measurement:
    scaling = ev.scaling
    start = held_out(scaling, ds, kind, metric)
    end = held_out(scaling, ds, kind, metric, far=True)
    seeds = sorted(set(start.index) & set(end.index))
    start, end = start.loc[seeds], end.loc[seeds]
    sign = 1.0 if metric == "max_prob" else -1.0
    gain = sign * (end - start)
    perfect = 1.0 if metric == "max_prob" else 0.0
    target = float((sign * (perfect - start)).mean()) if len(start) else math.nan
    sd = float(gain.std(ddof=1)) if len(gain) > 1 else math.nan
    power = (
        t_power(target, sd, len(gain), ev.alpha)
        if len(gain) > 1 and math.isfinite(target) and target > 0
        else math.nan
    )
    extra = ""
    if (("single", metric) not in DEGENERATE) and len(held_out(scaling, ds, "single", metric)):
        s0 = held_out(scaling, ds, "single", metric)
        s1 = held_out(scaling, ds, "single", metric, far=True)
        extra = f"; single network {fine(s0)} -> {fine(s1)}"
    return Measurement(
        float(gain.mean()) if len(gain) else math.nan,
        f"{LABELS[kind]}, {METRIC_TEXT[metric]}: held-out {fine(start)} -> largest alpha "
        f"{fine(end)} (perfect certainty: {perfect:g}); gain per seed "
        f"{per_seed_text(gain, 4)}; power at the gain perfect certainty would give "
        f"({target:.3g}: the held-out distance from it){extra}",
        samples=tuple(gain.to_numpy()),
        power=power,
    )


def datasize_claim(ds: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"D-{ds}",
            f"§6, hedged: more in-domain data 'may' worsen OOD detection on {ds} "
            "(it 'may' decrease the ensemble's diversification far out); tested in its "
            "directional reading, so a 'does not hold' refutes that reading, not the "
            "paper's 'may'",
            "per seed, AUROC of the deep ensemble's predictive entropy (held-out points "
            "against the same points at the largest alpha, every direction) trained on "
            "all training rows minus that trained on a stratified datasize.fraction",
            0.0,
            "<",
            requires=(f"F-{ds}",),
            effect=effect(section, "effect_auroc"),
            effect_source="power target",
        ),
        partial(more_data, ds=ds),
    )


def more_data(ev: Evidence, ds: str) -> Measurement:
    if ev.datasize is None:
        return ev.absent(f"D-{ds}")
    d = ev.datasize[ev.datasize["dataset"] == ds]
    if d.empty:
        return Measurement(math.nan, "no data-size rows")
    full = d[d["fraction"] == 1.0].set_index("seed").sort_index()
    small = d[d["fraction"] < 1.0].set_index("seed").sort_index()
    seeds = sorted(set(full.index) & set(small.index))
    full, small = full.loc[seeds], small.loc[seeds]
    diff = full["auroc"] - small["auroc"]
    frac = float(small["fraction"].iloc[0]) if len(small) else math.nan
    return Measurement(
        float(diff.mean()) if len(diff) else math.nan,
        f"deep ensemble (K = {int(full['k'].iloc[0]) if len(full) else 0}): AUROC with all "
        f"{int(full['n_train'].iloc[0]) if len(full) else 0} training rows "
        f"{fmt_mean_std(full['auroc'])}, with {frac:g} of them "
        f"({int(small['n_train'].iloc[0]) if len(small) else 0}) {fmt_mean_std(small['auroc'])}; "
        f"far-away mutual information (diversification) "
        f"{fmt_mean_std(full['far_mutual_information'])} against "
        f"{fmt_mean_std(small['far_mutual_information'])}; change per seed "
        f"{per_seed_text(diff)} ({int((diff < 0).sum())} of {len(diff)} seeds below 0, "
        f"{int((diff == 0).sum())} at 0)",
        samples=tuple(diff.to_numpy()),
    )
