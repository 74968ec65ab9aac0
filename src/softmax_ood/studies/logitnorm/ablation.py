"""The tau ablation of the LogitNorm study (the paper's Fig. 5), shared by its table and figure.

Kept apart from :mod:`.tables` so that the figure does not depend on the tables module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...analysis.seeds import cells, frame, require, seed_average, study_frames

__all__ = ["OOD_METRICS", "tau_ablation"]

#: OOD metrics of the paper's tables -> input column in ``ood`` ("AUPR" is AUPR-In).
OOD_METRICS = {"fpr95": "fpr95", "auroc": "auroc", "aupr": "aupr_in"}


def _ablation_losses(ood: pd.DataFrame, spec: dict) -> list[str]:
    """Loss-variant names of the tau ablation (numbers are matched on the method's tau)."""
    arch, names = spec["main_arch"], []
    for entry in spec["tau_ablation"]:
        if isinstance(entry, str):
            names.append(entry)
            continue
        fam = ood.loc[ood["loss"] == spec["method"], "loss_family"]
        family = fam.iloc[0] if len(fam) else "logitnorm"
        sel = ood[
            (ood["arch"] == arch)
            & (ood["loss_family"] == family)
            & np.isclose(ood["tau"].astype(float), float(entry))
        ]
        if sel.empty:
            raise ValueError(
                f"The ood frame has no LogitNorm runs with tau {entry:g} on architecture {arch!r}."
            )
        names.append(sorted(sel["loss"].unique())[0])
    return names


def tau_ablation(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Fig. 5 data: per tau variant, MSP FPR95 (%) averaged over test sets and over val sets.

    Columns: ``loss, tau, fpr95_mean, fpr95_std, val_fpr95_mean, val_fpr95_std, n_seeds,
    selected`` (``selected`` marks the tau with the lowest mean validation FPR95, the paper's
    selection rule; ties go to the smaller tau). Sorted by tau.
    """
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    losses = _ablation_losses(ood, spec)
    require(ood, "loss", losses, "ood", "tau-ablation loss(es)")
    rows = []
    for loss in losses:
        taus = ood.loc[(ood["loss"] == loss) & (ood["arch"] == arch), "tau"].astype(float)
        taus = taus.dropna().unique()
        if len(taus) != 1:
            raise ValueError(f"The ood frame has no single tau for loss {loss!r} (found {taus}).")
        vals = {
            "fpr95": seed_average(ood, arch, loss, "msp", "fpr95"),
            "val_fpr95": seed_average(ood, arch, loss, "msp", "fpr95", split="val"),
        }
        rows.append({"loss": loss, "tau": float(taus[0]), **cells(vals)})
    df = frame(rows).sort_values("tau", kind="stable").reset_index(drop=True)
    best = df["val_fpr95_mean"].idxmin() if df["val_fpr95_mean"].notna().any() else None
    df["selected"] = df.index == best
    return df
