"""The LogitNorm paper's Tables 1-6 (Wei et al. 2022) rebuilt from the study's long frames.

Inputs are the aggregated ``runs`` and ``ood`` frames (see :mod:`softmax_ood.aggregate`; all
rates are fractions) and the study spec (the ``logitnorm`` config section with the tau-ablation
loss variants spelled out). Every table is a flat ("tidy wide") frame: string key columns
(``row``, ``loss`` and, where it varies, ``score``), then numeric ``<metric>_mean`` /
``<metric>_std`` pairs and ``n_seeds``. Percent metrics (FPR95, AUROC, AUPR, accuracy, ECE) are
multiplied by 100 like the paper; temperatures and logit norms are not.

Seed handling: a metric is first averaged over the OOD *test* sets within each seed (the paper's
"average" row), then summarised over seeds as mean and sample std (``ddof=1``; NaN with a single
seed, rendered as "± n/a"). Validation OOD sets (``split == "val"``) never enter a test table.

The paper's "AUPR" is AUPR-In (average precision with ID as the positive class); here it is the
``aupr`` column, computed from the ``aupr_in`` input column.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...analysis.seeds import (
    cells,
    frame,
    ood_rows,
    require,
    seed_average,
    seed_values,
    study_frames,
)
from .ablation import OOD_METRICS, tau_ablation

__all__ = ["TABLES", "table1", "table2", "table3", "table4", "table5", "table6", "tau_ablation"]


def _ood_cells(ood, arch, loss, score, *, ood_set=None) -> dict:
    return cells(
        {
            name: seed_average(ood, arch, loss, score, col, ood_set=ood_set)
            for name, col in OOD_METRICS.items()
        }
    )


def _test_sets(ood: pd.DataFrame, arch: str, losses: Sequence[str], score: str) -> list[str]:
    sets = set()
    for loss in losses:
        sets |= set(ood_rows(ood, arch, loss, score, "test")["ood_set"])
    return sorted(sets)


# --------------------------------------------------------------------------- the tables
def table1(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 1: MSP on the main architecture, CE vs LogitNorm, per OOD test set + average."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    sets = _test_sets(ood, arch, losses, "msp")
    rows = []
    for row in [*sets, "average"]:
        for loss in losses:
            cells = _ood_cells(ood, arch, loss, "msp", ood_set=None if row == "average" else row)
            rows.append({"row": row, "loss": loss, **cells})
    return frame(rows)


def table2(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 2: each OOD score in ``spec['scores']``, CE vs LogitNorm, OOD-set averages."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    require(ood, "score", list(spec["scores"]), "ood", "score(s)")
    rows = [
        {"row": score, "loss": loss, **_ood_cells(ood, arch, loss, score)}
        for score in spec["scores"]
        for loss in losses
    ]
    return frame(rows)


def table3(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 3: each architecture of ``spec['arch_table']``: ID accuracy and MSP averages."""
    runs, ood = study_frames(runs, ood, spec)
    archs, losses = list(spec["arch_table"]), [spec["baseline"], spec["method"]]
    require(runs, "arch", archs, "runs", "architecture(s)")
    require(ood, "arch", archs, "ood", "architecture(s)")
    rows = []
    for arch in archs:
        for loss in losses:
            acc = seed_values(runs, arch, loss, "accuracy", scale=100.0)
            ood_vals = {n: seed_average(ood, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
            rows.append({"row": arch, "loss": loss, **cells({"accuracy": acc, **ood_vals})})
    return frame(rows)


def table4(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 4: ECE (%, 15 bins) without / with temperature scaling, and the fitted T.

    Rows ``w/o TS`` and ``w/ TS`` as in the paper; ``temperature`` is NaN in the ``w/o TS``
    row (no temperature is fitted there).
    """
    runs, _ = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    require(runs, "loss", losses, "runs", "loss(es)")
    rows = []
    for loss in losses:
        nan = pd.Series(dtype=float)
        rows.append(
            {
                "row": "w/o TS",
                "loss": loss,
                **cells(
                    {"ece": seed_values(runs, arch, loss, "ece", scale=100.0), "temperature": nan}
                ),
            }
        )
    for loss in losses:
        rows.append(
            {
                "row": "w/ TS",
                "loss": loss,
                **cells(
                    {
                        "ece": seed_values(runs, arch, loss, "ece_ts", scale=100.0),
                        "temperature": seed_values(runs, arch, loss, "temperature"),
                    }
                ),
            }
        )
    return frame(rows)


def _norm_ood(ood: pd.DataFrame, arch: str, loss: str, ood_set: str) -> pd.Series:
    sel = ood_rows(ood, arch, loss, None, "test")
    sel = sel[sel["ood_set"] == ood_set]
    if sel.empty:
        raise ValueError(
            f"The ood frame has no test rows for OOD set {ood_set!r} "
            f"(loss {loss!r}, architecture {arch!r})."
        )
    # the logit norm is a property of the model and the set; it repeats across scores
    return sel.groupby("seed")["logit_norm_ood"].mean().sort_index().astype(float)


def table5(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 5: CE, LogitPenalty, LogitNorm: MSP averages and L2 logit norms (ID / OOD set).

    ``norm_id`` is the mean L2 logit norm on the ID test split (``runs.logit_norm_id``),
    ``norm_ood`` the one on ``spec['norm_ood_set']`` (named in the ``norm_ood_set`` column).
    """
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    losses = [spec["baseline"], spec["penalty"], spec["method"]]
    require(runs, "loss", losses, "runs", "loss(es)")
    require(ood, "loss", losses, "ood", "loss(es)")
    rows = []
    for loss in losses:
        vals = {n: seed_average(ood, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
        vals["norm_id"] = seed_values(runs, arch, loss, "logit_norm_id")
        vals["norm_ood"] = _norm_ood(ood, arch, loss, spec["norm_ood_set"])
        rows.append(
            {"row": "average", "loss": loss, "norm_ood_set": spec["norm_ood_set"], **cells(vals)}
        )
    return frame(rows)


def table6(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 6: GODIN (its own score) vs LogitNorm with ``spec['godin_compare_score']``."""
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    pairs = [(spec["godin"], "godin"), (spec["method"], spec["godin_compare_score"])]
    require(ood, "loss", [p[0] for p in pairs], "ood", "loss(es)")
    rows = [
        {"row": "average", "loss": loss, "score": score, **_ood_cells(ood, arch, loss, score)}
        for loss, score in pairs
    ]
    return frame(rows)


TABLES = {
    "tau_ablation": tau_ablation,
    "table1": table1,
    "table2": table2,
    "table3": table3,
    "table4": table4,
    "table5": table5,
    "table6": table6,
}
