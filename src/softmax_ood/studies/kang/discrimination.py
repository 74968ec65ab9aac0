"""OOD scores of the shift grid's evaluation sets (Kang et al. Sec. 3.2, App. B.3).

One call scores every evaluation set of one *group* (a shift type, the clean ID split, or the far
OOD sets) with :func:`softmax_ood.discriminator.ood_score`: the featurizer (independent of every
studied model) maps the ID reference split and each set to features, and a logistic-regression
discriminator is fitted per set on balanced random splits, ``n_repeats`` times. The result does
not depend on any trained model, so the workflow fits it once per (featurizer, group).
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

__all__ = ["COLUMNS", "score_group"]

COLUMNS = [
    "featurizer",
    "eval_set",
    "shift",
    "group",
    "level",
    "is_id",
    "ood_score",
    "ood_score_std",
    "n_repeats",
    "n_fit_per_class",
    "n_heldout",
    "per_repeat",
]


def score_group(
    x_id: np.ndarray,
    x_grid: np.ndarray,
    index: pd.DataFrame,
    group: str,
    *,
    featurizer: dict,
    discriminator: dict,
) -> pd.DataFrame:
    """One row per evaluation set of ``group`` (columns :data:`COLUMNS`).

    :param x_id: ID reference images ``(n, C, H, W)`` in ``[0, 1]`` (the training split).
    :param x_grid, index: the shift grid (:func:`softmax_ood.studies.kang.grid.build_grid`).
    :param featurizer: ``{"name": ..., "params": {...}}``.
    :param discriminator: ``n_repeats``, ``seed``, ``heldout_fraction``, ``C``.
    :raises ValueError: ``group`` has no evaluation set.
    """
    from ...discriminator import build_featurizer, ood_score

    sets = index[index["group"] == group]
    if sets.empty:
        raise ValueError(
            f"the shift grid has no evaluation set in group {group!r}; groups: "
            f"{', '.join(dict.fromkeys(index['group']))}"
        )
    feat = build_featurizer(featurizer["name"], featurizer.get("params") or {})
    f_id = feat(x_id)
    rows = []
    for r in sets.itertuples(index=False):
        # one stream per evaluation set, independent of the group it is computed in
        set_seed = int(discriminator.get("seed", 0)) * 2**32 + zlib.crc32(r.eval_set.encode())
        res = ood_score(
            f_id,
            feat(x_grid[r.start : r.stop]),
            n_repeats=int(discriminator["n_repeats"]),
            seed=set_seed,
            heldout_fraction=float(discriminator.get("heldout_fraction", 0.5)),
            C=float(discriminator.get("C", 1.0)),
        )
        rows.append(
            {
                "featurizer": featurizer["name"],
                "eval_set": r.eval_set,
                "shift": r.shift,
                "group": r.group,
                "level": float(r.level),
                "is_id": bool(r.is_id),
                "ood_score": res.mean,
                "ood_score_std": res.std,
                "n_repeats": len(res.per_repeat),
                "n_fit_per_class": res.n_fit_per_class,
                "n_heldout": res.n_heldout,
                "per_repeat": list(res.per_repeat),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
