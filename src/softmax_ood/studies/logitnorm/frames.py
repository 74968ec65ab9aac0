"""The study's own additions to the aggregated frames: per-image MSP at full precision and
the ``trivial`` mark of each OOD set (from :mod:`.floor`)."""

from __future__ import annotations

import pandas as pd

from ...runs import parse_run_dir
from .evidence import fpr_at_tpr_closest

__all__ = ["full_precision_samples", "mark_trivial", "with_reference_fpr"]


def full_precision_samples(paths: list[str], main_arch: str | None = None) -> pd.DataFrame:
    """Per-image scores (float64, as evaluated) of every run (``main_arch``: only that
    architecture's), one row per (score, image) in the order of the prepared arrays (``set``
    ``"id"``: the ID test images). Every score the evaluation kept (MSP, ODIN, Energy, GradNorm,
    GODIN, and on ``"id"`` ``msp_ts``/``correct`` for the ECE after TS); an evaluation file
    without a ``score`` column holds MSP only."""
    parts = []
    for path in paths:
        dataset, recipe, arch, loss, seed = parse_run_dir(path)
        if main_arch is not None and arch != main_arch:
            continue
        f = pd.read_parquet(path)
        if "score" not in f:
            f = f.assign(score="msp")
        parts.append(
            pd.DataFrame(
                {
                    "recipe": recipe,
                    "arch": arch,
                    "loss": loss,
                    "seed": int(seed),
                    "set": f["set"].astype(str),
                    "image": f.groupby(["score", "set"], sort=False).cumcount().astype("int64"),
                    "score": f["score"].astype(str),
                    "value": f["value"].astype("float64"),
                }
            )
        )
    keys = ["recipe", "arch", "loss", "seed", "score", "set", "image"]
    return (
        pd.concat(parts, ignore_index=True).sort_values(keys, kind="stable").reset_index(drop=True)
    )


def mark_trivial(ood: pd.DataFrame, floor: pd.DataFrame) -> pd.DataFrame:
    """``ood`` with a boolean ``trivial`` column: the OOD test sets the pixel floor already
    solves (validation sets: False; they are tuning data, never averaged)."""
    trivial = set(floor.loc[floor["trivial"], "ood_set"])
    out = ood.copy()
    out["trivial"] = out["ood_set"].isin(trivial) & (out["split"] == "test")
    return out


def with_reference_fpr(ood: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """``ood`` with a column ``fpr95_ref``: the MSP FPR95 (fraction) in the reference code's
    convention (operating point closest to 95 % TPR, :func:`.evidence.fpr_at_tpr_closest`)
    for every MSP test row with per-image scores; NaN elsewhere."""
    keys = ["recipe", "arch", "loss", "seed"]
    ref = []
    samples = samples[samples["score"] == "msp"]
    for key, g in samples.groupby(keys, sort=True):
        by_set = {s: v["value"].to_numpy() for s, v in g.groupby("set", sort=False)}
        for name, values in by_set.items():
            if name != "id":
                ref.append(
                    dict(zip(keys, key, strict=True))
                    | {"ood_set": name, "fpr95_ref": fpr_at_tpr_closest(by_set["id"], values)}
                )
    ref = pd.DataFrame(ref).assign(score="msp", split="test")
    out = ood.merge(ref, on=[*keys, "ood_set", "score", "split"], how="left")
    return out[[*ood.columns, "fpr95_ref"]]
