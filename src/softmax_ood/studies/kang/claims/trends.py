"""Kang's claims along the shifts: predictions approach the OCS as the OOD score grows
(``ocs_trend``, per loss and shift type, and between the far sets), reward prediction abstains
more (Fig. 6), the regressor's sigma rises (Fig. 2), and reward prediction's advantage over
standard classification grows (Fig. 7). Each is one :class:`~softmax_ood.analysis.claims.Claim`
per setting, its spec beside its named measurement."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired, t_power
from ..tables import FAR, graded_shifts, main_runs
from .common import (
    EFFECTS,
    FAR_SCOPE,
    REWARD,
    STANDARD,
    at,
    breakeven,
    discriminator_ids,
    losses,
    notes,
    powered,
    repeats,
    series,
)
from .evidence import Evidence


def rank_trend(
    g: pd.DataFrame,
    scores: pd.DataFrame,
    what: str,
    effect: float = EFFECTS["ocs_trend"][0],
    alpha: float = 0.05,
) -> Measurement:
    """``ocs_trend``: Spearman rho(OOD score, distance to OCS) per seed x discriminator repeat
    (repeat r's x-axis: every set's OOD score from repeat r), its mean tested below 0 with the
    standard error ``sqrt(var(seed means)/S + var(repeat means)/R)`` (``min(S, R) - 1`` df): the
    seeds share one discriminator, so the x-axis's uncertainty enters only through its repeats.
    Without any spread (every rho equal) the exact sign test over ``min(S, R)`` units."""
    from scipy import stats

    sets = list(dict.fromkeys(g["eval_set"]))
    reps = [repeats(scores, e) for e in sets]
    if len(sets) < 3 or any(len(r) < 2 for r in reps):
        return Measurement(math.nan, f"{what}: fewer than 3 sets or no per-repeat OOD scores")
    n_rep = min(len(r) for r in reps)
    x = np.stack([r[:n_rep] for r in reps])  # sets x repeats
    rows, seeds = [], []
    for seed, gs in g.groupby("seed"):
        y = gs.drop_duplicates("eval_set").set_index("eval_set")["distance"].reindex(sets)
        y = y.astype(float).to_numpy()
        if not np.all(np.isfinite(y)) or len(set(y)) < 2:
            continue
        row = [
            float(stats.spearmanr(x[:, r], y).statistic) if len(set(x[:, r])) > 1 else math.nan
            for r in range(n_rep)
        ]
        rows.append(row)
        seeds.append(seed)
    rho = np.asarray(rows, dtype=float)
    if rho.size == 0 or not np.all(np.isfinite(rho)):
        return Measurement(math.nan, f"{what}: undefined (constant series)")
    n_s, n_r = rho.shape
    mean = float(rho.mean())
    seed_means, rep_means = rho.mean(axis=1), rho.mean(axis=0)
    var = (seed_means.var(ddof=1) / n_s if n_s > 1 else math.nan) + (
        rep_means.var(ddof=1) / n_r if n_r > 1 else math.nan
    )
    units = min(n_s, n_r)
    # the power of this t at the smallest effect of interest (a mean rho of -effect)
    sd_unit = math.sqrt(max(var, 0.0) * units) if math.isfinite(var) else math.nan
    power = t_power(effect, sd_unit, units, alpha) if units > 1 else math.nan
    if units < 2 or not math.isfinite(var):
        p = p_opp = math.nan
    elif var <= 1e-24:  # no spread at all: the exact sign test over the smaller factor
        p = 0.5**units if mean < 0 else 1.0
        p_opp = 0.5**units if mean > 0 else 1.0
    else:
        t = mean / math.sqrt(var)
        p, p_opp = float(stats.t.cdf(t, units - 1)), float(stats.t.sf(t, units - 1))
    per = ", ".join(f"{s}: {v:.2f}" for s, v in zip(seeds, seed_means, strict=True))
    return Measurement(
        mean,
        f"{what}: mean Spearman rho {mean:.3f} over {n_s} seed(s) x {n_r} discriminator "
        f"repeats (per seed {per}; repeat means from {rep_means.min():.2f} to "
        f"{rep_means.max():.2f}); standard error {math.sqrt(var) if var > 0 else 0.0:.3f} "
        f"(seed and repeat variances), one-sided t with {units - 1} df",
        p,
        n=n_s * n_r,
        p_opposite=p_opp,
        power=power,
    )


def ocs_trend(ev: Evidence, *, loss: str, shift: str) -> Measurement:
    """Along shift type ``shift``'s kept levels, per seed x discriminator repeat."""
    sh = ev.shifts[shift]
    g = series(ev.grid[ev.grid["loss"] == loss], shift, sh.levels)
    return rank_trend(g, ev.scores, f"{loss}, {shift}{sh.note}", alpha=ev.alpha)


