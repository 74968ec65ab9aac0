"""Near, far and trivial OOD sets of the LogitNorm study, kept apart so tables and claims share
them."""

from __future__ import annotations

import pandas as pd

__all__ = ["far_near"]


def far_near(ood: pd.DataFrame, spec: dict) -> dict[str, pd.DataFrame]:
    """``{"far": ..., "near": ..., "trivial": ...}``: the ``ood`` rows of the far test sets the
    pixel-statistics floor does not solve (the headline), of the near test sets
    (``spec['near_ood']``) and of the far sets it does solve (column ``trivial``, set by
    :func:`.frames.mark_trivial`; reported, never in the headline average). Validation rows
    (tuning only) go with every part. A part without test rows is left out (``far`` too, when
    the floor solves every far set)."""
    near_sets = set(spec.get("near_ood") or [])
    test = ood["split"] == "test"
    is_near = ood["ood_set"].isin(near_sets) & test
    trivial = ood["trivial"].astype(bool) if "trivial" in ood else pd.Series(False, ood.index)
    is_trivial = trivial & test & ~is_near
    val = ~test
    far = ~is_near & ~is_trivial
    out = {"far": ood[far]} if (far & test).any() else {}
    if is_near.any():
        out["near"] = ood[is_near | val]
    if is_trivial.any():
        out["trivial"] = ood[is_trivial | val]
    return out
