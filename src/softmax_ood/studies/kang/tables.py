"""Kang study: its long frames (:mod:`.frames`) -> tables.

Long frames (one row per run x evaluation set, or per run x set x policy, ...) keep the seeds;
the tables summarise them as mean ± std over seeds with the shared
:mod:`softmax_ood.analysis.seeds` helpers and render with :mod:`softmax_ood.analysis.render`.

Levels: every graded shift type (each corruption, rotation) starts at level 0, the clean
held-out ID split, which :func:`by_shift` copies into each shift type's series. The far OOD
sets form the ``far_ood`` series (clean split first, then each set; no numeric level).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis.seeds import cells
from ...analysis.seeds import frame as seed_frame

__all__ = [
    "TABLES",
    "by_shift",
    "graded_shifts",
    "main_runs",
    "mechanism_runs",
    "summary",
]

FAR = "far_ood"


def graded_shifts(spec: dict) -> list[str]:
    return list(spec["corruptions"]) + (["rotation"] if spec["rotations"] else [])


def by_shift(frame: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Rows of each shift series: the clean split (``shift == "none"``) is copied into every
    graded shift type at level 0 and into the ``far_ood`` series, except where a shift type has
    its own level-0 set (rotation: ``rotation@0``, bit-identical to the clean split)."""
    clean = frame[frame["shift"] == "none"]
    parts = []
    for shift in graded_shifts(spec) + ([FAR] if spec["far_ood"] else []):
        own = frame[frame["shift"] == shift]
        if not (own["level"] == 0).any():
            parts.append(clean.assign(shift=shift, level=0.0))
        parts.append(own)
    return pd.concat(parts, ignore_index=True)


def summary(frame: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame:
    """Mean ± std over seeds of ``columns`` per ``keys`` (first-appearance order)."""
    rows = []
    for key, g in frame.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        per_seed = {c: g.set_index("seed")[c] for c in columns}
        rows.append({**dict(zip(keys, key, strict=True)), **cells(per_seed)})
    return seed_frame(rows)


def main_runs(frame: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Rows of the study's main models (its recipe and architecture)."""
    return frame[(frame["arch"] == spec["arch"]) & (frame["recipe"] == spec["recipe"])]


def mechanism_runs(frame: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Rows of the Fig. 4 models (the mechanism's recipe, architecture and losses)."""
    m = spec["mechanism"]
    keep = (
        (frame["arch"] == m["arch"])
        & (frame["recipe"] == m.get("recipe", spec["recipe"]))
        & frame["loss"].isin(m["losses"])
    )
    return frame[keep]


def table_ocs(frames: dict, spec: dict) -> pd.DataFrame:
    """The OCS of each loss in its prediction space (from the training labels)."""
    comp = main_runs(frames["components"], spec)
    ocs = comp[comp["kind"] == "ocs"]
    first = ocs[ocs["seed"] == ocs["seed"].min()]
    return first[["loss", "family", "component", "value"]].reset_index(drop=True)


def table_distance(frames: dict, spec: dict) -> pd.DataFrame:
    """Per loss, shift type and level: OOD score (the discriminator's, independent of the
    model), distance to the OCS and ID accuracy, mean ± std over seeds."""
    grid = by_shift(main_runs(frames["grid"], spec), spec)
    t = summary(grid, ["loss", "shift", "eval_set", "level"], ["distance", "accuracy"])
    scores = frames["ood_scores"].set_index("eval_set")
    t.insert(4, "ood_score", t["eval_set"].map(scores["ood_score"]).to_numpy())
    t.insert(5, "ood_score_sd", t["eval_set"].map(scores["ood_score_std"]).to_numpy())
    return t


def table_selective(frames: dict, spec: dict) -> pd.DataFrame:
    """Per shift type, level and policy: abstain ratio and mean reward, mean ± std over seeds.
    ``oracle_eval_temperature`` is an oracle (temperature fitted on the evaluation split)."""
    pol = by_shift(main_runs(frames["policies"], spec), spec)
    pol = pol[pol["shift"] != FAR]
    t = summary(pol, ["shift", "level", "policy"], ["abstain_ratio", "mean_reward"])
    t.insert(3, "oracle", t["policy"].eq("oracle_eval_temperature"))
    return t


def table_trend(frames: dict, spec: dict) -> pd.DataFrame:
    """Per loss and shift type: Spearman rho of (OOD score, distance to OCS) over the levels
    (means over seeds), the paper's trend is negative. No pooled row: sets of different shift
    types share their clean images, so a rho pooled over them has no valid test. The far row
    ranks only the far sets whose ``far_nontrivial`` premise holds (as the claims' far trend:
    no clean point, none the floor battery solves; ``note`` names those left out), and has no
    rho below three sets."""
    from scipy import stats

    from .far import excluded_far

    dist = table_distance(frames, spec)
    left_out = excluded_far(frames["ood_scores"], spec)
    rows = []
    for (loss, shift), g in dist.groupby(["loss", "shift"], sort=False):
        note = ""
        if shift == FAR:
            g = g[g["eval_set"].str.startswith("far:")]
            g = g[~g["eval_set"].isin([f"far:{n}" for n in left_out])]
            if left_out:
                note = f"left out (the floor battery solves them): {', '.join(left_out)}"
        rho = (
            stats.spearmanr(g["ood_score"], g["distance_mean"]).statistic if len(g) > 2 else np.nan
        )
        rows.append(
            {"loss": loss, "shift": shift, "rho": float(rho), "n_points": len(g), "note": note}
        )
    return pd.DataFrame(rows)


def table_fit(frames: dict, spec: dict) -> pd.DataFrame:
    """Per model: the kept checkpoint's training loss, its OCS's loss and their ratio, mean ±
    std over seeds (the "fitted" premise's numbers)."""
    fit = main_runs(frames["fit"], spec).assign(ratio=lambda d: d["train_loss"] / d["ocs_loss"])
    t = summary(fit, ["loss"], ["train_loss", "ocs_loss", "ratio", "best_epoch"])
    return t


def table_discriminator(frames: dict, spec: dict) -> pd.DataFrame:
    """The discriminator's L2 strength candidates on held-out data (the validation split under
    every shift) and which one was chosen."""
    sel = frames.get("selection")
    if sel is None or sel.empty:
        return pd.DataFrame(
            columns=["alpha", "null_deviation", "saturated_share", "mean_shifted_score", "chosen"]
        )
    return sel.reset_index(drop=True)


TABLES = {
    "fit": table_fit,
    "discriminator": table_discriminator,
    "ocs": table_ocs,
    "distance": table_distance,
    "selective": table_selective,
    "trend_by_shift": table_trend,
}
