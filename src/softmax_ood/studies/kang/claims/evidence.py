"""What Kang's measurements read (:class:`Evidence`): the study's long frames and its config
section, and the computations several claims share, each computed once and cached: the main
runs, the kept levels, each shift type's top level and note (:class:`Shift`), the non-trivial
far sets and the accumulated constants of Fig. 4 (:class:`Constants`). Also the question
the figures ask of the claims (:func:`unresolved_shifts`; the far sets' premise is in ``kang.far``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ....analysis.claims import Measurement
from ....analysis.measures import separation
from ..far import far_floor
from ..grid import ID_SET
from ..tables import graded_shifts, main_runs, mechanism_runs
from .common import (
    ADAM_STEP_BOUND,
    ROTATION,
    SELECTION,
    level_ids,
    repeats,
    set_name,
    top_level,
)
from .levels import kept_levels


@dataclass(frozen=True)
class Shift:
    """One graded shift type as its rows read it: the kept ``levels`` (level 0 first), the
    ``top`` level, the ``note`` every row of it appends (dropped levels, top level, selection),
    and the names of its top-level and level-0 sets."""

    name: str
    levels: list[float]
    top: float
    note: str
    top_set: str
    zero_set: str


@dataclass(frozen=True)
class Constants:
    """Fig. 4's accumulated constants of one loss, per seed: ``||c - OCS|| / scale`` trained and
    untrained, the Adam budget's reach, and how the budget compares (``how``)."""

    trained: pd.Series
    untrained: pd.Series
    reach: pd.Series
    how: frozenset[str]


class Evidence:
    """The frames of :func:`..frames.load_frames` (``grid``, ``policies``, ``fit``, ``levels``,
    ``ood_scores``, ``mechanism``, ``components``, and optionally ``adversarial``, ``theory``)
    and the study section, with what the claims share cached."""

    def __init__(self, frames: Mapping[str, pd.DataFrame], section: Mapping):
        self.frames = frames
        self.section = section

    @cached_property
    def alpha(self) -> float:
        return float(self.section.get("alpha", 0.05))

    @cached_property
    def grid(self) -> pd.DataFrame:
        return main_runs(self.frames["grid"], self.section)

    @cached_property
    def policies(self) -> pd.DataFrame:
        return main_runs(self.frames["policies"], self.section)

    @cached_property
    def fit(self) -> pd.DataFrame:
        return main_runs(self.frames["fit"], self.section)

    @cached_property
    def scores(self) -> pd.DataFrame:
        """The OOD scores, indexed by ``eval_set``."""
        return self.frames["ood_scores"].set_index("eval_set")

    @cached_property
    def levels(self) -> pd.DataFrame:
        """The levels frame (pixel changes), indexed by ``eval_set``."""
        return self.frames["levels"].set_index("eval_set")

    @cached_property
    def kept(self) -> dict[str, list[float]]:
        return kept_levels(self.frames["levels"], self.section)

    @cached_property
    def classifier(self) -> pd.DataFrame:
        """The classifier's grid rows."""
        return self.grid[self.grid["loss"] == self.section["roles"]["classifier"]]

    @cached_property
    def classifier_by_set(self) -> pd.DataFrame:
        return self.classifier.set_index(["eval_set", "seed"])

    @cached_property
    def selection_note(self) -> str:
        """What every shift row's detail appends: the discriminator's alpha, how levels were
        kept, the bars, and the seeds it is confirmed on."""
        grid = self.grid
        seeds = ", ".join(str(s) for s in sorted(grid["seed"].unique())) if len(grid) else ""
        a = self.section["discriminator"].get("alpha")
        how = (
            f"fixed in advance at {a:g} (the authors' code)"
            if a is not None
            else ("chosen on the validation split")
        )
        return " [" + SELECTION.format(alpha=how, seeds=seeds) + "]"

    @cached_property
    def shifts(self) -> dict[str, Shift]:
        """Each graded shift type's :class:`Shift`."""
        out = {}
        for s in graded_shifts(self.section):
            levels = self.kept[s]
            top = top_level(self.section, s, levels, self.scores)
            dropped = [lv for sh, lv in level_ids(self.section) if sh == s and lv not in levels]
            note = (
                f" (levels dropped as no-ops: {', '.join(f'{x:g}' for x in dropped)})"
                if dropped
                else ""
            )
            note += f"; top level {top:g}" + self.selection_note
            zero = "rotation@0" if s == ROTATION and "rotation@0" in self.scores.index else ID_SET
            out[s] = Shift(s, levels, top, note, set_name(s, top), zero)
        return out

    @cached_property
    def far_floor(self) -> dict[str, Measurement]:
        """``far_nontrivial`` of each far set."""
        bar = float(self.section["far_floor_fpr95"])
        return {name: far_floor(self.scores, name, bar) for name in self.section["far_ood"]}

    @cached_property
    def nontrivial_far(self) -> list[str]:
        """The far sets whose ``far_nontrivial`` premise holds."""
        bar = float(self.section["far_floor_fpr95"])
        return [n for n, fm in self.far_floor.items() if fm.p_value < self.alpha and fm.value > bar]

    @cached_property
    def fgsm(self) -> pd.DataFrame | None:
        """The classifier's FGSM rows of the main runs (None: no FGSM set evaluated)."""
        adv = self.frames.get("adversarial")
        if adv is None or adv.empty:
            return None
        adv = main_runs(adv, self.section)
        return adv[adv["loss"] == self.section["roles"]["classifier"]]

    @cached_property
    def theory(self) -> pd.DataFrame | None:
        """Sec. 4.2's toy measurements, one row per seed, one column per quantity (None: no
        toy measurements)."""
        theory = self.frames.get("theory")
        if theory is None or theory.empty:
            return None
        return theory.pivot_table(index="seed", columns="quantity", values="value")

    @cached_property
    def constants(self) -> dict[str, Constants | None]:
        """Per mechanism loss, its :class:`Constants` (None: no mechanism rows)."""
        frames = self.frames
        mech = (
            mechanism_runs(frames["mechanism"], self.section) if len(frames["mechanism"]) else None
        )
        comp = mechanism_runs(frames["components"], self.section)
        return {
            loss: None if mech is None or mech.empty else _constants(mech, comp, loss)
            for loss in self.section["mechanism"]["losses"]
        }


