"""The Ulmer claims on an averaged model's certainty far out, each one claim whole (its
declaration beside its measurement): its exact limit (``L``, a sanity row), the partial
mitigation (``C``: below certainty along some directions where the single network is not;
``P``: certain along others), the same judged against in-distribution confidence (``R``), and
Theorem 1 as stated (``T``)."""

from __future__ import annotations

import math
from functools import partial

import pandas as pd

from softmax_ood.analysis.claims import Claim, ClaimSpec, Measurement
from softmax_ood.analysis.measures import rows

from .evidence import (
    LABELS,
    Evidence,
    cell_shares,
    distribution,
    effect,
    held_out,
    k_of,
    per_seed_text,
    sample_premises,
)

__all__ = ["limit_claim", "mitigation_claims"]


def limit_claim(ds: str, kind: str, section: dict) -> Claim:
    return Claim(
        ClaimSpec(
            f"L-{ds}-{kind}",
            f"{LABELS[kind]} on {ds}: far out the averaged prediction's max "
            "probability equals its exact limit, the largest vote share of the "
            "samples' limiting arg-max read from the logits' slopes (by construction: "
            "each saturated sample is one-hot)",
            "mean over direction x seed cells of |mean max probability at the "
            "largest alpha - its limit| (tolerance k_margin: half the distance from "
            "the certainty level to 1)",
            float(section["k_margin"]),
            "<",
            kind="sanity",
            requires=(f"F-{ds}",),
        ),
        partial(exact_limit, ds=ds, kind=kind),
    )


def exact_limit(ev: Evidence, ds: str, kind: str) -> Measurement:
    sel = rows(ev.directions, dataset=ds, kind=kind, k_role="K")
    if "limit_max_prob" not in sel:
        return ev.absent(f"L-{ds}-{kind}")
    level = ev.level
    cell = (sel["mean_max_prob"] - sel["limit_max_prob"]).abs()
    flips = int(((sel["mean_max_prob"] <= level) != (sel["limit_max_prob"] <= level)).sum())
    return Measurement(
        float(cell.mean()) if len(cell) else math.nan,
        f"{LABELS[kind]} (K = {k_of(ev.directions, ds, kind, 'K')}): measured mean max "
        f"probability {distribution(sel['mean_max_prob'])}; its limit from the slopes "
        f"{distribution(sel['limit_max_prob'])}; |measured - limit| per cell: mean "
        f"{float(cell.mean()):.2g}, largest {float(cell.max()):.2g} (of a single point "
        f"{float(sel['max_prob_gap'].max()):.2g}: samples not yet saturated at this alpha); "
        f"{flips} cell(s) on the other side of {level:g} at this alpha than in the limit",
    )


def mitigation_claims(ds: str, kind: str, section: dict) -> list[Claim]:
    """``C``, ``P``, ``R`` and (with ``claims.effect_share``) ``T`` of ``kind`` on ``ds``."""
    level = float(section["certain_max_prob"])
    share_effect = effect(section, "effect_share")
    fid = f"F-{ds}"
    power = {"effect": share_effect, "effect_source": "power target"}
    out = [
        Claim(
            ClaimSpec(
                f"C-{ds}-{kind}",
                f"{LABELS[kind]} mitigates the overconfidence on {ds} along some "
                "directions (Fig. 1, Discussion): far out it stays below certainty on a "
                "share of directions where a single network stays below on none",
                "per seed, share of directions (all, degenerate included) whose limiting "
                f"mean max probability (alpha -> infinity: the vote share) is at most "
                f"{level:g}, minus the single network's share",
                0.0,
                ">",
                requires=(fid, *sample_premises(ds, kind)),
                **power,
            ),
            partial(mitigates, ds=ds, kind=kind),
        ),
        Claim(
            ClaimSpec(
                f"P-{ds}-{kind}",
                f'... but only partially (Fig. 1: "only partially mitigated by ensemble '
                f'models"): {LABELS[kind]} still reaches certainty far from the {ds} '
                "data along a share of directions",
                "per seed, share of directions (all) whose limiting mean max probability "
                f"exceeds {level:g}",
                0.0,
                ">",
                requires=(fid, f"N-{ds}", *sample_premises(ds, kind), f"B-{ds}-{kind}"),
                **power,
            ),
            partial(partially, ds=ds, kind=kind),
        ),
        Claim(
            ClaimSpec(
                f"R-{ds}-{kind}",
                f"... judged against in-distribution confidence in place of the bar: "
                f"{LABELS[kind]} is, along a share of directions, at least as certain "
                f"far from the {ds} data as on the held-out data",
                "per seed, share of directions (all) whose limiting mean max probability "
                "is at least the model's own held-out mean max probability (alpha = 1, "
                "same seed)",
                0.0,
                ">",
                requires=(fid, *sample_premises(ds, kind)),
                **power,
            ),
            partial(as_certain_as_held_out, ds=ds, kind=kind),
        ),
    ]
    if share_effect is not None:
        out.append(stated_claim(ds, kind, share_effect))
    return out


