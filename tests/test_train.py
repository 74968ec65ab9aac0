import math
import re

import pytest
import torch
from torch import nn

from softmax_ood.data import load_prepared
from softmax_ood.losses import build_loss
from softmax_ood.models import create_model
from softmax_ood.train import DivergedError, NonFiniteLossError, TrainConfig, fit, train_subset

CFG = dict(
    epochs=3,
    batch_size=64,
    optimizer="adam",
    lr=1e-3,
    weight_decay=5e-4,
    schedule="cosine",
    checkpoint="best_val_acc",
)


def _fit(data, loss="ce", seed=0, recipe=None, **over):
    torch.manual_seed(seed)
    classes = 11 if loss == "reward_mse" else 10
    model = create_model("mlp", num_classes=classes, in_chans=1, image_size=8, hidden=[64])
    params = {"tau": 0.04} if loss == "logitnorm" else {}
    if loss == "reward_mse":
        params = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}
    return fit(
        model,
        build_loss(loss, params),
        data.x["train"],
        data.y["train"],
        data.x["val"],
        data.y["val"],
        cfg=TrainConfig.from_dict({**CFG, **over}),
        seed=seed,
        recipe=recipe,
        monitor_ood=data.ood["textures"],
        name=f"mlp/{loss}/seed{seed}",
    )


def test_learns_and_logs_curve(embedded_data):
    data = load_prepared(embedded_data)
    model, curve, info = _fit(data, lr=5e-3)
    assert [r["epoch"] for r in curve] == [1, 2, 3]
    assert curve[-1]["val_acc"] > 0.8
    assert set(curve[0]) >= {"train_loss", "val_acc", "logit_norm_id", "logit_norm_ood", "lr"}
    assert 1 <= info["best_epoch"] <= 3
    assert not model.training


def test_same_seed_same_weights_different_seed_different(embedded_data):
    data = load_prepared(embedded_data)
    a = _fit(data, seed=0)[0].state_dict()
    b = _fit(data, seed=0)[0].state_dict()
    c = _fit(data, seed=1)[0].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_best_val_checkpoint_is_the_logged_best(embedded_data):
    data = load_prepared(embedded_data)
    model, curve, info = _fit(data, epochs=4, lr=0.05)
    best = max(curve, key=lambda r: r["val_acc"])
    assert info["best_epoch"] == best["epoch"]
    with torch.no_grad():
        acc = (model(data.x["val"]).argmax(1) == data.y["val"]).double().mean().item()
    assert math.isclose(acc, best["val_acc"])


class _Exploding(nn.Module):
    def forward(self, logits, target):
        return nn.functional.cross_entropy(logits, target) * float("nan")


def test_nan_loss_names_model_epoch_batch(embedded_data):
    data = load_prepared(embedded_data)
    model = create_model("mlp", num_classes=10, in_chans=1, image_size=8, hidden=[8])
    with pytest.raises(
        NonFiniteLossError,
        match=r"training mlp/x/seed0 stopped: the loss became nan at epoch 1, "
        r"batch 1 of \d+",
    ):
        fit(
            model,
            _Exploding(),
            data.x["train"],
            data.y["train"],
            data.x["val"],
            data.y["val"],
            cfg=TrainConfig.from_dict(CFG),
            seed=0,
            name="mlp/x/seed0",
        )


def test_bad_train_settings():
    with pytest.raises(ValueError, match=r"train.optimizer is 'rmsprop'; expected one of"):
        TrainConfig.from_dict({**CFG, "optimizer": "rmsprop"})
    with pytest.raises(ValueError, match=r"unknown train setting\(s\) \['lr_decay'\]"):
        TrainConfig.from_dict({**CFG, "lr_decay": 0.1})