def _constants(mech: pd.DataFrame, comp: pd.DataFrame, loss: str) -> Constants:
    """Per seed ``||c - OCS|| / scale`` in prediction space for the trained and the untrained
    constants, and the budget's reach: Adam's farthest travel over the largest component of
    ``|OCS - untrained constants|`` (an SGD step has no such bound)."""
    trained, untrained, reach, how = {}, {}, {}, set()
    for seed, g in mech[mech["loss"] == loss].groupby("seed"):
        c = g[g["kind"] == "constants"].set_index("name")["mean"].astype(float)
        c0 = g[g["kind"] == "constants_init"].set_index("name")["mean"].astype(float)
        scale = g.loc[g["kind"] == "clean_scale", "mean"].astype(float)
        budget = g[g["kind"] == "lr_budget"]
        o = comp[(comp["loss"] == loss) & (comp["seed"] == seed) & (comp["kind"] == "ocs")]
        ocs = o.set_index("component")["value"].astype(float)
        if c.empty or scale.empty or ocs.empty or not float(scale.iloc[0]) > 0:
            continue
        names = list(ocs.index)
        d_0 = float(scale.iloc[0])
        trained[seed] = float(np.linalg.norm(c.reindex(names).to_numpy() - ocs.to_numpy())) / d_0
        if c0.empty:
            continue
        gap0 = c0.reindex(names).to_numpy() - ocs.to_numpy()
        untrained[seed] = float(np.linalg.norm(gap0)) / d_0
        if len(budget) and str(budget["eval_set"].iloc[0]) == "adam":
            need = float(np.abs(gap0).max())
            travel = ADAM_STEP_BOUND * float(budget["mean"].iloc[0])
            reach[seed] = travel / need if need > 0 else math.inf
            how.add(f"at most {travel:.3g} vs {need:.3g} needed")
        elif len(budget):
            how.add(f"optimizer {budget['eval_set'].iloc[0]!r}: no per-step bound")
    return Constants(
        pd.Series(trained, dtype=float),
        pd.Series(untrained, dtype=float),
        pd.Series(reach, dtype=float),
        frozenset(how),
    )


def unresolved_shifts(frames: dict, spec: dict) -> dict[str, str]:
    """Shift type -> note, for the shift types whose ``score_separated`` premise does not hold
    (top level not clearly more OOD than level 0 by ``score_separation``): their rows cannot be
    tested, and their figure panels are greyed with the note."""
    scores = frames["ood_scores"].set_index("eval_set")
    kept = kept_levels(frames["levels"], spec)
    alpha, bar = float(spec.get("alpha", 0.05)), float(spec["score_separation"])
    out = {}
    for s in graded_shifts(spec):
        top = top_level(spec, s, kept[s], scores)
        zero = "rotation@0" if s == ROTATION and "rotation@0" in scores.index else ID_SET
        sep = separation(
            repeats(scores, set_name(s, top)) if top > 0 else np.array([]),
            repeats(scores, zero),
            bar,
            s,
        )
        if not (sep.p_value < alpha and sep.value > bar):
            out[s] = f"not separated from clean\n(+{sep.value:.3f}, bar {bar:g})"
    return out
