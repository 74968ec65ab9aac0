"""The Ulmer premises, each one claim whole (its declaration beside its measurement): every
model fitted (``F``), the certainty measurement can fail (``N``), K large enough (``K``), a
chain's samples mixed (``E``) and the certainty bar above in-distribution confidence (``B``)."""

from __future__ import annotations

import math
from functools import partial

import pandas as pd

from softmax_ood.analysis.claims import Claim, ClaimSpec, Measurement, fmt_mean_std, tost_power
from softmax_ood.analysis.measures import rows
from softmax_ood.analysis.premises import FITTED_SHARE, fitted

from .evidence import (
    LABELS,
    Evidence,
    certainty_per_seed,
    fine,
    held_out,
    k_of,
    k_stability,
    per_seed_text,
)

__all__ = ["bar_claim", "control_claim", "fitted_claim", "k_claim", "mixing_claim"]


def fitted_claim(ds: str) -> Claim:
    return Claim(
        ClaimSpec(
            f"F-{ds}",
            f"Every model fits the {ds} data (far below its optimal constant solution)",
            "per seed, the worst model's share of its constant solution's loss removed "
            "((OCS loss − final training loss) / OCS loss)",
            FITTED_SHARE,
            ">",
            kind="premise",
        ),
        partial(fit_premise, ds=ds),
    )


def fit_premise(ev: Evidence, ds: str) -> Measurement:
    sel = ev.fit[ev.fit["dataset"] == ds]
    if sel.empty:
        raise ValueError(f"The fit frame has no rows for dataset {ds!r}.")
    ratio = sel["train_loss"] / sel["ocs_loss"]
    worst = sel.loc[ratio.groupby(sel["seed"]).idxmax()].set_index("seed").sort_index()
    m = fitted(worst["train_loss"], worst["ocs_loss"], what="worst model per seed")
    chance = float(sel["chance"].iloc[0])
    acc = "; ".join(
        f"{model} {fmt_mean_std(g.set_index('seed')['accuracy'] * 100, ' %')}"
        for model, g in sel.groupby("model", sort=False)
    )
    detail = (
        f"{m.detail}. Held-out accuracy: {acc}; chance (majority class) {chance * 100:.1f} %; "
        f"scaled feature {sel['feature'].iloc[0]!r} (|Spearman rho| with the label "
        f"{float(sel['monotonicity'].iloc[0]):.2f})"
    )
    return Measurement(m.value, detail, samples=m.samples)


def control_claim(ds: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"N-{ds}",
            f"The certainty measurement can fail on {ds}: a control outside the theorem "
            f"({section['control']} last hidden layer, bounded logits) is not certain far out",
            "per seed, the control's mean max probability at the largest alpha (points x "
            "non-degenerate directions)",
            float(section["certain_max_prob"]),
            "<",
            kind="premise",
        ),
        partial(control_uncertain, ds=ds),
    )


def control_uncertain(ev: Evidence, ds: str) -> Measurement:
    ctrl = certainty_per_seed(ev.directions, ds, "control")
    vote = certainty_per_seed(ev.directions, ds, "control", column="vote_share")
    return Measurement(
        float(ctrl.mean()) if len(ctrl) else math.nan,
        f"control: mean max probability {fmt_mean_std(ctrl)} over {len(ctrl)} seeds "
        f"(per seed {per_seed_text(ctrl)}), vote share {fmt_mean_std(vote)}; "
        f"{directions_note(ev.directions, ds)}",
        samples=tuple(ctrl.to_numpy()),
    )


def directions_note(directions: pd.DataFrame, ds: str) -> str:
    d = directions[directions["dataset"] == ds].drop_duplicates("direction")
    used = d[~d["degenerate"].astype(bool)]
    left = d[d["degenerate"].astype(bool)]["direction"].tolist()
    note = (
        f"{len(used)} non-degenerate directions ({(used['direction_type'] == 'axis').sum()} axes, "
        f"{(used['direction_type'] == 'random').sum()} random)"
    )
    return note + (f"; degenerate, left out: {', '.join(left)}" if left else "")


