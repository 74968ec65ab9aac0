"""One run's glue: model/loss building, training on a device, checkpoints, evaluation."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from softmax_ood.errors import ArtifactError
from softmax_ood.evaluation import evaluate_run, scores_for
from softmax_ood.experiment import (
    CKPT_FORMAT,
    build_run,
    load_checkpoint,
    resolve_device,
    save_checkpoint,
    settings_digest,
    train_run,
)
from softmax_ood.provenance import write_bytes_atomic

META = {"num_classes": 10, "channels": 1, "image_size": 8}
MLP = {"family": "mlp", "hidden": [16], "drop_rate": 0.0}
RECIPE = {
    "epochs": 2,
    "batch_size": 64,
    "optimizer": "adam",
    "lr": 0.01,
    "weight_decay": 0.0,
    "checkpoint": "last",
    "monitor_size": 8,
    "monitor_set": "textures",
}
SCORES = {
    "msp": {},
    "energy": {},
    "gradnorm": {},
    "godin": {},
    "odin": {"temperature": 1000.0, "eps": 0.0014},
}


def test_the_loss_decides_head_and_outputs():
    model, _ = build_run(MLP, {"loss": "ce"}, META)
    assert model.get_classifier().out_features == 10
    model, _ = build_run(MLP, {"loss": "godin"}, META)
    assert hasattr(model.get_classifier(), "cosine")
    rewards = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}
    model, _ = build_run(MLP, {"loss": "reward_mse", **rewards}, META)
    assert model(torch.zeros(3, 1, 8, 8)).shape == (3, 11)  # k + abstain
    model, _ = build_run(MLP, {"loss": "gaussian_nll"}, META)
    assert model(torch.zeros(3, 1, 8, 8)).shape == (3, 2)  # mean, std


def test_device_cuda_without_gpu_is_one_sentence(monkeypatch):
    assert resolve_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="asks for device 'cuda' but torch sees no CUDA GPU"):
        resolve_device("cuda")


def test_checkpoint_round_trip_and_format_check(tmp_path):
    model, _ = build_run(MLP, {"loss": "ce"}, META)
    spec = {"arch_cfg": MLP, "loss_cfg": {"loss": "ce"}, "meta": META, "seed": 0}
    save_checkpoint(tmp_path / "m.pt", model, spec)
    again, got = load_checkpoint(tmp_path / "m.pt")
    assert got == spec and not again.training
    for k, v in model.state_dict().items():
        torch.testing.assert_close(again.state_dict()[k], v)
    buf = io.BytesIO()
    torch.save({"format": CKPT_FORMAT + 1, "spec": spec, "state_dict": {}}, buf)
    write_bytes_atomic(tmp_path / "old.pt", buf.getvalue())
    with pytest.raises(ValueError, match="is not a checkpoint of format"):
        load_checkpoint(tmp_path / "old.pt")


def test_scores_follow_the_registry_not_names():
    linear, _ = build_run(MLP, {"loss": "ce"}, META)
    godin, _ = build_run(MLP, {"loss": "godin"}, META)
    over = {"ce": {"energy": {"temperature": 0.5}}}
    assert list(scores_for(linear, "ce", SCORES, over)) == ["msp", "energy", "gradnorm", "odin"]
    assert scores_for(linear, "ce", SCORES, over)["energy"][1] == {"temperature": 0.5}
    assert list(scores_for(godin, "godin", SCORES, over)) == ["msp", "energy", "godin", "odin"]


def test_train_and_evaluate_one_run(embedded_data, tmp_path):
    kw = dict(
        arch_name="mlp",
        arch_cfg=MLP,
        loss_name="ce",
        loss_cfg={"loss": "ce"},
        recipe_name="r",
        train_cfg=RECIPE,
        seed=3,
    )
    model, curve, spec = train_run(embedded_data, **kw)
    assert [row["epoch"] for row in curve] == [1, 2]
    assert spec["recipe"] == "r" and spec["seed"] == 3 and spec["monitor_set"] == "textures"
    again, _, _ = train_run(embedded_data, **kw)  # deterministic for the seed
    for k, v in model.state_dict().items():
        assert torch.equal(again.state_dict()[k], v)
    save_checkpoint(tmp_path / "m.pt", model, spec)
    evaluation = evaluate_run(
        tmp_path / "m.pt", embedded_data, scores_cfg=SCORES, score_overrides={}, batch_size=50
    )
    summary, samples = evaluation.summary, evaluation.samples
    assert evaluation.images is None
    assert summary["run"]["recipe"] == "r" and 0.0 <= summary["metrics"]["accuracy"] <= 1.0
    assert summary["metrics"]["temperature"] > 0
    sets = {"textures", "photos", "characters", "gaussian", "uniform", "gaussian_val"}
    assert {r["ood_set"] for r in summary["ood"]} == sets
    assert {r["score"] for r in summary["ood"]} == {"msp", "energy", "gradnorm", "odin"}
    assert {r["split"] for r in summary["ood"] if r["ood_set"] == "gaussian_val"} == {"val"}
    assert set(samples) == {"id"} | (sets - {"gaussian_val"})
    assert all(s.dtype == np.float64 for s in samples.values())
    # per image: every score on every test set, and the ECE after TS recomputes from them
    images = evaluate_run(
        tmp_path / "m.pt",
        embedded_data,
        scores_cfg=SCORES,
        score_overrides={},
        batch_size=50,
        per_image=True,
    ).images
    from softmax_ood.calibration import ece
    from softmax_ood.studies.logitnorm.evidence import fpr95_first

    assert {s for s, _ in images} == {"msp", "energy", "gradnorm", "odin", "msp_ts", "correct"}
    # the per-image MSP is its float64 log-odds: the same ranking, no ties at MSP = 1.0
    lo = images[("msp", "id")]
    assert lo.dtype == np.float64
    np.testing.assert_allclose(1.0 / (1.0 + np.exp(-lo)), samples["id"], rtol=1e-12)
    for r in summary["ood"]:
        if r["split"] == "test":
            got = fpr95_first(images[(r["score"], "id")], images[(r["score"], r["ood_set"])])
            assert got == pytest.approx(100 * r["fpr95"])
    conf, right = images[("msp_ts", "id")], images[("correct", "id")].astype(int)
    assert ece(conf, right, np.ones_like(right)) == pytest.approx(summary["metrics"]["ece_ts"])
    # batch size does not change any number
    other = evaluate_run(
        tmp_path / "m.pt", embedded_data, scores_cfg=SCORES, score_overrides={}, batch_size=7
    ).summary
    for a, b in zip(summary["ood"], other["ood"], strict=True):
        assert a["fpr95"] == pytest.approx(b["fpr95"]) and a["auroc"] == pytest.approx(b["auroc"])


# ----------------------------------------------------------------- verified inputs


def _spec(seed=0, **over):
    return {
        "dataset": "digits",
        "recipe": "r",
        "arch": "mlp",
        "loss": "ce",
        "seed": seed,
        "arch_cfg": MLP,
        "loss_cfg": {"loss": "ce"},
        "meta": META,
        "settings_sha256": settings_digest(MLP, {"loss": "ce"}, RECIPE),
        **over,
    }


def test_garbage_checkpoint_is_one_sentence_without_the_unsafe_hint(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"definitely not a checkpoint")
    with pytest.raises(ArtifactError) as err:
        load_checkpoint(path)
    msg = str(err.value)
    assert msg.startswith(f"{path} is not a readable checkpoint (")
    assert msg.endswith(f"rebuild it with: snakemake --cores all --forcerun {path}")
    assert "weights_only" not in msg and "\n" not in msg


def test_a_checkpoint_of_another_run_or_other_settings_is_refused(tmp_path):
    model, _ = build_run(MLP, {"loss": "ce"}, META)
    path = tmp_path / "model.pt"
    save_checkpoint(path, model, _spec(seed=1))
    named = {"dataset": "digits", "recipe": "r", "arch": "mlp", "loss": "ce", "seed": 0}
    with pytest.raises(
        ArtifactError,
        match=r"holds the run digits/r/mlp/ce/seed1, not the run digits/r/mlp/ce/seed0 its "
        r"path names; it is made by the rule 'train'",
    ):
        load_checkpoint(path, expected=named)
    load_checkpoint(path, expected={**named, "seed": 1})  # the right run loads
    other = settings_digest(MLP, {"loss": "ce"}, {**RECIPE, "lr": 0.5})
    with pytest.raises(ArtifactError, match=r"was trained with other .* settings than the"):
        load_checkpoint(path, expected_digest=other)
    load_checkpoint(path, expected_digest=settings_digest(MLP, {"loss": "ce"}, RECIPE))


def test_a_damaged_data_file_is_caught_by_its_recorded_hash(embedded_data, tmp_path):
    import shutil

    from softmax_ood.data import load_prepared

    copy = tmp_path / "digits"
    shutil.copytree(embedded_data, copy)
    load_prepared(copy)  # intact: loads
    target = copy / "id_train_x.npy"
    target.write_bytes(target.read_bytes()[:-100])  # truncated
    with pytest.raises(
        ArtifactError,
        match=r"id_train_x.npy does not match the sha256 recorded in .*meta.json; it is made "
        r"by the rule 'prepare_data'; rebuild it with: snakemake --cores all --forcerun",
    ):
        load_prepared(copy)