def test_sgd_multistep_schedule(embedded_data):
    data = load_prepared(embedded_data)
    _, curve, _ = _fit(
        data,
        optimizer="sgd",
        lr=0.1,
        momentum=0.9,
        schedule="multistep",
        milestones=[2],
        gamma=0.1,
        checkpoint="last",
    )
    # milestone 2 = "reduce after 2 epochs" (the paper: at 80 and 140 epochs)
    assert [round(r["lr"], 6) for r in curve] == [0.1, 0.1, 0.01]


def test_crop_flip_augment_runs(embedded_data):
    data = load_prepared(embedded_data)
    _, curve, _ = _fit(data, augment="crop_flip", epochs=1)
    assert math.isfinite(curve[0]["train_loss"])


def test_seed_everything_turns_on_deterministic_algorithms():
    import subprocess
    import sys

    code = (
        "import sys, torch; from softmax_ood.train import seed_everything; seed_everything(3); "
        "print(torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(), "
        "'torch._inductor' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1", "False"]


# ----------------------------------------------------------------- divergence guards


def test_huge_lr_diverges_without_nan_and_stops_with_one_sentence(embedded_data):
    """SGD with a huge lr: logits of 1e18-ish, no NaN; the logit-norm guard stops it."""
    data = load_prepared(embedded_data)
    over = dict(optimizer="sgd", lr=1e3, momentum=0.0, schedule="constant", checkpoint="last")
    with pytest.raises(DivergedError) as err:
        _fit(data, max_logit_norm=1e6, **over)
    msg = str(err.value)
    assert re.fullmatch(
        r"training mlp/ce/seed0 stopped: the mean validation logit norm reached \S+ at "
        r"epoch \d+, above the recipe's max_logit_norm 1e\+06 \(lower recipes\.<recipe>\.lr or "
        r"change recipes\.<recipe>\.optimizer\)",
        msg,
    ), msg
    # the loss bound alone catches it too; with the recipe's name, the advice names its keys
    with pytest.raises(DivergedError, match=r"the mean training loss reached .* max_loss 1000"):
        _fit(data, max_loss=1e3, recipe="sgd", **over)
    with pytest.raises(
        DivergedError, match=r"\(lower recipes\.sgd\.lr or change recipes\.sgd\.optimizer\)$"
    ):
        _fit(data, max_loss=1e3, recipe="sgd", **over)


def test_chance_accuracy_at_the_end_stops(embedded_data):
    data = load_prepared(embedded_data)
    # SGD at lr 10: norms and loss stay moderate, but the model ends at chance (0.1)
    over = dict(optimizer="sgd", lr=10.0, momentum=0.0, schedule="constant", checkpoint="last")
    with pytest.raises(DivergedError, match=r"not above chance \(1/10\) plus the recipe's"):
        _fit(data, chance_margin=0.1, **over)
    # off by default (None): the same run passes
    _fit(data, **over)


@pytest.mark.parametrize(
    ("loss", "params", "outputs"),
    [
        ("reward_mse", {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}, 11),
        ("gaussian_nll", {}, 2),
    ],
)
def test_losses_with_their_own_output_layout_train_and_log(embedded_data, loss, params, outputs):
    """Reward and regression heads: accuracy from the loss's own prediction, validation loss
    from the loss itself (a cross-entropy on 2 outputs would fail on labels up to 9)."""
    data = load_prepared(embedded_data)
    torch.manual_seed(0)
    model = create_model("mlp", num_classes=outputs, in_chans=1, image_size=8, hidden=[64])
    loss_fn = build_loss(loss, params)
    _, curve, _ = fit(
        model,
        loss_fn,
        data.x["train"],
        data.y["train"],
        data.x["val"],
        data.y["val"],
        # the chance guard applies to heads with a score per class (not the 2-output regression)
        cfg=TrainConfig.from_dict({**CFG, "lr": 5e-3, "chance_margin": 0.1}),
        seed=0,
        name=f"mlp/{loss}/seed0",
    )
    with torch.no_grad():
        expected = loss_fn(model(data.x["val"]), data.y["val"]).item()
    assert 0.0 <= curve[-1]["val_acc"] <= 1.0 and math.isfinite(expected)
    assert all(math.isfinite(r["val_loss"]) for r in curve)
    if loss == "reward_mse":
        assert curve[-1]["val_acc"] > 0.5