def far_trend(ev: Evidence, *, loss: str) -> Measurement:
    """Between the non-trivial far sets (each one point at its mean score)."""
    nontrivial = ev.nontrivial_far
    keep = {f"far:{n}" for n in nontrivial}
    left_out = sorted(set(ev.section["far_ood"]) - set(nontrivial))
    why = (
        f"; left out (the floor battery solves them or untested): {', '.join(left_out)}"
        if left_out
        else ""
    )
    g = ev.grid[(ev.grid["loss"] == loss) & ev.grid["eval_set"].isin(keep)]
    noun = "set" if len(keep) == 1 else "sets"
    what = f"{loss}, the {len(keep)} non-trivial far {noun} ({', '.join(nontrivial)}){why}"
    if len(keep) < 3:
        return Measurement(math.nan, f"{what}: fewer than 3 sets, no rank trend")
    return rank_trend(g, ev.scores, what, alpha=ev.alpha)


def trend_claims(section: dict) -> list[Claim]:
    """``ocs_trend:<loss>:<shift>`` for every loss along every graded shift type (and between
    the far sets, when there are some)."""
    shifts = graded_shifts(section)
    out = []
    for loss in losses(section):
        for s in shifts + ([FAR] if section["far_ood"] else []):
            far = s == FAR
            out.append(
                Claim(
                    ClaimSpec(
                        f"ocs_trend:{loss}:{s}",
                        f"{loss}: predictions approach the OCS as the OOD score grows along {s}"
                        + (FAR_SCOPE if far else ""),
                        threshold=0.0,
                        direction="<",
                        requires=(f"fitted:{loss}",) + discriminator_ids(section)
                        if far
                        else (
                            f"fitted:{loss}",
                            f"score_rises:{s}",
                            f"score_separated:{s}",
                            f"predictions_change:{s}@top",
                        ),
                        **powered(
                            "ocs_trend",
                            "Spearman rho(OOD score, distance to OCS), mean over seeds x "
                            "discriminator repeats",
                        ),
                        **notes(section),
                    ),
                    partial(far_trend, loss=loss)
                    if far
                    else partial(ocs_trend, loss=loss, shift=s),
                )
            )
    return out


def abstain_rise(ev: Evidence, *, shift: str) -> Measurement:
    """Reward prediction's abstain share at the top level minus level 0's, paired over seeds."""
    sh = ev.shifts[shift]
    if not sh.top > 0:
        return Measurement(math.nan, f"{shift}: no kept level{sh.note}")
    ps = series(ev.policies, shift, sh.levels)
    rp = ps[ps["policy"] == REWARD]
    d = paired(
        at(rp, sh.top, "abstain_ratio"),
        at(rp, 0.0, "abstain_ratio"),
        names=(f"level {sh.top:g}", "level 0"),
    )
    return Measurement(d.value, f"{shift}: " + d.detail + sh.note, samples=d.samples)


def reward_gap_growth(ev: Evidence, *, shift: str) -> Measurement:
    """[reward(RP) - reward(arg-max CE)] at the top level minus at level 0, paired over seeds;
    the detail gives the classifier's accuracy there beside the break-even."""
    sh = ev.shifts[shift]
    if not sh.top > 0:
        return Measurement(math.nan, f"{shift}: no kept level{sh.note}")
    top = sh.top
    ps = series(ev.policies, shift, sh.levels)
    rp, st = ps[ps["policy"] == REWARD], ps[ps["policy"] == STANDARD]
    gap_top = at(rp, top, "mean_reward") - at(st, top, "mean_reward")
    gap_0 = at(rp, 0.0, "mean_reward") - at(st, 0.0, "mean_reward")
    d = paired(gap_top, gap_0, names=(f"gap at level {top:g}", "gap at level 0"))
    acc = at(series(ev.classifier, shift, sh.levels), top, "accuracy")
    where = (
        f" (classifier accuracy at level {top:g}: {acc.mean():.3f}, break-even "
        f"{breakeven(ev.section):.3g}; judged only below the break-even)"
    )
    return Measurement(d.value, f"{shift}: " + d.detail + where + sh.note, samples=d.samples)


