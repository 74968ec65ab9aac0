"""The cross-paper study's evidence: the frames (``shift``, ``rays``, ``fit``, ``levels``,
``ood_scores``, ``seddik``; :mod:`..measure`) and the study section, with what several claims'
measurements share computed once (``functools.cached_property``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement
from ...kang.far import far_floor
from ...seddik import claims as seddik
from .common import shifts, slope

__all__ = ["Axis", "Evidence", "Reversion", "of_loss", "seddik_per_seed"]


@dataclass(frozen=True)
class Axis:
    """One shift's levels: its rows (``series``, level 0 = its own level-0 set or the clean
    split), the levels in order, the OOD-score set each level reads and its OOD score."""

    series: pd.DataFrame
    levels: list
    names: list[str]
    scores: list[float]


@dataclass(frozen=True)
class Reversion:
    """One network along one shift, per seed: Spearman rho(OOD score, KL to the OCS)
    (``rho``), the slope of the relative raw logit norm on the OOD score (``rate``), and the
    seeds' mean slope of the relative KL (``kl_rate``) and mean clean KL (``kl_clean``)."""

    rho: pd.Series
    rate: pd.Series
    kl_rate: float
    kl_clean: float


def series_of(shift: pd.DataFrame, s: str) -> pd.DataFrame:
    """Rows of shift ``s`` with level 0 = its own level-0 set (rotation@0) or the clean split."""
    own = shift[shift["shift"] == s]
    if not (own["level"] == 0).any():
        zero = shift[shift["shift"] == "none"].assign(shift=s, level=0.0)
        own = pd.concat([zero, own], ignore_index=True)
    return own.sort_values("level")


def of_loss(frame: pd.DataFrame, loss: str) -> pd.DataFrame:
    return frame[frame["loss"] == loss].drop(columns="loss")


