"""Training throughput per architecture against the core's matmul rate, in one run.

For each architecture of the default config (its settings read from config/default.yaml), one
SGD step of the workflow's recipe shape (batch 128, cross-entropy, momentum, weight decay) on
images of the default's size (``data.image_size``: 28, Fashion-MNIST; ``--image-size 8`` for the
digits) is counted with ``torch.utils.flop_counter`` (forward + backward) and timed on one
thread; the same thread's float32 matmul (1024 x 1024) rate is measured in the same run:

    python workflow/bench/bench_flops.py [--steps 30] [--pin pinned|native] [--archs A B]
    python workflow/bench/bench_flops.py --main [--configfile config/X.yaml]

Prints e.g. ``wrn-10-1   584 MFLOP/step  33.1 ms/step  17.6 GFLOP/s  = 0.23 x matmul``. The
ratio, not the absolute rate, compares machines.

``--main`` measures what issue 29's goal names: the config's main model
(``logitnorm.main_arch``) at ``data.image_size``, with its recipe's batch size, the config's
numerics and ``compute.channels_last``, as the workflow trains it, against the machine's limit:
the same thread's **native** matmul, measured in a fresh unpinned process (under pinned numerics
``MKL_CBWR=COMPATIBLE`` slows MKL's own GEMM several-fold, so the pinned matmul is printed beside
it but is not the machine's limit). :func:`main_model_flops` is that measurement for
``bench_workflow.py``; ``--json`` prints a run's numbers as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
FLOPS_GOAL = 0.5  # issue 29: the main model's training GFLOP/s over the native matmul's


def load_config(root: Path = ROOT, configfile: str | None = None) -> dict:
    """``root``'s config/default.yaml with ``configfile`` (relative to ``root``) merged over it,
    as Snakemake merges a ``--configfile``."""
    import yaml
    from snakemake.utils import update_config

    cfg = yaml.safe_load((root / "config/default.yaml").read_text())
    if configfile:
        update_config(cfg, yaml.safe_load((root / configfile).read_text()) or {})
    return cfg


def main_model_settings(cfg: dict) -> dict:
    """What the workflow trains as the main 28x28 model: arch, image size, batch, numerics,
    memory format."""
    ln = cfg["logitnorm"]
    return {
        "arch": ln["main_arch"],
        "image_size": int(cfg["data"]["image_size"]),
        "batch": int(cfg["recipes"][ln["recipe"]]["batch_size"]),
        "numerics": cfg.get("numerics", "pinned"),
        "channels_last": bool((cfg.get("compute") or {}).get("channels_last", False)),
    }


def _child(args: list[str], env: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise SystemExit(f"bench_flops failed:\n{proc.stdout[-1000:]}{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main_model_flops(root: Path = ROOT, configfile: str | None = None, steps: int = 30) -> dict:
    """The main model's training GFLOP/s and its ratio to the same thread's native matmul,
    each measured in a fresh process (the pin must be set before torch loads)."""
    from softmax_ood.numerics import ENV_KEY, PINNED_ENV

    s = main_model_settings(load_config(root, configfile))
    native_env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV and k != ENV_KEY}
    native = _child(["--archs", "--pin", "native"], native_env)
    args = ["--config-root", str(root), "--archs", s["arch"], "--image-size", str(s["image_size"])]
    args += ["--batch", str(s["batch"]), "--steps", str(steps), "--pin", s["numerics"]]
    if configfile:
        args += ["--configfile", configfile]
    if s["channels_last"]:
        args.append("--channels-last")
    run = _child(args, native_env)
    model = run["archs"][s["arch"]]
    return {
        **s,
        "mflop_per_step": model["mflop_per_step"],
        "ms_per_step": model["ms_per_step"],
        "gflops": model["gflops"],
        "matmul_native_gflops": native["matmul_gflops"],
        "matmul_same_numerics_gflops": run["matmul_gflops"],
        "kernels": run["kernels"],
        "ratio": round(model["gflops"] / native["matmul_gflops"], 3),
        "conv_time_share": model.get("conv_time_share"),
        "conv_gflops": model.get("conv_gflops"),
        "conv_ratio": round(model["conv_gflops"] / native["matmul_gflops"], 3)
        if model.get("conv_gflops")
        else None,
    }


def describe_main(m: dict) -> str:
    """One line for a :func:`main_model_flops` result."""
    fmt = ", channels_last" if m["channels_last"] else ""
    return (
        f"main model {m['arch']} at {m['image_size']}x{m['image_size']} (batch {m['batch']}, "
        f"numerics {m['numerics']}{fmt}, kernels {m['kernels']}): {m['gflops']:.1f} GFLOP/s = "
        f"{m['ratio']:.2f} x the same thread's native matmul ({m['matmul_native_gflops']:.1f} "
        f"GFLOP/s; goal >= {FLOPS_GOAL:g}); "
        f"{m['gflops'] / m['matmul_same_numerics_gflops']:.2f} x the matmul under its own "
        f"numerics ({m['matmul_same_numerics_gflops']:.1f} GFLOP/s)"
        + (
            f"; its convolutions take {100 * m['conv_time_share']:.0f} % of the step's operator "
            f"time at {m['conv_gflops']:.1f} GFLOP/s ({m['conv_ratio']:.2f} x the native "
            "matmul), the rest is memory-bound elementwise work (batch norm, ReLU, dropout "
            "masks, the optimiser)"
            if m.get("conv_gflops")
            else ""
        )
    )


def conv_part(step, counter, flops: float, steps: int = 5) -> tuple[float, float]:
    """Where a step's time goes: the convolutions' share of the operators' own CPU time (torch
    profiler, ``steps`` steps) and their GFLOP/s (their FLOPs, from ``counter``, over that
    time). The rest is memory-bound elementwise work (batch norm, ReLU, dropout's random masks,
    the optimiser), which no matmul rate bounds."""
    from torch.profiler import ProfilerActivity, profile

    conv_flops = sum(
        n
        for op, n in counter.get_flop_counts().get("Global", {}).items()
        if "convolution" in str(op)
    )
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    conv = sum(e.self_cpu_time_total for e in events if "convolution" in e.key)
    if total <= 0 or conv <= 0:
        return 0.0, 0.0
    return conv / total, conv_flops * steps / (conv / 1e6) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument(
        "--archs", nargs="*", default=None, help="default: every one in the config; none: matmul"
    )
    ap.add_argument("--pin", choices=["pinned", "native", "none"], default="none")
    ap.add_argument("--channels-last", action="store_true", help="try channels_last memory format")
    ap.add_argument("--image-size", type=int, default=None, help="default: config data.image_size")
    ap.add_argument("--main", action="store_true", help="the config's main model vs native matmul")
    ap.add_argument("--config-root", type=Path, default=ROOT, help="checkout whose config is read")
    ap.add_argument("--configfile", default=None, help="overlay on config/default.yaml")
    ap.add_argument("--json", action="store_true", help="print the numbers as one JSON line")
    args = ap.parse_args()
    if args.main:
        print(describe_main(main_model_flops(args.config_root, args.configfile, args.steps)))
        return 0
    from softmax_ood import numerics

    if args.pin != "none":
        numerics.apply(args.pin)
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from softmax_ood.models import create_model

    torch.set_num_threads(1)
    torch.manual_seed(0)
    default = load_config(args.config_root, args.configfile)
    archs = default["architectures"]
    names = list(archs) if args.archs is None else args.archs
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

    kernels = torch.backends.cpu.get_cpu_capability()
    if not args.json:
        print(
            f"CPU: {numerics.host_description()}; torch "
            f"{torch.__version__} kernels {kernels}; numerics "
            f"{numerics.current_mode()}; 1 thread; batch {args.batch} of 1x{size}x{size}"
        )
    mm = matmul_gflops()
    out = {"kernels": kernels, "matmul_gflops": round(mm, 2), "archs": {}}
    if not args.json:
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
        conv_share, conv_rate = conv_part(step, counter, flops)
        out["archs"][name] = {
            "mflop_per_step": round(flops / 1e6, 1),
            "ms_per_step": round(per_step * 1e3, 2),
            "gflops": round(rate, 2),
            "conv_time_share": round(conv_share, 3),
            "conv_gflops": round(conv_rate, 2),
        }
        if not args.json:
            print(
                f"{name:<15} {flops / 1e6:7.0f} MFLOP/step  {per_step * 1e3:7.1f} ms/step  "
                f"{rate:6.1f} GFLOP/s  = {rate / mm:.2f} x matmul"
            )
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
