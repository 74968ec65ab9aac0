"""Benchmark: the Kang grid evaluation (one model, the whole shift grid) vs a bare forward pass
over the same images, in one run; and the corruption generator's throughput.

``ours`` is :func:`softmax_ood.studies.kang.evaluate.evaluate_grid`: load the checkpoint, one
batched forward pass over every evaluation set, then per set the distance to the OCS, the mean
prediction, accuracy and the selective-classification policies (the oracle's temperature fit
included). ``bare`` is the model's forward pass over the same normalised images with the same
batch size. CPU time (``time.process_time``, one torch thread), best of the repeats, interleaved.

    python workflow/bench/kang_bench.py [--arch cnn] [--loss ce] [--repeat 3]

Prints e.g. ``grid evaluation: ours 1.10s vs bare forward 1.00s over 27480 images -> ratio 1.10
(target <= 1.2)`` and one ``corruption <name>: N images/s`` line per corruption.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import yaml  # noqa: E402
from snakemake.utils import update_config  # noqa: E402

from softmax_ood.corruptions import CORRUPTIONS, throughput  # noqa: E402
from softmax_ood.data import make_embedded_dataset  # noqa: E402
from softmax_ood.experiment import build_run, save_checkpoint  # noqa: E402
from softmax_ood.studies.kang.evaluate import evaluate_grid, forward, normalise  # noqa: E402
from softmax_ood.studies.kang.grid import build_grid, raw_split  # noqa: E402

ARCHS = {
    "wrn-10-1": {"family": "wrn", "depth": 10, "widen_factor": 1, "drop_rate": 0.0},
    "cnn": {"family": "cnn", "channels": [32, 64], "drop_rate": 0.0},
}
# the loss entries and Kang section of the shipped 8x8 digits config (config/digits.yaml over
# config/default.yaml; Kang et al.: rewards +1 / -4 / 0): the benchmark builds the digits
_DEFAULT = yaml.safe_load((ROOT / "config/default.yaml").read_text())
update_config(_DEFAULT, yaml.safe_load((ROOT / "config/digits.yaml").read_text()))
LOSSES = {k: _DEFAULT["losses"][k] for k in ("ce", "reward-mse", "gaussian-nll")}
REWARDS = {k: v for k, v in LOSSES["reward-mse"].items() if k != "loss"}
TARGET = 1.2


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="cnn", choices=sorted(ARCHS))  # kang.arch of the default
    ap.add_argument("--loss", default="ce", choices=sorted(LOSSES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=4096)
    args = ap.parse_args()
    torch.set_num_threads(1)
    spec = _DEFAULT["kang"]  # the digits config's section
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "digits"
        meta = make_embedded_dataset(
            data,
            image_size=8,
            seed=0,
            val_fraction=0.2,
            test_fraction=0.2,
            ood_size=600,
            ood_test=spec["far_ood"],
            ood_val=[],
            id_classes=[0, 1, 2, 3, 4],
        )
        start = time.perf_counter()
        x, y, index = build_grid(data, spec)
        print(
            f"shift grid: {len(index)} evaluation sets, {len(x)} images "
            f"({time.perf_counter() - start:.2f}s to build)"
        )
        torch.manual_seed(0)
        model, _ = build_run(ARCHS[args.arch], LOSSES[args.loss], meta)
        model.eval()
        ckpt = Path(tmp) / "model.pt"
        save_checkpoint(
            ckpt,
            model,
            {
                "arch_cfg": ARCHS[args.arch],
                "loss_cfg": LOSSES[args.loss],
                "meta": {
                    k: meta[k] for k in ("num_classes", "channels", "image_size", "mean", "std")
                },
            },
        )
        xn = normalise(x, meta)

        def ours():
            evaluate_grid(
                ckpt,
                data,
                x,
                y,
                index,
                loss_entry=LOSSES[args.loss],
                rewards=REWARDS,
                figure_class=None,
                batch_size=args.batch_size,
            )

        def bare():
            forward(model, xn, args.batch_size)

        t_ours, t_bare = [], []
        for _ in range(args.repeat):
            t_ours.append(cpu(ours))
            t_bare.append(cpu(bare))
        ratio = min(t_ours) / min(t_bare)
        print(
            f"grid evaluation ({args.arch}, {args.loss}): ours {min(t_ours):.2f}s vs bare "
            f"forward {min(t_bare):.2f}s over {len(x)} images -> ratio {ratio:.3f} "
            f"(target <= {TARGET})"
        )
        x_test = raw_split(data, "id_test")
        rates = throughput(x_test, list(CORRUPTIONS), severity=3, seed=0, repeats=args.repeat)
        for name, rate in rates.items():
            print(f"corruption {name}: {rate:,.0f} images/s ({x_test.shape[2]}x{x_test.shape[3]})")
        x32 = torch.nn.functional.interpolate(torch.from_numpy(x_test), size=32).numpy()
        rates = throughput(x32, list(CORRUPTIONS), severity=3, seed=0, repeats=1)
        for name, rate in rates.items():
            print(f"corruption {name}: {rate:,.0f} images/s (32x32)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