def k_claim(ds: str, kind: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"K-{ds}-{kind}",
            f"{LABELS[kind]} on {ds}: K is large enough for the certainty level "
            "far out (the mean max probability at the largest alpha over the "
            "non-degenerate directions does not move when K doubles: equivalent to "
            f"no change within ± {section['k_margin']:g}; not C/P's share of limiting "
            "cells, whose K -> 2K change is in the detail)",
            "per seed, stat(2K) - stat(K) of the mean max probability at the largest "
            "alpha (points x non-degenerate directions), oriented to its mean's side; "
            "equivalence test (TOST) at ± k_margin (the binding one-sided test; "
            "power of the whole TOST at change 0)",
            float(section["k_margin"]),
            "<",
            kind="premise",
        ),
        partial(k_stable, ds=ds, kind=kind),
    )


def k_stable(ev: Evidence, ds: str, kind: str) -> Measurement:
    section = ev.section
    a, b, oriented, margin = k_stability(ev.directions, ds, kind, float(section["k_margin"]))
    k1, k2 = k_of(ev.directions, ds, kind, "K"), k_of(ev.directions, ds, kind, "2K")
    sd = float(oriented.std(ddof=1)) if len(oriented) > 1 else math.nan
    power = tost_power(margin, sd, len(oriented), ev.alpha) if len(oriented) > 1 else math.nan
    return Measurement(
        float(oriented.mean()) if len(oriented) else math.nan,
        f"mean max probability at the largest alpha, non-degenerate directions: "
        f"K = {k1}: {fmt_mean_std(a)}; 2K = {k2}: {fmt_mean_std(b)}; change per seed "
        f"{per_seed_text(b - a)}; equivalence margin ± {margin:g} (config k_margin); "
        f"K fixed in advance: a vote share's binomial standard error "
        f"1/(2 sqrt(K)) = {0.5 / math.sqrt(max(k1, 1)):.3f} (the principle asks "
        f"<= {float(section.get('vote_se', math.nan)):g})"
        + _borderline(oriented, b - a, margin, power, ev.alpha)
        + _k_share_text(ev.directions, ds, kind, ev.level),
        samples=tuple(oriented.to_numpy()),
        power=power,
    )


def _borderline(
    oriented: pd.Series, change: pd.Series, margin: float, power: float, alpha: float
) -> str:
    """A K premise near its bar: the TOST p close to alpha or power below the target, or a
    seed's change beyond the margin though the mean is inside."""
    from softmax_ood.analysis.claims import POWER_TARGET, one_sided_t

    if len(oriented) < 2:
        return ""
    p = one_sided_t(oriented.to_numpy(dtype=float), margin, "<")
    worst = float(change.abs().max())
    reasons = []
    if math.isfinite(power) and power < POWER_TARGET:
        reasons.append(f"power {power:.2f} below {POWER_TARGET:g}")
    if worst > margin:
        reasons.append(f"the largest per-seed change {worst:.4f} exceeds the margin {margin:g}")
    if not reasons or not p < alpha:
        return ""
    return (
        f"; borderline: the mean change is inside the margin (p {p:.2g}) but "
        + " and ".join(reasons)
        + ", so K's adequacy rests on the mean over seeds"
    )


def _k_share_text(directions: pd.DataFrame, ds: str, kind: str, level: float) -> str:
    """What the K premise does not test, for its detail: C/P's share of direction cells whose
    limiting mean max probability is at most ``level`` at K and 2K, and the cells that cross
    the level when K doubles."""
    sel = rows(directions, dataset=ds, kind=kind)
    if "limit_max_prob" not in sel or not (sel["k_role"] == "2K").any():
        return ""
    piv = sel.pivot_table(index=["seed", "direction"], columns="k_role", values="limit_max_prob")
    if not {"K", "2K"} <= set(piv.columns):
        return ""
    piv = piv.dropna()
    a, b = piv["K"] <= level, piv["2K"] <= level
    share_k, share_2k = a.groupby(level=0).mean(), b.groupby(level=0).mean()
    return (
        f"; C/P's statistic (share of direction cells, every direction, whose limiting mean max "
        f"probability is <= {level:g}) at K {per_seed_text(share_k)}, at 2K "
        f"{per_seed_text(share_2k)}: {int((a != b).sum())} of {len(piv)} cells cross the level "
        "when K doubles (not tested here; the C and P rows give their statistic at 2K)"
    )


