"""The pixel-statistics floor of every OOD set of a prepared dataset, as a table.

Kept apart from the data modules on purpose: data preparation must not import the claims engine
(code inputs are derived from imports, so an edit of the engine would rerun every preparation,
training and evaluation).

    python -m softmax_ood.analysis.floor_report data/fashion
    python -m softmax_ood.analysis.floor_report --battery data/fashion [fraction] [seed]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["battery_table", "floor_table"]


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


def battery_table(data_dir: Path | str, *, selection_fraction: float = 0.5, seed: int = 0):
    """The floor battery (:mod:`.battery`, fitted on every ID training image) on the *selection*
    half of every OOD test set of a prepared dataset -- the images the LogitNorm premise reads
    (:func:`softmax_ood.studies.logitnorm.evidence.split_images` over the ID test images and
    every test set, ``selection_fraction`` and ``seed`` as the study's ``selection_fraction`` and
    ``bootstrap_seed``). One row per set: its group (``meta.json``), images, what the
    blank/duplicate check dropped, the best FPR95 (%, ID positive) of the tuning family, of the
    held-out family and of the whole battery with their detectors, and every detector's FPR95."""
    import json

    import pandas as pd

    from ..studies.logitnorm.evidence import split_images
    from .battery import Battery, battery_result

    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())

    def load(name: str) -> np.ndarray:
        return np.asarray(np.load(data_dir / f"{name}.npy", mmap_mode="r")[:, 0], np.float64)

    images = {"id": load("id_test_x"), **{s: load(f"ood_{s}_x") for s in meta["ood_test"]}}
    sel, _ = split_images({k: len(v) for k, v in images.items()}, selection_fraction, seed)
    battery = Battery.fit(load("id_train_x"))
    s_id = battery.scores(images["id"][sel["id"]])
    rows = []
    for name in meta["ood_test"]:
        r = battery_result(s_id, battery.scores(images[name][sel[name]]))
        src = meta["sources"].get(name, {})
        rows.append(
            {
                "set": name,
                "group": src.get("group", "near" if name == "heldout_classes" else ""),
                "images": len(images[name]),
                "selection": len(sel[name]),
                "dropped": ", ".join(f"{k} {v}" for k, v in src.get("dropped", {}).items()),
                "tuning_fpr95": round(r["tuning_fpr95"], 2),
                "tuning_detector": r["tuning_detector"],
                "heldout_fpr95": round(r["heldout_fpr95"], 2),
                "heldout_detector": r["heldout_detector"],
                "battery_fpr95": round(r["fpr95"], 2),
                **{f"fpr95_{k}": round(v, 1) for k, v in r["per_detector"].items()},
            }
        )
    return pd.DataFrame(rows)


if __name__ == "__main__":  # the floor table, or with --battery the battery's (selection half)
    import sys

    args = sys.argv[1:]
    if args[:1] == ["--battery"]:
        rest = args[1:]
        table = battery_table(
            rest[0] if rest else "data/fashion",
            selection_fraction=float(rest[1]) if len(rest) > 1 else 0.5,
            seed=int(rest[2]) if len(rest) > 2 else 0,
        )
    else:
        table = floor_table(args[0] if args else "data/fashion")
    print(table.to_string(index=False))
