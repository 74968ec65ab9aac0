"""The GPU path, tested on the CPU: the execution settings (config ``device`` and ``gpu:``) flow
from the config to training and evaluation and into the records; bf16 autocast and
channels_last run (torch supports both on the CPU); every tensor the training loop makes follows
the data's device. Not testable here (no GPU): CUDA kernels, cuBLAS/cuDNN determinism and speed
(``workflow/bench/bench_gpu.py`` on a GPU machine)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
import yaml

from softmax_ood.config import validate_config
from softmax_ood.evaluation import evaluate_run
from softmax_ood.experiment import (
    CUBLAS_WORKSPACE,
    Execution,
    resolve_device,
    save_checkpoint,
    train_run,
)
from softmax_ood.losses import build_loss
from softmax_ood.models import create_model
from softmax_ood.studies.registry import registered_studies
from softmax_ood.train import GlobalMean, TrainConfig, deterministic_on_cuda, fit, predict_logits

ROOT = Path(__file__).resolve().parents[1]
STUDIES = registered_studies()
CNN = {"family": "cnn"}
RECIPE = {
    "epochs": 2,
    "batch_size": 32,
    "optimizer": "sgd",
    "lr": 0.05,
    "momentum": 0.9,
    "weight_decay": 5e-4,
    "augment": "crop_flip",
    "checkpoint": "best_val_acc",
    "monitor_size": 8,
    "monitor_set": "textures",
}
RUN = dict(
    arch_name="cnn",
    arch_cfg=CNN,
    loss_name="ce",
    loss_cfg={"loss": "ce"},
    recipe_name="r",
    train_cfg=RECIPE,
    seed=1,
)


def test_execution_parses_a_device_name_or_the_settings():
    assert Execution.parse("cpu") == Execution() and Execution.parse(None).is_default()
    ex = Execution.parse({"device": "cuda", "bf16_autocast": True, "channels_last": False})
    assert ex.record() == {"device": "cuda", "bf16_autocast": True, "channels_last": False}
    assert not ex.is_default()
    with pytest.raises(ValueError, match="unknown execution setting"):
        Execution.parse({"device": "cpu", "bf16": True})


def test_config_compute_section_validates_with_channels_last_on_by_default():
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    schema = ROOT / "workflow/schemas/config.schema.yaml"
    out = validate_config(copy.deepcopy(cfg), schema, STUDIES)
    assert out["compute"] == {"bf16_autocast": False, "channels_last": True}
    off = {**copy.deepcopy(cfg), "compute": {}}
    assert validate_config(off, schema, STUDIES)["compute"] == {
        "bf16_autocast": False,
        "channels_last": False,
    }
    with pytest.raises(Exception, match="bf16"):
        validate_config({**copy.deepcopy(cfg), "compute": {"bf16": True}}, schema, STUDIES)


def test_the_rules_device_param_is_the_name_alone_while_the_options_are_off():
    """rules/common.smk: existing runs keep their params (no rerun) unless an option is on."""
    text = (ROOT / "rules/common.smk").read_text()
    assert 'if any(config["compute"].values())' in text
    for rule in ("rules/train.smk", "rules/evaluate.smk"):
        assert "device=EXECUTION," in (ROOT / rule).read_text()


def test_cuda_sets_the_deterministic_cublas_workspace(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA GPU"):
        resolve_device("cuda")
    import os

    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("cuda") == torch.device("cuda")  # no CUDA call is made
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == CUBLAS_WORKSPACE


def _tiny():
    torch.manual_seed(0)
    x = torch.randn(70, 1, 8, 8)
    y = torch.randint(0, 3, (70,))
    cfg = TrainConfig.from_dict({**RECIPE, "monitor_set": None})
    return x, y, cfg


def test_every_tensor_the_loop_makes_follows_the_data_device():
    """Under a default device of ``meta`` any tensor made without an explicit device (or one
    drawn from the CPU generator without saying so) lands on ``meta`` and the loop fails: a CPU
    run passing here makes no tensor on the default device, so on CUDA none stays behind on
    the host."""
    x, y, cfg = _tiny()
    model = create_model("cnn", num_classes=3, in_chans=1, image_size=8)
    ref = copy.deepcopy(model)
    with torch.device("meta"):
        _, curve, _ = fit(
            model,
            build_loss("ce", {}),
            x,
            y,
            x[:20],
            y[:20],
            cfg=cfg,
            seed=0,
            monitor_ood=x[:8],
            bf16=True,
            channels_last=True,
        )
    assert torch.isfinite(torch.tensor([r["train_loss"] for r in curve])).all()
    with torch.device("meta"):
        out = predict_logits(ref, x, 16, bf16=True, channels_last=True)
    assert out.device.type == "cpu" and out.dtype == torch.float32


def test_bf16_autocast_and_channels_last_are_really_applied_and_change_the_bytes():
    x, y, cfg = _tiny()
    seen = {}

    def hook(_module, _inp, out):
        seen.setdefault("dtype", out.dtype)
        seen.setdefault("cl", out.is_contiguous(memory_format=torch.channels_last))

    results = {}
    for opts in ({}, {"bf16": True}, {"channels_last": True}):
        model = create_model("cnn", num_classes=3, in_chans=1, image_size=8)
        torch.manual_seed(0)
        model.load_state_dict(
            create_model("cnn", num_classes=3, in_chans=1, image_size=8).state_dict()
        )
        conv = next(m for m in model.modules() if isinstance(m, torch.nn.Conv2d))
        seen.clear()
        handle = conv.register_forward_hook(hook)
        model, curve, _ = fit(
            model, build_loss("ce", {}), x, y, x[:20], y[:20], cfg=cfg, seed=0, **opts
        )
        handle.remove()
        results[tuple(opts)] = (dict(seen), curve, model)
    (d0, c0, m0), (d1, c1, _), (d2, c2, m2) = results.values()
    assert d0 == {"dtype": torch.float32, "cl": False}
    assert d1["dtype"] == torch.bfloat16  # autocast on
    assert d2["cl"] is True  # channels-last activations
    assert c1 != c0  # bf16 changes the numbers (hence off by default)
    # the kept model is back in the standard layout (checkpoints do not depend on the option)
    assert all(p.is_contiguous() for p in m2.parameters())


def test_options_are_recorded_in_checkpoint_and_summary_only_when_on(embedded_data, tmp_path):
    _, _, plain = train_run(embedded_data, **RUN)
    assert "execution" not in plain
    ex = {"device": "cpu", "bf16_autocast": True, "channels_last": True}
    model, _, spec = train_run(embedded_data, **RUN, device=ex)
    assert spec["execution"] == ex
    save_checkpoint(tmp_path / "m.pt", model, spec)
    kw = dict(
        scores_cfg={"msp": {}, "energy": {}, "odin": {"temperature": 1000.0, "eps": 0.0014}},
        score_overrides={},
        batch_size=50,
    )
    summary = evaluate_run(
        tmp_path / "m.pt", embedded_data, device={"device": "cpu", "channels_last": True}, **kw
    ).summary
    assert summary["execution"] == {"device": "cpu", "bf16_autocast": False, "channels_last": True}
    plain_summary = evaluate_run(tmp_path / "m.pt", embedded_data, **kw).summary
    assert "execution" not in plain_summary
    # channels_last moves layouts, not values: the metrics agree to float32 rounding
    for a, b in zip(summary["ood"], plain_summary["ood"], strict=True):
        assert a["auroc"] == pytest.approx(b["auroc"], abs=1e-3)


@pytest.mark.parametrize(
    "family,kw",
    [
        ("wrn", {"depth": 10, "widen_factor": 1}),
        ("resnet", {"depth": 8}),
        ("densenet", {"depth": 10}),
        ("cnn", {}),
    ],
)
def test_the_cuda_pooling_swap_keeps_values_and_weights(family, kw):
    """CUDA has no deterministic backward for AdaptiveAvgPool2d (it raises under the
    pipeline's deterministic setting), so training and evaluation on CUDA swap it for a mean
    over height and width: same outputs, same gradients, same state_dict."""
    torch.manual_seed(0)
    model = create_model(family, num_classes=3, in_chans=1, image_size=8, **kw).eval()
    x = torch.randn(4, 1, 8, 8, requires_grad=True)
    ref = model(x)
    (gref,) = torch.autograd.grad(ref.sum(), x)
    keys = list(model.state_dict())
    swapped = deterministic_on_cuda(model)
    assert not any(isinstance(m, torch.nn.AdaptiveAvgPool2d) for m in swapped.modules())
    assert any(isinstance(m, GlobalMean) for m in swapped.modules())
    out = swapped(x)
    (g,) = torch.autograd.grad(out.sum(), x)
    assert torch.allclose(out, ref, atol=1e-6) and torch.allclose(g, gref, atol=1e-6)
    assert list(swapped.state_dict()) == keys
