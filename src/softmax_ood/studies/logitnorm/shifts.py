"""Near and far OOD sets of the LogitNorm study, kept apart so tables and claims share them."""

from __future__ import annotations

import pandas as pd

__all__ = ["far_near"]


def far_near(ood: pd.DataFrame, spec: dict) -> dict[str, pd.DataFrame]:
    """``{"far": ..., "near": ...}``: the ``ood`` rows of the far and of the near test sets
    (``spec['near_ood']``); validation rows (tuning only) go with both. ``near`` is left out
    when the study has no near set."""
    near_sets = set(spec.get("near_ood") or [])
    is_near = ood["ood_set"].isin(near_sets) & (ood["split"] == "test")
    out = {"far": ood[~is_near]}
    if is_near.any():
        out["near"] = ood[is_near | (ood["split"] != "test")]
    return out
