"""Collect per-run evaluation outputs into the study's long tables.

Output frames (all fractions, not percentages):

``runs``    one row per trained model: accuracy, NLL, ECE with/without temperature scaling, ...
``ood``     one row per model x score x OOD set (``split`` test or val): FPR95 (ID positive),
            AUROC, AUPR-In, AUPR-Out, and the mean logit norm on that set.
``curves``  one row per model x epoch (training curves, logit norms on ID val and OOD monitor).
``samples`` per-sample MSP on ID test and each OOD test set, for the main architecture (the
evaluation keeps every score per image; this frame keeps the MSP rows).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from ..runs import parse_run_dir

__all__ = ["aggregate_runs"]

KEYS = ["dataset", "recipe", "arch", "loss", "loss_family", "tau", "seed"]


def _keys(run: dict, loss_cfg: dict) -> dict:
    return {
        "dataset": run["dataset"],
        "recipe": run["recipe"],
        "arch": run["arch"],
        "loss": run["loss"],
        "loss_family": loss_cfg["loss"],
        "tau": float(loss_cfg["tau"]) if "tau" in loss_cfg else math.nan,
        "seed": int(run["seed"]),
    }


def aggregate_runs(
    summaries: list[str],
    curves: list[str],
    samples: list[str],
    *,
    main_arch: str,
    losses: dict,
) -> dict[str, pd.DataFrame]:
    """Build the ``runs``/``ood``/``curves``/``samples`` frames from per-run files."""
    runs, ood = [], []
    for path in summaries:
        s = json.loads(Path(path).read_text())
        keys = _keys(s["run"], s["loss_cfg"])
        runs.append(
            {
                **keys,
                **s["metrics"],
                "best_epoch": int(s["run"]["best_epoch"]),
                "epochs": int(s["epochs"]),
            }
        )
        ood += [{**keys, **rec} for rec in s["ood"]]
    curve_frames = []
    for path in curves:
        run = parse_run_dir(path)
        c = pd.read_csv(path, sep="\t")
        keys = _keys(run._asdict(), losses[run.loss])
        curve_frames.append(c.assign(**keys)[KEYS + list(c.columns)])
    sample_frames = []
    for path in samples:
        dataset, recipe, arch, loss, seed = parse_run_dir(path)
        if arch != main_arch:
            continue
        f = pd.read_parquet(path)
        if "score" in f:  # the evaluation keeps every score per image; this frame is MSP's
            f = f[f["score"] == "msp"]
        sample_frames.append(
            pd.DataFrame(
                {
                    "recipe": recipe,
                    "arch": arch,
                    "loss": loss,
                    "seed": seed,
                    "set": f["set"],
                    "score": "msp",
                    "value": f["value"].astype("float32"),
                }
            )
        )
    order = ["recipe", "arch", "loss", "seed"]
    return {
        "runs": pd.DataFrame(runs).sort_values(order, kind="stable").reset_index(drop=True),
        "ood": pd.DataFrame(ood)
        .sort_values(order + ["score", "split", "ood_set"], kind="stable")
        .reset_index(drop=True),
        "curves": pd.concat(curve_frames, ignore_index=True)
        .sort_values(order + ["epoch"], kind="stable")
        .reset_index(drop=True),
        "samples": pd.concat(sample_frames, ignore_index=True)
        .sort_values(order + ["set"], kind="stable")
        .reset_index(drop=True),
    }
