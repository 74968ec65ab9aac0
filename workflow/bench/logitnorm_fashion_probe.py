# ruff: noqa: E402  (numerics are pinned before torch is imported)
"""Phase-A probe (issue 26): LogitNorm vs CE on Fashion-MNIST read straight from the IDX files.

Times one epoch per architecture on one thread under the pinned numerics, and trains CE /
LogitNorm with the project's fit() on a declared subset, logging the raw logit norm per epoch
and MSP FPR95 on quick 28x28 far sets (upsampled sklearn digits filling the frame, noise matched
to the ID pixel statistics). Not part of the workflow; numbers go in the report.

usage: python3 workflow/bench/logitnorm_fashion_probe.py time ARCH [N]
       PROBE_OUT=dir/probe.jsonl python3 workflow/bench/logitnorm_fashion_probe.py \
           train ARCH LOSS SEED N EPOCHS [milestones=4,7] [warmup_steps=100] [clip=1.0] [tau=0.04]
(key=val override the paper's SGD recipe; N training images of a seeded permutation after 5,000
validation images; the multistep milestones default to 40 % / 70 % of EPOCHS)
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time

from softmax_ood import numerics

numerics.apply("pinned")
import numpy as np
import torch
import torch.nn.functional as F

from softmax_ood.losses import LogitNormLoss
from softmax_ood.models import create_model
from softmax_ood.train import TrainConfig, fit, predict_logits

ROOT = "/usr/share/datasets/fashion-mnist"
ARCHS = {
    "wrn-10-1": dict(family="wrn", depth=10, widen_factor=1, drop_rate=0.3),
    "wrn-10-2": dict(family="wrn", depth=10, widen_factor=2, drop_rate=0.3),
    "wrn-16-1": dict(family="wrn", depth=16, widen_factor=1, drop_rate=0.3),
    "resnet-8": dict(family="resnet", depth=8, base_width=16),
    "cnn": dict(family="cnn", channels=[32, 64], drop_rate=0.0),
    "densenet-bc-10": dict(family="densenet", depth=10, growth_rate=12, drop_rate=0.0),
}


def idx(name):
    with gzip.open(f"{ROOT}/{name}", "rb") as fh:
        raw = fh.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load():
    xtr = idx("train-images-idx3-ubyte.gz").astype(np.float32)[:, None] / 255
    ytr = idx("train-labels-idx1-ubyte.gz").astype(np.int64)
    xte = idx("t10k-images-idx3-ubyte.gz").astype(np.float32)[:, None] / 255
    yte = idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)
    return xtr, ytr, xte, yte


def far_sets(xid, n=2000, seed=0):
    """Two quick far sets: sklearn digits upsampled to fill 28x28; Gaussian noise with the ID
    per-pixel mean/std, clipped."""
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(seed)
    d = load_digits().images.astype(np.float32) / 16
    d = d[rng.choice(len(d), n, replace=len(d) < n)]
    up = F.interpolate(torch.from_numpy(d[:, None]), size=28, mode="bilinear", align_corners=False)
    digits = up.clamp(0, 1).numpy()
    mu, sd = xid.mean(0), xid.std(0)
    noise = np.clip(mu + sd * rng.standard_normal((n, 1, 28, 28)).astype(np.float32), 0, 1)
    return {"digits_up": digits, "noise_matched": noise.astype(np.float32)}


def fpr95(s_id, s_ood):
    thr = np.quantile(s_id, 0.05)  # 95 % of ID (positive) above
    return float((s_ood >= thr).mean())


def auroc(s_id, s_ood):
    from sklearn.metrics import roc_auc_score

    y = np.r_[np.ones(len(s_id)), np.zeros(len(s_ood))]
    return float(roc_auc_score(y, np.r_[s_id, s_ood]))


def msp_logodds(logits):
    """log p_max - log(1 - p_max) in float64 (no rounding to 1.0)."""
    z = logits.double()
    top = z.max(1).values
    others = z.clone()
    others[torch.arange(len(z)), z.argmax(1)] = -float("inf")
    return (top - torch.logsumexp(others, 1)).numpy()


def time_arch(arch, n=2048, bs=128):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    m = create_model(num_classes=10, in_chans=1, image_size=28, **ARCHS[arch]).to(
        memory_format=torch.channels_last
    )
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = torch.rand(n, 1, 28, 28).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (n,))
    m.train()
    for _warm in range(2):
        loss = F.cross_entropy(m(x[:bs]), y[:bs])
        opt.zero_grad()
        loss.backward()
        opt.step()
    t0 = time.process_time()
    w0 = time.perf_counter()
    for i in range(0, n, bs):
        loss = F.cross_entropy(m(x[i : i + bs]), y[i : i + bs])
        opt.zero_grad()
        loss.backward()
        opt.step()
    cpu = time.process_time() - t0
    wall = time.perf_counter() - w0
    params = sum(p.numel() for p in m.parameters())
    print(
        json.dumps(
            dict(
                arch=arch,
                params=params,
                cpu_ms_per_img=1000 * cpu / n,
                wall_ms_per_img=1000 * wall / n,
                cpu_s_per_60k_epoch=cpu / n * 60000,
                cpu_s_per_1k_steps=cpu / n * bs * 1000,
                load=os.getloadavg()[0],
                capability=torch.backends.cpu.get_cpu_capability(),
            )
        )
    )


def train(arch, loss_name, seed, n, epochs, **kw):
    xtr, ytr, xte, yte = load()
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(xtr))
    val_idx, tr_idx = perm[:5000], perm[5000 : 5000 + n]
    cfg = dict(
        epochs=epochs,
        batch_size=128,
        optimizer="sgd",
        lr=0.1,
        weight_decay=5e-4,
        momentum=0.9,
        schedule="multistep",
        milestones=[int(0.4 * epochs), int(0.7 * epochs)],
        gamma=0.1,
        checkpoint="last",
        monitor_size=256,
        threads=1,
        max_logit_norm=1e6,
        max_loss=1e3,
        chance_margin=0.1,
    )
    clip = None
    for k, v in kw.items():
        if k == "warmup_steps":
            cfg[k] = int(v)
        elif k == "clip":
            clip = float(v)
        elif k == "milestones":
            cfg[k] = [int(s) for s in v.split(",") if s]
        else:
            cfg[k] = type(cfg[k])(v) if k in cfg and not isinstance(cfg[k], list) else v
    tau = float(kw.get("tau", 0.04)) if "tau" in kw else 0.04
    cfg.pop("tau", None)
    loss_fn = torch.nn.CrossEntropyLoss() if loss_name == "ce" else LogitNormLoss(tau)
    far = far_sets(xtr)
    model = create_model(num_classes=10, in_chans=1, image_size=28, **ARCHS[arch])
    if clip:
        from torch.nn.utils import clip_grad_norm_

        orig = torch.optim.SGD.step

        def step(self, *a, **k):
            clip_grad_norm_([p for g in self.param_groups for p in g["params"]], clip)
            return orig(self, *a, **k)

        torch.optim.SGD.step = step
    t0 = time.process_time()
    model, curve, info = fit(
        model,
        loss_fn,
        torch.from_numpy(xtr[tr_idx]),
        torch.from_numpy(ytr[tr_idx]),
        torch.from_numpy(xtr[val_idx]),
        torch.from_numpy(ytr[val_idx]),
        cfg=TrainConfig.from_dict(cfg),
        seed=seed,
        monitor_ood=torch.from_numpy(far["digits_up"]),
        name=f"{arch}/{loss_name}/seed{seed}",
        channels_last=True,
    )
    cpu_train = time.process_time() - t0
    lt = predict_logits(model, torch.from_numpy(xte), 512, channels_last=True)
    acc = float((lt.argmax(1).numpy() == yte).mean())
    s_id = msp_logodds(lt)
    res = dict(
        arch=arch,
        loss=loss_name,
        seed=seed,
        n=n,
        epochs=epochs,
        steps=epochs * (n // 128),
        kw=kw,
        cpu_train_s=cpu_train,
        test_acc=acc,
        id_logit_norm=float(lt.norm(dim=1).mean()),
        load=os.getloadavg()[0],
        curve=[
            (
                r["epoch"],
                round(r["train_loss"], 4),
                round(r["train_acc"], 4),
                round(r["val_acc"], 4),
                round(r["logit_norm_id"], 3),
                round(r["logit_norm_ood"], 3),
            )
            for r in curve
        ],
    )
    keep = {"id": s_id}
    for name, x in far.items():
        lo = predict_logits(model, torch.from_numpy(x), 512, channels_last=True)
        so = msp_logodds(lo)
        keep[name] = so
        res[f"fpr95_{name}"] = fpr95(s_id, so)
        res[f"auroc_{name}"] = auroc(s_id, so)
        res[f"norm_{name}"] = float(lo.norm(dim=1).mean())
    print(json.dumps(res))
    tag = "_".join(
        [arch, loss_name, str(seed), str(n), str(epochs), *sorted(f"{k}{v}" for k, v in kw.items())]
    )
    out = os.environ.get("PROBE_OUT")
    if out:  # per-image MSP log-odds beside the JSON lines (power analysis)
        np.savez(os.path.join(os.path.dirname(out) or ".", f"scores_{tag}.npz"), **keep)
    if out:
        with open(out, "a") as fh:
            fh.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1] == "time":
        time_arch(sys.argv[2], *(int(a) for a in sys.argv[3:]))
    else:
        arch, loss, seed, n, epochs = (
            sys.argv[2],
            sys.argv[3],
            int(sys.argv[4]),
            int(sys.argv[5]),
            int(sys.argv[6]),
        )
        kw = dict(a.split("=", 1) for a in sys.argv[7:])
        train(arch, loss, seed, n, epochs, **kw)
