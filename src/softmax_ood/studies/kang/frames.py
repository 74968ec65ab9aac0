"""Kang study: per-run grid evaluations + discriminator scores -> long frames (the aggregate
rule's job; the tables, figures and claims read these frames)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...runs import parse_run_dir

__all__ = ["eval_paths", "load_frames"]


def _with_run(frame: pd.DataFrame, path: str, spec: dict) -> pd.DataFrame:
    run = parse_run_dir(path)
    family = spec["loss_entries"][run.loss]["loss"]
    front = {
        "recipe": run.recipe,
        "arch": run.arch,
        "loss": run.loss,
        "family": family,
        "seed": run.seed,
    }
    out = frame.copy()
    for i, (k, v) in enumerate(front.items()):
        out.insert(i, k, v)
    return out


def load_frames(
    eval_files: dict[str, list[str]],
    scores: list[str],
    spec: dict,
    index: str | None = None,
    selection: str | None = None,
) -> dict:
    """Concatenate the per-run files (``eval_files[kind]`` = paths of ``<kind>.parquet``, one per
    run) and the discriminator groups into long frames; ``grid`` joins each run's sets with the
    OOD score of the set; ``levels`` is the grid index (how much each level changes the images)
    and ``selection`` the discriminator's regularisation choice on held-out data."""
    frames = {}
    for kind, paths in eval_files.items():
        parts = [_with_run(pd.read_parquet(p), p, spec) for p in paths]
        parts = [p for p in parts if len(p)]
        frames[kind] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    ood = pd.concat([pd.read_parquet(p) for p in scores], ignore_index=True)
    frames["ood_scores"] = ood
    keep = ["eval_set", "ood_score", "ood_score_std"]
    frames["grid"] = frames.pop("sets").merge(ood[keep], on="eval_set", how="left")
    if index is not None:
        frames["levels"] = pd.read_parquet(index).drop(columns=["start", "stop"])
    if selection is not None:
        frames["selection"] = pd.read_parquet(selection)
    return frames


def eval_paths(paths: list[str]) -> dict[str, list[str]]:
    """Group per-run file paths by their file stem (``sets``, ``components``, ...)."""
    out: dict[str, list[str]] = {}
    for p in paths:
        out.setdefault(Path(p).stem, []).append(p)
    return out
