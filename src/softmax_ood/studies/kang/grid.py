"""The shift grid of the Kang study: the held-out ID split under every configured corruption at
every severity and under rotations, plus far OOD sets, as one stacked image array and an index.

Evaluation sets (``index`` rows, in this order):

* ``id`` -- the clean ID test split (level 0 of every shift type, the held-out ID point);
* ``<corruption>@<severity>`` -- :func:`softmax_ood.corruptions.corrupt` of the test split
  (``seed = corruption_seed`` at every severity: common random numbers);
* ``rotation@<angle>`` -- :func:`softmax_ood.corruptions.rotate` of the test split,
  ``rotation@0`` included (bit-identical to ``id``: rotation by 0 is the identity, and the other
  angles are interpolated band-limited, by Fourier shears, so a +t/-t round trip scores as clean:
  the discriminator's ``rotation_roundtrip`` rows measure that);
* ``far:<name>`` -- an OOD test set of the prepared data (no labels).

Each graded set also records how much it changes the images: ``change`` = mean over images of
the mean absolute pixel difference to the level below (level 1: the level-0 set of its shift
type), and ``change_per_image`` (the per-image values, the samples of the "level changes the
images" premise).

Images are stored un-normalised in ``[0, 1]`` (what the corruptions and the featurizers take);
models normalise them with their checkpoint's mean and std. Labels of the far sets are ``-1``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["INDEX_COLUMNS", "build_grid", "grid_sets", "raw_split"]

INDEX_COLUMNS = [
    "eval_set",
    "shift",
    "group",
    "level",
    "start",
    "stop",
    "labelled",
    "is_id",
    "change",
    "change_per_image",
]
ID_SET = "id"


def grid_sets(spec: dict) -> list[dict[str, Any]]:
    """The evaluation sets of ``spec`` (the study section) without their images."""
    sets = [{"eval_set": ID_SET, "shift": "none", "group": "id", "level": 0.0}]
    for name in spec["corruptions"]:
        for sev in sorted(spec["severities"]):
            sets.append({"eval_set": f"{name}@{sev}", "shift": name, "group": name, "level": sev})
    for angle in [0.0, *sorted(spec["rotations"])] if spec["rotations"] else []:
        sets.append(
            {
                "eval_set": f"rotation@{angle:g}",
                "shift": "rotation",
                "group": "rotation",
                "level": float(angle),
            }
        )
    for name in spec["far_ood"]:
        sets.append(
            {"eval_set": f"far:{name}", "shift": "far_ood", "group": "far_ood", "level": np.nan}
        )
    for s in sets:
        s["level"] = float(s["level"])
    return sets


def raw_split(data_dir: Path | str, name: str) -> np.ndarray:
    """Un-normalised images of a prepared split: ``id_<split>`` or ``ood_<set>``."""
    x = np.load(Path(data_dir) / f"{name}_x.npy", allow_pickle=False)
    return np.asarray(x, dtype=np.float32)


def build_grid(
    data_dir: Path | str, spec: dict, split: str = "test"
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """``(x, y, index)``: stacked float32 images ``(M, C, H, W)`` in ``[0, 1]``, int64 labels
    ``(M,)`` (-1 = unlabelled) and one index row per evaluation set (:data:`INDEX_COLUMNS`).

    :param split: the ID split that is shifted (``test``: what the models and the OOD score are
        measured on; ``val``: held-out data on which the discriminator's regularisation is
        chosen)."""
    from ...corruptions import corrupt, rotate

    data_dir = Path(data_dir)
    meta = json.loads((data_dir / "meta.json").read_text())
    x_test = raw_split(data_dir, f"id_{split}")
    y_test = np.load(data_dir / f"id_{split}_y.npy", allow_pickle=False).astype(np.int64)
    lo, hi = float(x_test.min()), float(x_test.max())
    if lo < 0.0 or hi > 1.0:
        raise ValueError(
            f"the prepared ID images of {meta.get('id_dataset')} lie in [{lo:.3g}, {hi:.3g}]; "
            "the shift grid needs un-normalised images in [0, 1]"
        )
    n_max = spec.get("eval_size")
    if n_max is not None:  # the first n test images (paper scale: memory)
        x_test, y_test = x_test[: int(n_max)], y_test[: int(n_max)]
    source = spec.get("corruption_source", "generate")
    ref = int(spec.get("reference_size", 32))
    seed = int(spec.get("corruption_seed", 0))
    xs, ys, rows = [], [], []
    start = 0
    below: dict[str, np.ndarray] = {}  # the previous level's images per shift type
    for s in grid_sets(spec):
        if s["shift"] == "none":
            xi, yi = x_test, y_test
        elif s["shift"] == "rotation":
            xi, yi = rotate(x_test, s["level"]), y_test
        elif s["shift"] == "far_ood":
            xi = raw_split(data_dir, f"ood_{s['eval_set'].removeprefix('far:')}")
            yi = np.full(len(xi), -1, dtype=np.int64)
        elif source == "cifar10c":  # the published CIFAR-10-C images of the same test images
            from ...paper_data import read_cifar_c

            raw, yi = read_cifar_c(spec["corruption_dir"], s["shift"], int(s["level"]))
            xi = raw[: len(x_test)].transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255)
            yi = yi[: len(x_test)]
            if not np.array_equal(yi, y_test):
                raise ValueError(
                    f"CIFAR-10-C labels of {s['eval_set']} differ from the prepared test labels; "
                    "the ID test split must be the official CIFAR-10 test set in its order"
                )
        else:
            xi = corrupt(x_test, s["shift"], int(s["level"]), seed, reference_size=ref)
            yi = y_test
        xi = np.asarray(xi, dtype=np.float32)
        change, per_image = np.nan, []
        graded = s["shift"] not in ("none", "far_ood")
        if graded:  # rotation@0 against the clean images: 0 (rotation by 0 is the identity)
            prev = below.get(s["shift"], x_test)
            d = np.abs(xi.astype(np.float64) - prev.astype(np.float64))
            per_image = d.reshape(len(d), -1).mean(axis=1).tolist()
            change = float(np.mean(per_image))
        if graded:
            below[s["shift"]] = xi
        xs.append(xi)
        ys.append(yi)
        rows.append(
            {
                **s,
                "start": start,
                "stop": start + len(xi),
                "labelled": s["shift"] != "far_ood",
                "is_id": s["shift"] == "none",
                "change": change,
                "change_per_image": per_image,
            }
        )
        start += len(xi)
    index = pd.DataFrame(rows, columns=INDEX_COLUMNS)
    return np.concatenate(xs), np.concatenate(ys), index
