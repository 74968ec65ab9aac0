"""Penultimate-layer features of a network trained in the main grid (Fig. 5's stand-in).

The paper's Fig. 5 uses ResNet-18 features of BigGAN images; this pipeline uses the
``forward_features`` output of one of its own trained models (the run named in the config's
``seddik.fig5`` section) on splits of the prepared ID data. Nothing is trained here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "extract_features",
    "extract_network_features",
    "feature_columns",
    "network_features",
    "num_classes",
]


def feature_columns(p: int) -> list[str]:
    return [f"f{j:04d}" for j in range(p)]


def extract_features(checkpoint: Path | str, data_dir: Path | str, splits) -> pd.DataFrame:
    """One row per image of each split in ``splits``: ``split``, ``label``, ``num_classes``
    (the prepared data's, constant), ``f0000...``.

    The model is loaded in eval mode on the CPU; features are computed in one batch per split
    (a fixed batch, so the same bytes every time). Labels must lie in ``0..num_classes-1``
    (``num_classes`` read from the prepared data's ``meta.json``).

    :raises ValueError: an unknown split or a label outside the prepared data's classes.
    """
    import torch

    from ...data import ID_SPLITS, load_prepared
    from ...experiment import load_checkpoint

    splits = list(splits)
    unknown = [s for s in splits if s not in ID_SPLITS]
    if unknown:
        raise ValueError(
            f"unknown ID split(s) {unknown} for Fig. 5 features; allowed: {', '.join(ID_SPLITS)}"
        )
    data = load_prepared(data_dir)
    k = int(data.meta["num_classes"])
    model, _ = load_checkpoint(checkpoint)
    frames = []
    with torch.no_grad():
        for split in splits:
            feats = model.forward_features(data.x[split]).double().numpy()
            labels = data.y[split].numpy().astype(np.int64)
            if labels.size and (labels.min() < 0 or labels.max() >= k):
                raise ValueError(
                    f"the {split} split has labels outside 0..{k - 1} "
                    f"(num_classes {k} in {Path(data_dir) / 'meta.json'})"
                )
            f = pd.DataFrame(feats, columns=feature_columns(feats.shape[1]))
            f.insert(0, "num_classes", k)
            f.insert(0, "label", labels)
            f.insert(0, "split", split)
            frames.append(f)
    return pd.concat(frames, ignore_index=True)


def extract_network_features(
    checkpoints: dict[int, Path | str], data_dir: Path | str, splits
) -> pd.DataFrame:
    """:func:`extract_features` for several networks (training seed -> checkpoint), one frame
    with a leading ``seed`` column (seeds in increasing order)."""
    frames = []
    for seed in sorted(checkpoints):
        f = extract_features(checkpoints[seed], data_dir, splits)
        f.insert(0, "seed", int(seed))
        frames.append(f)
    if not frames:
        raise ValueError("no network checkpoints given for the Fig. 5 features")
    return pd.concat(frames, ignore_index=True)


def network_features(frame: pd.DataFrame, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X (n, p), labels, ID split names)`` of one network of an
    :func:`extract_network_features` frame (every split it holds, in the frame's order)."""
    sel = frame[frame["seed"] == seed]
    if sel.empty:
        raise ValueError(f"the features frame has no rows for the network of seed {seed}")
    cols = [c for c in frame.columns if c.startswith("f") and c[1:].isdigit()]
    return (
        sel[cols].to_numpy(dtype=float),
        sel["label"].to_numpy(dtype=int),
        sel["split"].to_numpy(dtype=str),
    )


def num_classes(frame: pd.DataFrame) -> int:
    """The prepared data's number of classes, as recorded in an :func:`extract_features` frame."""
    return int(frame["num_classes"].iloc[0])
