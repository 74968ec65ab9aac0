"""What the LogitNorm claims measure on: the study's frames and config section, and what several
claims share, computed once (:class:`Evidence`): the bootstrap resamples of the confirmation
images, the per-image scores, the headline (kept far) and near sets, CE's FPR95 and the CE ->
LogitNorm reduction on the headline sets. The helpers below turn a paired FPR95 comparison into
a :class:`~softmax_ood.analysis.claims.Measurement` (seeds and test images, :mod:`..evidence`;
seeds only where the samples frame lacks the per-image values)."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement, paired
from ....analysis.seeds import one_recipe, seed_average, study_frames
from ..evidence import Resamples, TwoStage, fpr95_first, has_scores, msp_arrays, two_stage
from ..floor import resamples_for
from ..shared import trained_on_main
from ..shifts import far_near

__all__ = [
    "Evidence",
    "capped",
    "fpr_avg",
    "fpr_measure",
    "headline_sets",
    "no_headline_set",
    "relative",
]


def headline_sets(ood: pd.DataFrame, spec: dict) -> list[str]:
    """The far test sets the headline averages over (those the floor does not solve)."""
    far = far_near(ood, spec).get("far")
    if far is None:
        return []
    return sorted(far.loc[far["split"] == "test", "ood_set"].unique())


def fpr_avg(res: Resamples, scores: dict, sets: list[str], metric=fpr95_first):
    """The per-seed statistic: ``metric`` (FPR95 by default, %) averaged over ``sets``."""

    def stat(seed: int, b):
        id_s, ood_s = res.pick(b, scores[seed], sets)
        return float(np.mean([metric(id_s, ood_s[s]) for s in sets]))

    return stat


def no_headline_set(floor: pd.DataFrame) -> str:
    """Why the headline cannot be tested: no far set passed the floor battery on the selection
    images; each far set's best detector there and CE's FPR95, from the floor rows."""
    far = floor[floor["shift"] != "near"].sort_values("ood_set")
    if "selection_floor_fpr95" not in far.columns:
        return "no non-trivial far OOD set: every far set is solved by the floor"

    def best(r) -> str:
        tuning = r["selection_tuning_fpr95"] <= r["selection_heldout_fpr95"]
        return r["selection_tuning_detector" if tuning else "selection_heldout_detector"]

    each = "; ".join(
        f"{r['ood_set']} {r['selection_floor_fpr95']:.1f} % ({best(r)}) vs CE "
        f"{r['selection_ce_fpr95']:.1f} %"
        for _, r in far.iterrows()
    )
    return (
        "no far OOD set passes the floor battery on the selection images (its best detector's "
        f"FPR95 is not significantly above CE's MSP FPR95 on any): {each}"
    )


class Evidence:
    """The frames and section the claims read (restricted to the study's runs and recipe, as
    every measurement reads them) and what several claims share, each computed on first use."""

    def __init__(self, runs, ood, curves, samples, floor, spec: dict):
        self.section = spec
        self.runs, self.ood = study_frames(runs, ood, spec)
        self.curves = one_recipe(curves, spec, "curves")
        self.samples, self.floor = samples, floor
        self.arch, self.alpha = spec["main_arch"], float(spec["alpha"])
        self.ce, self.ln = spec["baseline"], spec["method"]
        self.pen, self.godin = spec["penalty"], spec["godin"]
        self.seeds = sorted(int(s) for s in spec["seeds"])
        self.recipe = spec["recipe"]
        self.trained = trained_on_main(spec)

    @cached_property
    def parts(self) -> dict:
        return far_near(self.ood, self.section)

    @cached_property
    def far(self) -> pd.DataFrame:
        """The headline far sets' rows (seeds-only fallbacks read these)."""
        return self.parts.get("far", self.ood.iloc[:0])

    @cached_property
    def res(self) -> Resamples:
        """The bootstrap resamples of the confirmation images, shared by every comparison."""
        return resamples_for(self.samples, self.section)

    @cached_property
    def scores(self) -> dict:
        """Per-image MSP of CE, LogitNorm and LogitPenalty (those trained), by loss and seed."""
        return {
            loss: {s: msp_arrays(self.samples, self.recipe, self.arch, loss, s) for s in self.seeds}
            for loss in (self.ce, self.ln, self.pen)
            if loss in self.trained
        }

    @cached_property
    def heads(self) -> list[str]:
        """The headline sets: the far sets kept (their floor test holds on the selection images)."""
        return headline_sets(self.ood, self.section)

    @cached_property
    def near(self) -> list[str]:
        parts = self.parts
        return (
            sorted(parts["near"].query("split == 'test'")["ood_set"].unique())
            if "near" in parts
            else []
        )

    @cached_property
    def no_heads(self) -> str:
        """The detail of every headline-set row when no far set is kept."""
        return no_headline_set(self.floor)

    def avg(self, loss: str, sets: list[str], metric=fpr95_first):
        return fpr_avg(self.res, self.scores[loss], sets, metric)

    def diff_stat(self, a: str, b: str, sets: list[str]):
        fa, fb = self.avg(a, sets), self.avg(b, sets)
        return lambda seed, bb: fa(seed, bb) - fb(seed, bb)

    @cached_property
    def ce_fpr(self) -> TwoStage:
        """CE's MSP FPR95 on the headline sets (P-ce-fpr; C1's denominator)."""
        return two_stage(self.avg(self.ce, self.heads), self.seeds, self.res)

    @cached_property
    def reduction(self) -> TwoStage:
        """CE - LogitNorm MSP FPR95 on the headline sets, pp (C1 and the headline)."""
        return two_stage(self.diff_stat(self.ce, self.ln, self.heads), self.seeds, self.res)

    def fpr_pair(self, a_loss, b_loss, score_a="msp", score_b=None, a=None, names=None):
        """CE-side minus other-side FPR95 (pp) on the headline sets: seeds and test images
        from the per-image scores; seeds only (fixed images) when the frame lacks them. Also
        the CE side's own FPR95 (the most it can lose: the reduction's cap)."""
        a = a or self.arch
        samples, recipe, seeds = self.samples, self.recipe, self.seeds
        res, heads = self.res, self.heads
        score_b = score_b or score_a
        names = names or (a_loss, b_loss)
        if all(
            has_scores(samples, recipe, a, loss, seeds, sc)
            for loss, sc in ((a_loss, score_a), (b_loss, score_b))
        ):
            arr = {
                side: {s: msp_arrays(samples, recipe, a, loss, s, sc) for s in seeds}
                for side, loss, sc in (("a", a_loss, score_a), ("b", b_loss, score_b))
            }
            fa, fb = fpr_avg(res, arr["a"], heads), fpr_avg(res, arr["b"], heads)
            own = float(np.mean([fa(s, None) for s in seeds]))
            ts = two_stage(lambda seed, bb: fa(seed, bb) - fb(seed, bb), seeds, res)
            return ts, names, own
        side_a = seed_average(self.far, a, a_loss, score_a, "fpr95")
        return (
            paired(
                side_a,
                seed_average(self.far, a, b_loss, score_b, "fpr95"),
                names=names,
                percent=True,
            ),
            names,
            float(side_a.mean()),
        )


