"""Penultimate features of a saved checkpoint, read back per split."""

from __future__ import annotations

import numpy as np
import pytest

from softmax_ood.studies.seddik.features import (
    extract_features,
    extract_network_features,
    network_features,
    num_classes,
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from softmax_ood.experiment import build_run, save_checkpoint

    meta = {"num_classes": 10, "channels": 1, "image_size": 8, "mean": [0.3], "std": [0.4]}
    arch, loss = {"family": "mlp", "hidden": [16], "drop_rate": 0.0}, {"loss": "ce"}
    spec = {"arch_cfg": arch, "loss_cfg": loss, "meta": meta}
    import torch

    torch.manual_seed(0)
    model, _ = build_run(arch, loss, meta)
    path = tmp_path_factory.mktemp("ckpt") / "model.pt"
    save_checkpoint(path, model, spec)
    return path


def test_features_per_split(checkpoint, embedded_data):
    f = extract_features(checkpoint, embedded_data, ["val", "test"])
    assert set(f["split"]) == {"val", "test"} and num_classes(f) == 10
    val = f[f["split"] == "val"]
    X, y = val.filter(regex=r"^f\d+$").to_numpy(float), val["label"].to_numpy(int)
    assert X.shape[1] == 16 and len(X) == len(y) and set(np.unique(y)) <= set(range(10))
    again = extract_features(checkpoint, embedded_data, ["val", "test"])
    assert f.equals(again)


def test_unknown_split(checkpoint, embedded_data):
    with pytest.raises(ValueError, match="unknown ID split"):
        extract_features(checkpoint, embedded_data, ["holdout"])


def test_network_features_pool_every_split(checkpoint, embedded_data):
    f = extract_network_features({2: checkpoint, 0: checkpoint}, embedded_data, ["val", "test"])
    assert list(f["seed"].unique()) == [0, 2]
    X, y, split = network_features(f, 2)
    assert len(X) == len(y) == len(split) == (f["seed"] == 2).sum()
    assert set(split) == {"val", "test"}
    with pytest.raises(ValueError, match="no rows for the network of seed 5"):
        network_features(f, 5)