def test_best_val_loss_keeps_the_epoch_of_the_lowest_validation_loss(embedded_data):
    data = load_prepared(embedded_data)
    # reward MSE: validation loss = the loss itself (its own output layout)
    model, curve, info = _fit(
        data,
        loss="reward_mse",
        epochs=6,
        lr=5e-2,
        checkpoint="best_val_loss",
        schedule="constant",
    )
    losses = [r["val_loss"] for r in curve]
    assert info["best_epoch"] == 1 + losses.index(min(losses))
    assert info["checkpoint"] == "best_val_loss"
    # the kept weights are that epoch's: their validation loss is the minimum
    loss_fn = build_loss(
        "reward_mse", {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}
    )
    with torch.no_grad():
        val = loss_fn(model(data.x["val"]), data.y["val"]).item()
    assert math.isclose(val, min(losses), rel_tol=1e-4, abs_tol=1e-6)


def test_train_subset_is_fixed_and_independent_of_the_seed():
    import numpy as np

    from softmax_ood.train import train_subset

    assert train_subset(10, None) is None and train_subset(10, 10) is None
    a = train_subset(100, 30)
    assert (
        len(a) == 30 and np.array_equal(a, np.sort(a)) and np.array_equal(a, train_subset(100, 30))
    )
    assert len(set(a)) == 30 and a.max() < 100


def test_train_size_uses_the_subset_and_grad_clip_bounds_the_step(embedded_data):
    """``train_size`` trains on :func:`train_subset`'s N training images (the same run as
    passing them alone); ``grad_clip`` changes the weights and rejects non-positive values."""
    data = load_prepared(embedded_data)
    n = 100
    sub, curve, _ = _fit(data, train_size=n)
    keep = train_subset(len(data.y["train"]), n)
    torch.manual_seed(0)
    model = create_model("mlp", num_classes=10, in_chans=1, image_size=8, hidden=[64])
    alone, _, _ = fit(
        model,
        build_loss("ce", {}),
        data.x["train"][torch.from_numpy(keep)],
        data.y["train"][torch.from_numpy(keep)],
        data.x["val"],
        data.y["val"],
        cfg=TrainConfig.from_dict(CFG),
        seed=0,
        monitor_ood=data.ood["textures"],
        name="mlp/ce/seed0",
    )
    for k, v in sub.state_dict().items():
        assert torch.equal(alone.state_dict()[k], v)
    clipped = _fit(data, grad_clip=1e-3)[0].state_dict()
    plain = _fit(data)[0].state_dict()
    assert any(not torch.equal(clipped[k], plain[k]) for k in plain)
    with pytest.raises(ValueError, match="grad_clip"):
        TrainConfig.from_dict({**CFG, "grad_clip": 0})
    with pytest.raises(ValueError, match="train_size"):
        TrainConfig.from_dict({**CFG, "train_size": 1})


def test_warmup_ramps_the_learning_rate_linearly():
    """``warmup_steps``: the lr of step k (0-based) is lr * min(1, (k + 1) / warmup_steps) times
    the schedule's factor; absent, the schedule alone."""
    from softmax_ood.train import build_optimizer

    model = nn.Linear(2, 2)
    cfg = TrainConfig.from_dict(
        {
            **CFG,
            "optimizer": "sgd",
            "lr": 0.1,
            "schedule": "multistep",
            "milestones": [1],
            "warmup_steps": 4,
        }
    )
    opt, sched = build_optimizer(model, cfg, steps_per_epoch=3)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.025, 0.05, 0.075, 0.01, 0.01, 0.01])
    plain, _ = build_optimizer(model, TrainConfig.from_dict({**CFG, "optimizer": "sgd"}), 3)
    assert plain.param_groups[0]["lr"] == pytest.approx(1e-3)