def mixing_claim(ds: str, kind: str) -> Claim:
    return Claim(
        ClaimSpec(
            f"E-{ds}-{kind}",
            f"{LABELS[kind]} on {ds}: the chain mixes, its 2K kept samples are worth at least "
            "K independent draws (the K the vote share's standard error asks), both on the "
            "data and far out",
            "per seed, the smaller of the effective sample sizes (Geyer's initial monotone "
            "sequence) of the 2K kept samples' training-loss trace and of their limiting "
            "votes far out (mean over the directions whose votes split), over K",
            1.0,
            ">",
            kind="premise",
        ),
        partial(chain_mixes, ds=ds, kind=kind),
    )


def chain_mixes(ev: Evidence, ds: str, kind: str) -> Measurement:
    if "chain_ess" not in ev.fit or "vote_ess" not in ev.directions:
        return ev.absent(f"E-{ds}-{kind}")
    fit = ev.fit[(ev.fit["dataset"] == ds) & (ev.fit["kind"] == kind)]
    on_data = fit.groupby("seed")["chain_ess"].mean().astype(float).sort_index()
    far_rows = rows(ev.directions, dataset=ds, kind=kind, k_role="2K")
    far = far_rows.groupby("seed")["vote_ess"].mean().astype(float).reindex(on_data.index)
    k = k_of(ev.directions, ds, kind, "K")
    worst = pd.concat([on_data, far], axis=1).min(axis=1, skipna=True) / max(k, 1)
    n_split = far_rows["vote_ess"].notna().groupby(far_rows["seed"]).sum()
    return Measurement(
        float(worst.mean()) if len(worst) else math.nan,
        f"{LABELS[kind]} (K = {k}, 2K = {k_of(ev.directions, ds, kind, '2K')} kept): effective "
        f"sample size of the training-loss trace per seed {per_seed_text(on_data, 1)}; of the "
        f"limiting votes far out (mean over directions whose votes split) per seed "
        f"{per_seed_text(far, 1)} ({per_seed_text(n_split, 0)} such directions; unanimous "
        "votes carry no Monte Carlo error and are left out); the smaller over K per seed "
        f"{per_seed_text(worst, 2)}",
        samples=tuple(worst.to_numpy()),
    )


def bar_claim(ds: str, kind: str, section: dict) -> Claim:
    level = float(section["certain_max_prob"])
    return Claim(
        ClaimSpec(
            f"B-{ds}-{kind}",
            f"The certainty bar {level:g} says more than in-distribution confidence "
            f"for {LABELS[kind]} on {ds}: its held-out confidence (alpha = 1) lies "
            "below the bar (otherwise 'certain far out' at the bar is no more certain "
            "than the data themselves, and the bar is uninformative)",
            "per seed, the mean max probability of the averaged prediction on the "
            "held-out points (alpha = 1 of the scaling curve)",
            level,
            "<",
            kind="premise",
        ),
        partial(bar_informative, ds=ds, kind=kind),
    )


def bar_informative(ev: Evidence, ds: str, kind: str) -> Measurement:
    level = ev.level
    held = held_out(ev.scaling, ds, kind)
    single = held_out(ev.scaling, ds, "single")
    single_text = (
        f"; single network {fine(single)} ({int((single >= level).sum())} of "
        f"{len(single)} seeds at or above the bar)"
        if len(single)
        else ""
    )
    return Measurement(
        float(held.mean()) if len(held) else math.nan,
        f"{LABELS[kind]}: held-out mean max probability {fine(held)} (per seed "
        f"{per_seed_text(held, 4)}; {int((held >= level).sum())} of {len(held)} seeds at or "
        f"above the bar {level:g}){single_text}",
        samples=tuple(held.to_numpy()),
    )