def sigma_rise(ev: Evidence, *, shift: str) -> Measurement:
    """Per seed, the Gaussian NLL model's mean predicted sigma (Fig. 2's average over the figure
    class's images, ``components`` kind ``mean_prediction``, component ``std``) at the top level
    minus level 0's; the detail gives both beside the OCS's sigma."""
    sh = ev.shifts[shift]
    note = sh.note
    if not sh.top > 0:
        return Measurement(math.nan, f"{shift}: no kept level{note}")
    loss = ev.section["roles"]["regressor"]
    comp = main_runs(ev.frames["components"], ev.section)
    comp = comp[comp["loss"] == loss]
    sig = comp[(comp["kind"] == "mean_prediction") & (comp["component"] == "std")]
    ocs = comp[(comp["kind"] == "ocs") & (comp["component"] == "std")]["value"].astype(float)
    g = series(sig, shift, sh.levels)
    at_top, at_0 = at(g, sh.top, "value"), at(g, 0.0, "value")
    if at_top.empty or at_0.empty:
        return Measurement(math.nan, f"{loss}, {shift}: no predicted sigma recorded{note}")
    d = paired(at_top, at_0, names=(f"sigma at level {sh.top:g}", "sigma at level 0"))
    toward = (
        f"; the OCS's sigma is {ocs.mean():.3f}: the prediction at the top level "
        + (
            "moves toward it"
            if abs(at_top.mean() - ocs.mean()) < abs(at_0.mean() - ocs.mean())
            else "does not move toward it"
        )
        if len(ocs)
        else ""
    )
    return Measurement(d.value, f"{loss}, {shift}: " + d.detail + toward + note, samples=d.samples)


def abstain_claims(section: dict) -> list[Claim]:
    """``abstain_rises:<shift>`` (Fig. 6)."""
    reward = section["roles"]["reward_model"]
    return [
        Claim(
            ClaimSpec(
                f"abstain_rises:{s}",
                f"reward prediction abstains more at the top {s} level than at level 0",
                threshold=0.0,
                direction=">",
                requires=(
                    f"fitted:{reward}",
                    f"score_rises:{s}",
                    f"score_separated:{s}",
                    "reward_competitive_clean",
                ),
                **powered("abstain_rises", "abstain ratio(top) - abstain ratio(level 0), per seed"),
                **notes(section),
            ),
            partial(abstain_rise, shift=s),
        )
        for s in graded_shifts(section)
    ]


def sigma_claims(section: dict) -> list[Claim]:
    """``sigma_rises:<regressor>:<shift>`` (Sec. 3, Fig. 2)."""
    regressor = section["roles"]["regressor"]
    return [
        Claim(
            ClaimSpec(
                f"sigma_rises:{regressor}:{s}",
                f"{regressor}: the predicted standard deviation rises with the shift, from "
                f"level 0 to the top {s} level (Sec. 3: 'the Gaussian NLL models' predicted "
                "variance actually increases with distribution shift', Fig. 2; the OCS's sigma "
                "is in the detail)",
                threshold=0.0,
                direction=">",
                requires=(f"fitted:{regressor}", f"score_rises:{s}", f"score_separated:{s}"),
                **powered(
                    "sigma_rises",
                    "mean predicted sigma over the figure class's images: top level - level 0, "
                    "per seed",
                ),
                **notes(section),
            ),
            partial(sigma_rise, shift=s),
        )
        for s in graded_shifts(section)
    ]


def advantage_claims(section: dict) -> list[Claim]:
    """``reward_beats_classification:<shift>`` (Fig. 7), judged only below the break-even."""
    roles = section["roles"]
    return [
        Claim(
            ClaimSpec(
                f"reward_beats_classification:{s}",
                f"the advantage of reward prediction over standard classification grows from "
                f"level 0 to the top {s} level (Fig. 7; judged only where the classifier falls "
                "below the break-even accuracy, premise below_breakeven)",
                threshold=0.0,
                direction=">",
                requires=(
                    f"fitted:{roles['reward_model']}",
                    f"fitted:{roles['classifier']}",
                    f"score_rises:{s}",
                    f"score_separated:{s}",
                    f"below_breakeven:{s}",
                    "reward_competitive_clean",
                ),
                **powered(
                    "reward_beats_classification",
                    "[reward(RP) - reward(CE)](top) - [same](level 0), per seed",
                ),
                **notes(section),
            ),
            partial(reward_gap_growth, shift=s),
        )
        for s in graded_shifts(section)
    ]
