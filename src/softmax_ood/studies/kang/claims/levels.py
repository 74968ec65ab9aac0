"""The premise that decides which shift levels every other row reads: ``changes:<shift>@<level>``
(the level changes the images vs the level below), and :func:`kept_levels`, the levels whose
premise holds (pixels only, no model: fixed in advance of any verdict)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, judge
from ..tables import graded_shifts
from .common import PAPER, level_ids, notes, set_name


def pixel_change(ev, *, shift: str, level: float) -> Measurement:
    """``changes:<shift>@<level>``: per image, the mean |pixel change| vs the level below
    (``ev.levels``: the levels frame indexed by ``eval_set``)."""
    name = set_name(shift, level)
    if name not in ev.levels.index:
        return Measurement(math.nan, f"{name}: not in the grid")
    per = np.asarray(ev.levels.loc[name, "change_per_image"], dtype=float)
    return Measurement(
        float(per.mean()) if len(per) else math.nan,
        f"{name}: mean |pixel change| {per.mean():.4f} over {len(per)} images",
        samples=tuple(per),
    )


def change_claims(section: dict) -> list[Claim]:
    """One premise per shift level: it changes the images by more than ``change_epsilon``;
    a level where it fails is dropped from every row of its shift type."""
    return [
        Claim(
            ClaimSpec(
                f"changes:{set_name(shift, level)}",
                f"Premise: {shift} level {level:g} changes the images vs the level below",
                "mean |pixel change| vs the level below, per image",
                float(section["change_epsilon"]),
                ">",
                kind="premise",
                **notes(section),
            ),
            partial(pixel_change, shift=shift, level=level),
        )
        for shift, level in level_ids(section)
    ]


@dataclass(frozen=True)
class _Levels:
    """The evidence :func:`pixel_change` reads: the levels frame indexed by ``eval_set``."""

    levels: pd.DataFrame


def kept_levels(levels: pd.DataFrame, spec: dict) -> dict[str, list[float]]:
    """Per graded shift type: level 0 and every level whose ``changes`` premise holds."""
    t = judge(
        PAPER,
        change_claims(spec),
        _Levels(levels.set_index("eval_set")),
        alpha=float(spec.get("alpha", 0.05)),
    )
    held = set(t.loc[t["holds"], "claim_id"])
    out: dict[str, list[float]] = {}
    for s in graded_shifts(spec):
        out[s] = [0.0] + [
            lv for sh, lv in level_ids(spec) if sh == s and f"changes:{set_name(sh, lv)}" in held
        ]
    return out