def seddik_per_seed(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per loss and network (seed) of the ``seddik`` frame: the Seddik statistics of (c), one
    network at a time: ``r`` (C3-weights), ``r_exact`` (the exact theory's), ``logit_gap``
    (C3-logits), the softmax classifier's and the theory's test accuracy (%) and its test points."""
    rows = []
    for (loss, seed), g in frame.groupby(["loss", "seed"], sort=False):
        g = g.drop(columns="loss")
        acc = g[(g["panel"] == "accuracy") & (g["split"] == "test") & (g["cls"] == "all")]
        prac = acc[acc["source"] == "practice"]
        rows.append(
            {
                "loss": loss,
                "seed": int(seed),
                "r": seddik.features_weights(g, seddik.WEIGHT_RATIO_BAR, alpha).value,
                "r_exact": seddik.expected_weight_ratio(g),
                "logit_gap": seddik.features_logits(g).value,
                "accuracy": 100 * float(prac["value"].iloc[0]),
                "theory_accuracy": 100 * float(acc[acc["source"] == "theory"]["value"].iloc[0]),
                "n_test": int(prac["n_points"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


@dataclass
class Evidence:
    """What the cross-paper claims read: the run's ``frames`` and the study ``section``."""

    frames: dict
    section: dict

    @property
    def bars(self) -> dict:
        """The section's ``claims`` settings (bars, alpha)."""
        return self.section["claims"]

    @property
    def base(self) -> str:
        return self.section["baseline"]

    @property
    def method(self) -> str:
        return self.section["method"]

    @cached_property
    def scores(self) -> pd.Series:
        """The discriminator's OOD score per evaluated set."""
        return self.frames["ood_scores"].set_index("eval_set")["ood_score"].astype(float)

    @cached_property
    def ceiling(self) -> float:
        """The KL to the OCS is at most -log(min OCS component), log K for balanced classes:
        the OCS's entropy (the fit frame's OCS loss) stands for it."""
        fit = self.frames["fit"]
        return float(fit["ocs_loss"].astype(float).mean()) if len(fit) else math.nan

    @cached_property
    def axes(self) -> dict[str, Axis]:
        """Each shift's levels and their OOD scores (``score_rises``, ``score_separated``)."""
        out = {}
        for s in shifts(self.section):
            ser = series_of(self.frames["shift"], s)
            lvls = sorted(ser["level"].unique())
            names = [
                ("id" if lvl == 0 and not (ser["eval_set"] == f"{s}@0").any() else f"{s}@{lvl:g}")
                for lvl in lvls
            ]
            out[s] = Axis(ser, lvls, names, [self.scores.get(n, math.nan) for n in names])
        return out

    @cached_property
    def reversion(self) -> dict[tuple[str, str], Reversion]:
        """(loss, shift) -> the network's per-seed reversion along the shift (``ocs_trend`` and
        ``same_rate`` read it)."""
        out = {}
        for s, axis in self.axes.items():
            by_level = dict(zip(axis.levels, axis.scores, strict=True))
            for loss in (self.base, self.method):
                g = axis.series[axis.series["loss"] == loss]
                out[loss, s] = _reversion(g.assign(ood_score=g["level"].map(by_level)))
        return out

    @cached_property
    def far_floors(self) -> dict[str, Measurement]:
        """``far_nontrivial:<set>``: the binomial test of the floor battery's FPR95 on each far
        set against the bar (Kang's premise, :func:`softmax_ood.studies.kang.far.far_floor`)."""
        floor_bar = float(self.bars["far_floor_fpr95"])
        ood = self.frames["ood_scores"].set_index("eval_set")
        return {name: far_floor(ood, name, floor_bar) for name in self.section["far_ood"]}

    @cached_property
    def far_kept(self) -> list[str]:
        """The far sets (``far:<set>``) whose ``far_nontrivial`` premise holds."""
        floor_bar, alpha = float(self.bars["far_floor_fpr95"]), float(self.bars["alpha"])
        return [
            f"far:{name}"
            for name, fm in self.far_floors.items()
            if fm.p_value < alpha and fm.value > floor_bar
        ]

    @cached_property
    def top_alpha(self) -> float:
        rays = self.frames["rays"]
        return rays["alpha"].max() if len(rays) else math.nan

    @cached_property
    def low_alpha(self) -> float:
        rays = self.frames["rays"]
        return rays["alpha"].min() if len(rays) else math.nan

    def rays_of(self, loss: str) -> pd.DataFrame:
        rays = self.frames["rays"]
        return rays[rays["loss"] == loss]

    def rays_at(self, loss: str, alpha: float) -> pd.DataFrame:
        """The rays of ``loss`` at ``alpha``, indexed by seed."""
        r = self.rays_of(loss)
        return r[r["alpha"] == alpha].set_index("seed")

    @cached_property
    def seddik_frames(self) -> dict[str, pd.DataFrame]:
        """Each loss's rows of the ``seddik`` frame (its ``loss`` column dropped)."""
        return {loss: of_loss(self.frames["seddik"], loss) for loss in (self.base, self.method)}

    @cached_property
    def expected_ratio(self) -> dict[str, float]:
        """loss -> the exact theory's weights ratio (``seddik_weights``' effect)."""
        return {loss: seddik.expected_weight_ratio(f) for loss, f in self.seddik_frames.items()}

    @cached_property
    def seddik_stats(self) -> dict[str, dict[str, pd.Series]]:
        """loss -> per seed the ``weights`` (r) and ``logits`` (gap) statistics ({} without
        features)."""
        frame, alpha = self.frames["seddik"], float(self.bars["alpha"])
        out = {}
        for loss, f in self.seddik_frames.items():
            if f.empty:
                out[loss] = {}
                continue
            per = seddik_per_seed(frame[frame["loss"] == loss], alpha).set_index("seed")
            out[loss] = {"weights": per["r"], "logits": per["logit_gap"]}
        return out


def _reversion(g: pd.DataFrame) -> Reversion:
    """Per seed of one network's rows along one shift (``ood_score`` per row)."""
    rhos, sl, kl_sl, kl0 = {}, {}, {}, {}
    for seed, gs in g.groupby("seed"):
        gs = gs.sort_values("level")
        x, d = gs["ood_score"].to_numpy(float), gs["distance"].to_numpy(float)
        if len(gs) >= 3 and np.ptp(x) > 0 and np.ptp(d) > 0:
            from scipy import stats

            rhos[seed] = float(stats.spearmanr(x, d).statistic)
        d0 = float(gs.loc[gs["level"] == 0, "distance"].iloc[0])
        kl0[seed] = d0
        kl_sl[seed] = slope(x, d / d0) if d0 > 0 else math.nan
        z = gs["logit_norm"].to_numpy(float)
        z0 = float(gs.loc[gs["level"] == 0, "logit_norm"].iloc[0])
        sl[seed] = slope(x, z / z0) if z0 > 0 else math.nan
    return Reversion(
        pd.Series(rhos, dtype=float),
        pd.Series(sl, dtype=float),
        pd.Series(kl_sl, dtype=float).mean(),
        pd.Series(kl0, dtype=float).mean(),
    )