def _shares(ev: Evidence, ds: str, kind: str) -> dict:
    """What C and P share: the per-seed shares below and above the bar, the single network's,
    the direction counts, the limits' distribution and the two other ways of counting."""

    def compute() -> dict:
        directions, level = ev.directions, ev.level
        sel = rows(directions, dataset=ds, kind=kind, k_role="K")
        below, certain = cell_shares(directions, ds, kind, level)
        single_below, _ = cell_shares(directions, ds, "single", level)
        seeds = sorted(set(below.index) & set(single_below.index))
        n_deg = sel.loc[sel["degenerate"].astype(bool), "direction"].nunique()
        return {
            "below": below,
            "certain": certain,
            "single_below": single_below,
            "diff": below.loc[seeds] - single_below.loc[seeds],
            "head": f"{LABELS[kind]} (K = {k_of(directions, ds, kind, 'K')}), "
            f"{sel['direction'].nunique()} directions ({n_deg} degenerate, counted): share",
            "dist": distribution(sel["limit_max_prob"]),
            "alt": _share_variants(directions, ds, kind, level, n_deg),
        }

    return ev.memo(("shares", ds, kind), compute)


def mitigates(ev: Evidence, ds: str, kind: str) -> Measurement:
    s = _shares(ev, ds, kind)
    diff = s["diff"]
    return Measurement(
        float(diff.mean()) if len(diff) else math.nan,
        f"{s['head']} below certainty per seed {per_seed_text(s['below'])}; single network "
        f"{per_seed_text(s['single_below'])}; limit of the mean max probability {s['dist']}"
        + s["alt"]["C"],
        samples=tuple(diff.to_numpy()),
    )


def partially(ev: Evidence, ds: str, kind: str) -> Measurement:
    s = _shares(ev, ds, kind)
    certain = s["certain"]
    return Measurement(
        float(certain.mean()) if len(certain) else math.nan,
        f"{s['head']} certain (> {ev.level:g}) per seed {per_seed_text(certain)}; limit of the "
        f"mean max probability {s['dist']}" + s["alt"]["P"],
        samples=tuple(certain.to_numpy()),
    )


def _mean_p(samples: pd.Series, direction: str = ">") -> str:
    from softmax_ood.analysis.claims import one_sided_t

    x = samples.to_numpy(dtype=float)
    p = one_sided_t(x, 0.0, direction) if len(x) > 1 else math.nan
    return f"{float(x.mean()):.3f}" + (f" (p {p:.2g})" if math.isfinite(p) else "")


def _share_variants(
    directions: pd.DataFrame, ds: str, kind: str, level: float, n_deg: int
) -> dict[str, str]:
    """The C and P statistics two other ways, for the detail: without the degenerate
    directions, and at 2K samples / members (the K -> 2K robustness C and P rest on)."""
    texts = {"C": "", "P": ""}

    def both(**kw):
        below, certain = cell_shares(directions, ds, kind, level, **kw)
        single, _ = cell_shares(
            directions, ds, "single", level, degenerate=kw.get("degenerate", True)
        )
        seeds = sorted(set(below.index) & set(single.index))
        return below.loc[seeds] - single.loc[seeds], certain

    if n_deg:
        c, p = both(degenerate=False)
        if len(c):
            texts["C"] += f"; without the {n_deg} degenerate direction(s): {_mean_p(c)}"
            texts["P"] += f"; without the {n_deg} degenerate direction(s): {_mean_p(p)}"
    has_2k = len(rows(directions, dataset=ds, kind=kind, k_role="2K")) > 0
    if has_2k:
        c, p = both(role="2K")
        if len(c):
            texts["C"] += f"; at 2K: {_mean_p(c)}"
            texts["P"] += f"; at 2K: {_mean_p(p)}"
    return texts


