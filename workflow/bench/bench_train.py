"""Benchmark: our training loop (softmax_ood.train.fit) vs a bare PyTorch loop, in one run.

Both train the same model (same seed, same data, same optimiser and schedule, same batches)
and both run a validation pass every epoch; ours adds what the pipeline needs: the NaN check
per batch, running loss/accuracy, logit norms on the ID val split and an OOD monitor set,
best-on-validation checkpointing and per-epoch logging with ETA. Repeats are interleaved
(ours, bare, ours, bare, ...) and the best time of each is compared.

    python workflow/bench/bench_train.py [--arch cnn] [--epochs 20] [--repeat 3]
    python workflow/bench/bench_train.py --yardstick    # the bare loop alone (defaults)

Prints e.g. ``train loop: ours 5.10s vs bare 5.02s -> ratio 1.016 (target <= 1.05)``.
``--yardstick`` times only the bare loop (cnn, logitnorm, 20 epochs, 1 thread; best CPU time of
``--repeat``) and prints ``yardstick: 2.68 s``: a machine descriptor the workflow benchmark
(``bench_workflow.py``) prints beside its measurements (no budget is expressed in it).
The embedded default data are built into a temporary directory if ``--data`` is not given.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from softmax_ood.data import load_prepared, make_embedded_dataset  # noqa: E402
from softmax_ood.losses import build_loss  # noqa: E402
from softmax_ood.models import create_model  # noqa: E402
from softmax_ood.train import TrainConfig, build_optimizer, fit, seed_everything  # noqa: E402

ARCHS = {
    "cnn": {"family": "cnn", "channels": [32, 64]},
    "wrn": {"family": "wrn", "depth": 10, "widen_factor": 1},
    "mlp": {"family": "mlp", "hidden": [256, 256]},
}


def bare_loop(model, loss_fn, x, y, vx, vy, cfg: TrainConfig, seed: int, mon=None) -> float:
    """The plainest loop doing the same optimisation steps and a val pass per epoch
    (with ``mon``: the val pass also covers the OOD monitor images, i.e. the same work)."""
    if mon is not None:
        vx = torch.cat([vx, mon[: cfg.monitor_size]])
        vy = torch.cat([vy, torch.zeros(len(vx) - len(vy), dtype=vy.dtype)])
    seed_everything(seed, cfg.threads)
    gen = torch.Generator().manual_seed(seed)
    steps = math.ceil(len(x) / cfg.batch_size)
    opt, sched = build_optimizer(model, cfg, steps)
    acc = 0.0
    for _ in range(cfg.epochs):
        model.train()
        perm = torch.randperm(len(x), generator=gen)
        for b in range(steps):
            idx = perm[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            loss = loss_fn(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        model.eval()
        with torch.no_grad():
            acc = (model(vx).argmax(1) == vy).float().mean().item()
    return acc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="cnn", choices=sorted(ARCHS))
    ap.add_argument("--loss", default="logitnorm")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--monitor-size", type=int, default=32)
    ap.add_argument("--yardstick", action="store_true", help="time the bare loop only")
    args = ap.parse_args()
    if args.yardstick:  # the fixed yardstick: always the defaults
        args.arch, args.loss, args.epochs, args.monitor_size = "cnn", "logitnorm", 20, 32

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data
        if data_dir is None:
            data_dir = Path(tmp) / "digits"
            make_embedded_dataset(
                data_dir,
                image_size=8,
                seed=0,
                val_fraction=0.2,
                test_fraction=0.2,
                ood_size=600,
                ood_test=["textures"],
                ood_val=[],
            )
        d = load_prepared(data_dir)
    cfg = TrainConfig.from_dict(
        dict(
            epochs=args.epochs,
            batch_size=64,
            optimizer="adam",
            lr=1e-3,
            weight_decay=5e-4,
            schedule="cosine",
            checkpoint="best_val_acc",
            monitor_size=args.monitor_size,
            threads=1,
        )
    )
    params = {"tau": 0.04} if args.loss == "logitnorm" else {}
    arch = dict(ARCHS[args.arch])
    family = arch.pop("family")

    def new_model():
        torch.manual_seed(0)
        return create_model(family, num_classes=10, in_chans=1, image_size=8, **arch)

    monitor = next(iter(d.ood.values()))

    def fresh():  # same initial weights, loss and data for every timed call
        return (
            new_model(),
            build_loss(args.loss, params),
            d.x["train"],
            d.y["train"],
            d.x["val"],
            d.y["val"],
        )

    def ours():
        fit(*fresh(), cfg=cfg, seed=0, monitor_ood=monitor)

    def bare():
        bare_loop(*fresh(), cfg, seed=0)

    def bare_same_work():
        bare_loop(*fresh(), cfg, seed=0, mon=monitor)

    bare()  # warm-up: first optimiser step imports lazily-loaded torch modules
    if args.yardstick:
        cpu_s, wall_s = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            bare()
            wall_s.append(time.perf_counter() - t)
            cpu_s.append(time.process_time() - c)
        print(
            f"yardstick: {min(cpu_s):.2f} s CPU (wall {min(wall_s):.2f} s; bare loop, cnn, "
            f"logitnorm, 20 epochs, 1 thread, best of {args.repeat}; torch "
            f"{torch.backends.cpu.get_cpu_capability()})"
        )
        return 0
    cpu = {"ours": [], "bare": [], "same": []}
    wall = {"ours": [], "bare": [], "same": []}
    for _ in range(args.repeat):
        for name, fn in (("ours", ours), ("bare", bare), ("same", bare_same_work)):
            t, c = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    ratio = min(cpu["ours"]) / min(cpu["bare"])
    print(
        f"train loop ({args.arch}, {args.loss}, {args.epochs} epochs, 1 thread, best of "
        f"{args.repeat}): ours {min(cpu['ours']):.2f}s vs bare {min(cpu['bare']):.2f}s CPU "
        f"(wall {min(wall['ours']):.2f}s vs {min(wall['bare']):.2f}s) -> ratio {ratio:.3f} "
        "(target <= 1.05)"
    )
    print(
        f"  loop overhead alone (bare loop also passes the {cfg.monitor_size} OOD monitor images "
        f"each epoch): ours {min(cpu['ours']):.2f}s vs {min(cpu['same']):.2f}s CPU -> ratio "
        f"{min(cpu['ours']) / min(cpu['same']):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
