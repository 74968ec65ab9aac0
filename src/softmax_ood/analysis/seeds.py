"""Seed aggregation shared by every study: select one model's per-seed values from the long
``runs``/``ood`` frames, average OOD metrics over sets *within* a seed, then summarise over seeds
as mean and sample std (``ddof=1``; NaN with one seed). All errors are one sentence naming what
is missing.

Frames: ``runs`` has one row per trained model (``arch``, ``loss``, ``seed`` and metric columns);
``ood`` one row per model x score x OOD set (``split`` test or val).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd

__all__ = [
    "cells",
    "check_unique",
    "frame",
    "ood_rows",
    "require",
    "require_columns",
    "seed_average",
    "seed_values",
    "study_frames",
    "one_recipe",
    "summarise",
]


def _one_sentence_missing(what: str, missing: Iterable, where: str) -> ValueError:
    items = ", ".join(repr(m) for m in missing)
    return ValueError(f"The {where} frame has no rows for {what} {items}.")


def require(frame: pd.DataFrame, column: str, values: Sequence, where: str, what: str) -> None:
    present = set(frame[column].dropna().unique()) if column in frame else set()
    missing = [v for v in values if v not in present]
    if missing:
        raise _one_sentence_missing(what, missing, where)


def require_columns(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The {where} frame lacks the column(s) {', '.join(missing)}.")


def _one_dataset(frame: pd.DataFrame, spec: dict, where: str) -> pd.DataFrame:
    """Restrict to ``spec['dataset']`` if given; otherwise insist on a single ID dataset. Then,
    the same for the training recipe (``spec['recipe']``): a study's tables and claims read
    one recipe at a time."""
    for key, what in (("dataset", "ID dataset"), ("recipe", "recipe")):
        if key not in frame.columns:
            continue
        if spec.get(key) is not None:
            require(frame, key, [spec[key]], where, key)
            frame = frame[frame[key] == spec[key]]
            continue
        names = sorted(frame[key].dropna().unique())
        if len(names) > 1:
            raise ValueError(f"The {where} frame mixes {what}s {names}; set spec[{key!r}].")
    return frame


def study_frames(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict):
    """``runs`` and ``ood`` restricted to the study's ID dataset and recipe (checked)."""
    return _one_dataset(runs, spec, "runs"), _one_dataset(ood, spec, "ood")


def one_recipe(frame: pd.DataFrame, spec: dict, where: str) -> pd.DataFrame:
    """Any study frame (curves, samples, ...) restricted to the study's dataset and recipe."""
    return _one_dataset(frame, spec, where)


def check_unique(frame: pd.DataFrame, keys: list[str], where: str) -> None:
    dup = frame.duplicated(keys)
    if dup.any():
        first = frame.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(f"The {where} frame has duplicate rows for {first}.")


def seed_values(
    runs: pd.DataFrame, arch: str, loss: str, column: str, *, scale: float = 1.0
) -> pd.Series:
    """A ``runs`` column for one (arch, loss), indexed by seed (one model per seed)."""
    sel = runs[(runs["arch"] == arch) & (runs["loss"] == loss)]
    if sel.empty:
        require(runs, "arch", [arch], "runs", "architecture")
        raise ValueError(f"The runs frame has no rows for loss {loss!r} on architecture {arch!r}.")
    check_unique(sel, ["seed"], "runs")
    return sel.set_index("seed")[column].sort_index().astype(float) * scale


def ood_rows(ood: pd.DataFrame, arch: str, loss: str, score: str | None, split: str):
    sel = ood[(ood["arch"] == arch) & (ood["loss"] == loss) & (ood["split"] == split)]
    if score is not None:
        sel = sel[sel["score"] == score]
    if sel.empty:
        require(ood, "arch", [arch], "ood", "architecture")
        require(ood, "loss", [loss], "ood", "loss")
        if score is not None:
            require(ood, "score", [score], "ood", "score")
        raise ValueError(
            f"The ood frame has no {split}-split rows for loss {loss!r}"
            + (f" with score {score!r}" if score is not None else "")
            + f" on architecture {arch!r}."
        )
    return sel


def _check_complete_sets(sel: pd.DataFrame, what: str) -> None:
    """Every seed must cover the same OOD sets, or the per-seed averages are not comparable."""
    sets = set(sel["ood_set"].unique())
    for seed, g in sel.groupby("seed"):
        missing = sorted(sets - set(g["ood_set"]))
        if missing:
            raise ValueError(f"The ood frame lacks OOD set(s) {missing} for {what}, seed {seed}.")


def seed_average(
    ood: pd.DataFrame,
    arch: str,
    loss: str,
    score: str,
    metric: str,
    *,
    split: str = "test",
    scale: float = 100.0,
    ood_set: str | None = None,
) -> pd.Series:
    """Per-seed value of an OOD metric averaged over the OOD sets of ``split``.

    ``metric`` is an input column of ``ood`` (``fpr95``, ``auroc``, ``aupr_in``, ...). With
    ``ood_set`` only that set is used. Returns a Series indexed by seed.
    """
    sel = ood_rows(ood, arch, loss, score, split)
    if ood_set is not None:
        sel = sel[sel["ood_set"] == ood_set]
        if sel.empty:
            raise ValueError(
                f"The ood frame has no rows for OOD set {ood_set!r} "
                f"(loss {loss!r}, score {score!r}, architecture {arch!r})."
            )
    check_unique(sel, ["seed", "ood_set"], "ood")
    _check_complete_sets(sel, f"loss {loss!r}, score {score!r}, architecture {arch!r}")
    return sel.groupby("seed")[metric].mean().sort_index().astype(float) * scale


def summarise(values: pd.Series) -> tuple[float, float, int]:
    """(mean, sample std with ddof=1 or NaN for one seed, number of seeds)."""
    v = pd.Series(values, dtype=float).dropna()
    n = int(v.size)
    if n == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), (float(v.std(ddof=1)) if n > 1 else math.nan), n


def cells(values: dict[str, pd.Series]) -> dict:
    """``{metric: per-seed Series}`` -> ``{metric_mean, metric_std, ..., n_seeds}``."""
    out, seeds = {}, set()
    for name, series in values.items():
        mean, std, _ = summarise(series)
        out[f"{name}_mean"], out[f"{name}_std"] = mean, std
        seeds |= set(pd.Series(series).dropna().index)
    out["n_seeds"] = len(seeds)
    return out


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["n_seeds"] = df["n_seeds"].astype("int64")
    return df.reset_index(drop=True)
