"""The pixel-statistics floor of every OOD set of a prepared dataset, as a table.

Kept apart from the data modules on purpose: data preparation must not import the claims engine
(code inputs are derived from imports, so an edit of the engine would rerun every preparation,
training and evaluation).

    python -m softmax_ood.analysis.floor_report data/fashion
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["floor_table"]


def floor_table(data_dir: Path | str, *, reference_size: int = 10000):
    """The pixel-statistics floor (:func:`softmax_ood.analysis.premises.pixel_floor`) of every
    OOD set of a prepared dataset: ID test images vs the set, statistics referenced to (the
    first ``reference_size``) ID training images. One row per set: kind (test/val), images,
    the best detector's FPR95 (%, ID positive) and AUROC, its name, and each detector's FPR95."""
    import json

    import pandas as pd

    from .pixelfloor import pixel_floor

    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())

    def load(name: str) -> np.ndarray:
        return np.load(data_dir / f"{name}.npy", mmap_mode="r")[:, 0]

    ref = np.asarray(load("id_train_x")[:reference_size])
    ident = np.asarray(load("id_test_x"))
    rows = []
    for kind, prefix, names in (
        ("test", "ood", meta["ood_test"]),
        ("val", "oodval", meta["ood_val"]),
    ):
        for name in names:
            x = np.asarray(load(f"{prefix}_{name}_x"))
            r = pixel_floor(ident, x, reference=ref)
            rows.append(
                {
                    "set": name,
                    "kind": kind,
                    "images": len(x),
                    "floor_fpr95": round(r["fpr95"], 1),
                    "floor_auroc": round(r["auroc"], 3),
                    "detector": r["detector"],
                    **{f"fpr95_{k}": round(v[0], 1) for k, v in r["per_detector"].items()},
                }
            )
    return pd.DataFrame(rows)


if (
    __name__ == "__main__"
):  # python -m softmax_ood.analysis.floor_report [data/fashion]: the floor table
    import sys

    table = floor_table(sys.argv[1] if len(sys.argv) > 1 else "data/fashion")
    print(table.to_string(index=False))