def _relative_cells(ev: Evidence, ds: str, kind: str) -> pd.DataFrame:
    """The direction x seed cells of ``kind`` at K with its held-out confidence (``held``)."""

    def compute() -> pd.DataFrame:
        sel = rows(ev.directions, dataset=ds, kind=kind, k_role="K").copy()
        sel["held"] = sel["seed"].map(held_out(ev.scaling, ds, kind))
        return sel.dropna(subset=["held", "limit_max_prob"])

    return ev.memo(("relative_cells", ds, kind), compute)


def as_certain_as_held_out(ev: Evidence, ds: str, kind: str) -> Measurement:
    cells = _relative_cells(ev, ds, kind)
    if "limit_max_prob" not in ev.directions or cells.empty:
        return Measurement(math.nan, "no direction cells with a held-out confidence")
    held = held_out(ev.scaling, ds, kind)
    at_least = (cells["limit_max_prob"] >= cells["held"]).groupby(cells["seed"]).mean()
    n_dirs = cells["direction"].nunique()
    return Measurement(
        float(at_least.mean()),
        f"{LABELS[kind]}, {n_dirs} directions (every one): share whose limit is at least the "
        f"held-out confidence, per seed {per_seed_text(at_least)}; held-out confidence per "
        f"seed {per_seed_text(held)}; the limits {distribution(cells['limit_max_prob'])}",
        samples=tuple(at_least.astype(float).to_numpy()),
    )


def stated_claim(ds: str, kind: str, share_effect: float) -> Claim:
    return Claim(
        ClaimSpec(
            f"T-{ds}-{kind}",
            f"Theorem 1 as stated for averaged models ('the same network(s) will "
            f"reach perfect certainty'): {LABELS[kind]} reaches certainty far "
            f"from the {ds} data along (nearly) every direction of Assumption 1 "
            "(the non-degenerate ones), at least its own in-distribution "
            "certainty",
            "per seed, share of the non-degenerate directions whose limiting mean "
            "max probability lies below the model's own held-out mean max "
            "probability (alpha = 1, same seed): less certain far out than on the "
            "data; the theorem allows none, the row one direction in ten "
            "(claims.effect_share)",
            share_effect,
            "<",
            requires=(f"F-{ds}", *sample_premises(ds, kind)),
            effect=share_effect,
            effect_source="power target",
        ),
        partial(stated, ds=ds, kind=kind),
    )


def stated(ev: Evidence, ds: str, kind: str) -> Measurement:
    cells = _relative_cells(ev, ds, kind)
    if "limit_max_prob" not in ev.directions or cells.empty:
        return Measurement(math.nan, "no direction cells with a held-out confidence")
    used = cells[~cells["degenerate"].astype(bool)]
    if used.empty:
        return Measurement(math.nan, "no non-degenerate direction")
    level, held = ev.level, held_out(ev.scaling, ds, kind)
    less = (used["limit_max_prob"] < used["held"]).groupby(used["seed"]).mean()
    bar = (used["limit_max_prob"] <= level).groupby(used["seed"]).mean()
    perfect = (used["limit_max_prob"] < 1.0).groupby(used["seed"]).mean()
    every = (cells["limit_max_prob"] < cells["held"]).groupby(cells["seed"]).mean()
    below = used.loc[used["limit_max_prob"] < used["held"], "limit_max_prob"]
    where = (
        f"; those limits range {float(below.min()):.3f}-{float(below.max()):.3f}"
        if len(below)
        else ""
    )
    return Measurement(
        float(less.mean()),
        f"{LABELS[kind]}, {used['direction'].nunique()} non-degenerate directions: share "
        f"less certain in the limit than on the held-out data, per seed "
        f"{per_seed_text(less)}{where}; held-out confidence per seed {per_seed_text(held)}; "
        f"the same share at the fixed bar (limit <= {level:g}) {per_seed_text(bar)}, "
        f"below perfect certainty (limit < 1: the samples disagree) "
        f"{per_seed_text(perfect)}; counting the degenerate directions too "
        f"{per_seed_text(every)}",
        samples=tuple(less.astype(float).to_numpy()),
    )
