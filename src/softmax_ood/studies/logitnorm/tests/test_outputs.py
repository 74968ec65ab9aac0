"""The softmax frame of Figs. 2 and 3 (:mod:`softmax_ood.studies.logitnorm.outputs`): seeded
subsets, the models' softmax outputs on them, the t-SNE, on two untrained tiny models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from softmax_ood.errors import ArtifactError
from softmax_ood.experiment import build_run, save_checkpoint
from softmax_ood.studies.logitnorm.outputs import softmax_frame, subset, tsne
from softmax_ood.studies.logitnorm.shared import prob_columns

SECTION = {"seed": 3, "id_images": 12, "ood_images": 5, "perplexity": 30.0}
SETS = ["textures", "photos"]


def test_subset_is_seeded_per_set_in_drawn_order_and_capped():
    a = subset(100, 10, 0, "textures")
    assert np.array_equal(a, subset(100, 10, 0, "textures"))  # same seed and set: same images
    assert len(set(a)) == 10 and not np.array_equal(a, np.sort(a))  # drawn order, not sorted
    assert not np.array_equal(a, subset(100, 10, 0, "photos"))  # each set its own stream
    assert not np.array_equal(a, subset(100, 10, 1, "textures"))
    assert sorted(subset(4, 10, 0, "x")) == [0, 1, 2, 3]  # at most the set's size


def test_tsne_is_deterministic_and_caps_the_perplexity():
    rng = np.random.default_rng(0)
    x = rng.dirichlet(np.ones(4), size=20)
    a = tsne(x, seed=0, perplexity=30.0)  # 30 >= 20 points: capped, not an error
    assert a.shape == (20, 2) and np.isfinite(a).all()
    assert np.array_equal(a, tsne(x, seed=0, perplexity=30.0))
    with pytest.raises(ValueError, match="at least 3 points"):
        tsne(x[:2], seed=0, perplexity=1.0)


def _checkpoints(data_dir, root, seed=0):
    """Untrained MLPs saved as CE and LogitNorm runs of ``seed`` (different weights)."""
    import json

    meta = json.loads((data_dir / "meta.json").read_text())
    arch = {"family": "mlp", "hidden": [16], "drop_rate": 0.0}
    out = {}
    for i, loss in enumerate(("ce", "logitnorm")):
        torch.manual_seed(i)
        model, _ = build_run(arch, {"loss": "ce"}, meta)
        path = root / f"digits/sgd/mlp/{loss}/seed{seed}/model.pt"
        path.parent.mkdir(parents=True)
        spec = {
            "arch_cfg": arch,
            "loss_cfg": {"loss": "ce"},
            "meta": meta,
            **{"dataset": "digits", "recipe": "sgd", "arch": "mlp", "loss": loss, "seed": seed},
        }
        save_checkpoint(path, model, spec)
        out[loss] = path
    return out


def test_softmax_frame_on_two_tiny_models(embedded_data, tmp_path):
    from softmax_ood.data import load_prepared

    ckpts = _checkpoints(embedded_data, tmp_path)
    f = softmax_frame(ckpts, embedded_data, SETS, SECTION)
    probs = prob_columns(f.columns)
    data = load_prepared(embedded_data)
    assert len(probs) == data.meta["num_classes"]
    assert list(pd.unique(f["loss"])) == ["ce", "logitnorm"]
    assert list(pd.unique(f["set"])) == ["id", *SETS]
    for _, g in f.groupby("loss"):
        assert g.groupby("set").size().to_dict() == {"id": 12, "textures": 5, "photos": 5}
        assert (
            (g["recipe"] == "sgd").all() and (g["arch"] == "mlp").all() and (g["seed"] == 0).all()
        )
    # the same images for both losses, in the subsets' drawn order
    ce, ln = (f[f["loss"] == k].reset_index(drop=True) for k in ("ce", "logitnorm"))
    assert ce[["set", "order", "image"]].equals(ln[["set", "order", "image"]])
    ids = ce[ce["set"] == "id"]
    assert list(ids["image"]) == list(subset(len(data.x["test"]), 12, 3, "id"))
    assert list(ids["order"]) == list(range(12))
    assert np.array_equal(ids["label"], data.y["test"].numpy()[ids["image"]])
    assert (ce.loc[ce["set"] != "id", "label"] == -1).all()
    # softmax rows: probabilities; the two (different) models give different outputs
    assert np.allclose(f[probs].sum(axis=1), 1.0) and (f[probs] >= 0).all().all()
    assert not np.allclose(ce[probs], ln[probs])
    assert np.isfinite(f[["tsne_x", "tsne_y"]]).all().all()
    # the same inputs give the same frame (what the rule's golden digest needs)
    again = softmax_frame(ckpts, embedded_data, SETS, SECTION)
    pd.testing.assert_frame_equal(f, again)


def test_softmax_frame_refuses_a_set_the_data_lack_and_a_foreign_checkpoint(
    embedded_data, tmp_path
):
    ckpts = _checkpoints(embedded_data, tmp_path)
    with pytest.raises(ValueError, match="no OOD test set 'svhn'"):
        softmax_frame(ckpts, embedded_data, ["svhn"], SECTION)
    moved = tmp_path / "digits/sgd/mlp/ce/seed1/model.pt"  # seed 0's model under seed 1
    moved.parent.mkdir(parents=True)
    moved.write_bytes(ckpts["ce"].read_bytes())
    with pytest.raises(ArtifactError, match="not the run"):
        softmax_frame({"ce": moved}, embedded_data, SETS, SECTION)
