"""Training throughput per architecture against the core's matmul rate, in one run.

For each architecture of the default config (its settings read from config/default.yaml), one
SGD step of the workflow's recipe shape (batch 128, cross-entropy, momentum, weight decay) on
images of the default's size (``data.image_size``: 28, Fashion-MNIST; ``--image-size 8`` for the
digits) is counted with ``torch.utils.flop_counter`` (forward + backward) and timed on one
thread; the same thread's float32 matmul (1024 x 1024) rate is measured in the same run:

    python workflow/bench/bench_flops.py [--steps 30] [--pin pinned|native]

Prints e.g. ``wrn-10-1   584 MFLOP/step  33.1 ms/step  17.6 GFLOP/s  = 0.23 x matmul``. The
ratio, not the absolute rate, compares machines.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--archs", nargs="*", default=None, help="default: every one in the config")
    ap.add_argument("--pin", choices=["pinned", "native", "none"], default="none")
    ap.add_argument("--channels-last", action="store_true", help="try channels_last memory format")
    ap.add_argument("--image-size", type=int, default=None, help="default: config data.image_size")
    args = ap.parse_args()
    from softmax_ood import numerics

    if args.pin != "none":
        numerics.apply(args.pin)
    import torch
    import yaml
    from torch.utils.flop_counter import FlopCounterMode

    from softmax_ood.models import create_model

    torch.set_num_threads(1)
    torch.manual_seed(0)
    default = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    archs = default["architectures"]
    names = args.archs or list(archs)
    size = int(args.image_size or default["data"]["image_size"])

    def matmul_gflops() -> float:
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        a @ b
        best = float("inf")
        for _ in range(5):
            t = time.process_time()
            for _ in range(4):
                a @ b
            best = min(best, (time.process_time() - t) / 4)
        return 2 * 1024**3 / best / 1e9

    print(
        f"CPU: {numerics.host_description()}; torch "
        f"{torch.__version__} kernels {torch.backends.cpu.get_cpu_capability()}; numerics "
        f"{numerics.current_mode()}; 1 thread; batch {args.batch} of 1x{size}x{size}"
    )
    mm = matmul_gflops()
    print(f"matmul 1024x1024 float32: {mm:.1f} GFLOP/s")
    x = torch.randn(args.batch, 1, size, size)
    y = torch.randint(0, 10, (args.batch,))
    for name in names:
        cfg = dict(archs[name])
        family = cfg.pop("family")
        model = create_model(family, num_classes=10, in_chans=1, image_size=size, **cfg)
        xb = x
        if args.channels_last:
            model = model.to(memory_format=torch.channels_last)
            xb = x.contiguous(memory_format=torch.channels_last)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

        def step(model=model, xb=xb, opt=opt):
            loss = torch.nn.functional.cross_entropy(model(xb), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        with FlopCounterMode(display=False) as counter:
            step()
        flops = counter.get_total_flops()
        for _ in range(3):
            step()
        t = time.process_time()  # CPU time: robust on a shared machine (one thread)
        for _ in range(args.steps):
            step()
        per_step = (time.process_time() - t) / args.steps
        rate = flops / per_step / 1e9
        print(
            f"{name:<15} {flops / 1e6:7.0f} MFLOP/step  {per_step * 1e3:7.1f} ms/step  "
            f"{rate:6.1f} GFLOP/s  = {rate / mm:.2f} x matmul"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