def fpr_measure(ev: Evidence, ts, names, effect, own=math.nan, own_what="") -> Measurement:
    """The two-stage (or seeds-only) measurement; ``own``: the most the CE side can lose
    here (its own FPR95), the cap of the effect the power is computed at."""
    alpha = ev.alpha
    cap = {"effect_cap": own, "effect_cap_why": f"{own_what} ({own:.2f})"} if own_what else {}
    if isinstance(ts, Measurement):  # seeds only: the engine tests the paired samples
        return Measurement(
            ts.value,
            ts.detail + " (seeds only: no per-image values of these models)",
            samples=ts.samples,
            **cap,
        )
    return Measurement(
        ts.mean,
        f"{names[0]} - {names[1]}: {ts.describe()}; power to detect the paper's "
        f"{effect:.2f} pp: {ts.power(effect, alpha):.2f}"
        + (
            f"; at {own:.2f} pp, {own_what} (the power column's effect): {ts.power(own, alpha):.2f}"
            if own_what and own < abs(effect)
            else ""
        ),
        ts.p_value(0.0, ">"),
        n=ts.n,
        power=ts.power(effect, alpha),
        method="two-stage t",
        se=ts.se,
        power_at=ts.power,
        **cap,
    )


def capped(ev: Evidence, pair, effect: float, score: str, who: str = "CE") -> Measurement:
    """:func:`fpr_measure` for ``pair = (ts, names, own)``: the reduction's cap is the
    baseline's own FPR95 with ``score`` (it cannot lose more)."""
    ts, names, own = pair
    return fpr_measure(ev, ts, names, effect, own, f"{who}'s own {score} FPR95 here")


def relative(ts_diff, ce_mean: float, spec: dict, alpha: float, what: str) -> Measurement:
    """A relative FPR95 reduction (% of CE's) from the two-stage test of the pp difference."""
    if ts_diff.n == 0 or not ce_mean > 0:
        return Measurement(math.nan, f"{what}: no FPR95 to compare (CE FPR95 {ce_mean:.2f} %)")
    rel = float(spec.get("relative_effect", 1 / 3))
    p = ts_diff.p_value(0.0, ">")
    power = ts_diff.power(rel * ce_mean, alpha)
    return Measurement(
        100.0 * ts_diff.mean / ce_mean,
        f"{what}: CE {ce_mean:.2f} % -> reduction {ts_diff.describe()}; power to detect a "
        f"{100 * rel:.0f} % relative reduction ({rel * ce_mean:.2f} pp): {power:.2f}",
        p,
        n=ts_diff.n,
        power=power,
        method="two-stage t",
        se=100.0 * ts_diff.se / ce_mean,
        # the relative reduction against any value (the paper's 68.4 %): its pp difference
        p_at=lambda value, side: ts_diff.p_value(value * ce_mean / 100.0, side),
    )
