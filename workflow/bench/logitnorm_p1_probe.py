# ruff: noqa: E402  (numerics are pinned before torch is imported)
"""Selection probe (issue 26, premise P1): how many optimiser steps of the default CE recipe
until CE is overconfident (validation-fitted temperature > 1), and what a run costs.

On the default (recipes.sgd-fashion: WRN-10-1, 12,800 training images, batch 128, 100 steps per
epoch, 10 epochs = 1,000 steps) CE's fitted T is 0.985, so P1 fails. This probe trains CE with
the same recipe and ONLY the step budget changed, on a SELECTION seed that no verdict reads
(default 100; the claims use the global seeds 0-4), one run per budget (the schedule depends on
the total: separate runs, never a truncated longer one):

* ``epochs = steps / (train_size / batch_size)`` over the same 12,800 images;
* ``milestones`` at 40 % and 70 % of the epochs (the recipe's rule, the paper's epochs 80 and
  140 of 200; 1,000 steps gives the default's [4, 7], checked);
* everything else as ``sgd-fashion`` (lr 0.1, momentum 0.9, wd 5e-4, the 100-step warm-up, last
  epoch kept, same architecture and data).

Per budget it prints one JSON line: the temperature fitted on the validation split
(:func:`softmax_ood.calibration.fit_temperature`, as evaluation does) with a 95 % percentile
bootstrap over validation images (the fit gives no interval), the last epoch's training loss
against the constant solution's log(#classes) (premise P0's measure), the mean ID logit norm on
validation, CE's MSP FPR95 (ID positive) of the validation split against each far validation set
(``ood_val``: never a test set), and the CPU seconds of the training call and of this probe's
evaluation (``resource.getrusage`` of this process; one thread).

usage: nice -n 10 python3 workflow/bench/logitnorm_p1_probe.py DATA_DIR [--seed 100]
           [--steps 1000 2000 4000] [--record]
``--record`` appends each line to workflow/bench/results/logitnorm_p1_probe.jsonl.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

from softmax_ood import numerics

numerics.apply("pinned")
import numpy as np
import torch
import yaml

from softmax_ood import calibration, metrics, scores
from softmax_ood.analysis.premises import fitted_share
from softmax_ood.data import load_prepared
from softmax_ood.experiment import Execution, train_run
from softmax_ood.train import memory_format, predict_logits

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "workflow/bench/results/logitnorm_p1_probe.jsonl"
RECIPE, ARCH, LOSS = "sgd-fashion", "wrn-10-1", "ce"  # the LogitNorm study's main CE cell
BOOT, BOOT_SEED = 200, 0  # bootstrap resamples of the validation images for T's interval


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def budget_recipe(base: dict, steps: int) -> dict:
    """The default recipe with ``steps`` optimiser steps: more epochs over the same images,
    milestones at 40 % / 70 % of them, nothing else changed."""
    per_epoch = int(base["train_size"]) // int(base["batch_size"])
    if steps % per_epoch:
        raise SystemExit(f"--steps {steps} is not a multiple of {per_epoch} steps per epoch")
    epochs = steps // per_epoch
    recipe = dict(base, epochs=epochs, milestones=[round(0.4 * epochs), round(0.7 * epochs)])
    return recipe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()

    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    base = cfg["recipes"][RECIPE]
    default_steps = int(base["epochs"]) * int(base["train_size"]) // int(base["batch_size"])
    assert budget_recipe(base, default_steps) == base, "the budget rule must give the default"
    ex = Execution.parse({"device": cfg["device"], **cfg["compute"]})
    data = load_prepared(args.data_dir)
    k = int(data.meta["num_classes"])
    ocs = math.log(k)  # the constant solution's CE on balanced classes (P0's reference)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    cpu_model = next(
        (ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if "model name" in ln), "?"
    )
    for steps in args.steps:
        recipe = budget_recipe(base, steps)
        load0 = os.getloadavg()[0]
        c0, w0 = cpu_s(), time.perf_counter()
        model, curve, spec = train_run(
            args.data_dir,
            arch_name=ARCH,
            arch_cfg=cfg["architectures"][ARCH],
            loss_name=LOSS,
            loss_cfg=cfg["losses"][LOSS],
            recipe_name=f"{RECIPE}-p1probe",
            train_cfg=recipe,
            seed=args.seed,
            device=ex,
            data=data,
        )
        train_cpu, train_wall = cpu_s() - c0, time.perf_counter() - w0
        c1 = cpu_s()
        model.eval()
        if ex.channels_last:
            model = model.to(memory_format=torch.channels_last)
        bs = int(cfg["evaluation"]["batch_size"])

        def logits(x, model=model, bs=bs):
            return predict_logits(model, memory_format(x, ex.channels_last), bs).double()

        val = logits(data.x["val"])
        y_val = data.y["val"].numpy()
        z = val.numpy()
        temp = calibration.fit_temperature(z, y_val)
        rng = np.random.default_rng(BOOT_SEED)
        boot = []
        for _ in range(BOOT):
            i = rng.integers(0, len(y_val), len(y_val))
            boot.append(calibration.fit_temperature(z[i], y_val[i]))
        lo, hi = np.percentile(boot, [2.5, 97.5])
        s_id = scores.msp_log_odds(val).numpy()
        fpr = {
            name: metrics.fpr_at_tpr(
                s_id, scores.msp_log_odds(logits(x)).numpy(), 0.95, positive="id"
            )
            for name, x in sorted(data.ood_val.items())
        }
        eval_cpu = cpu_s() - c1
        last = curve[-1]
        row = {
            "probe": "logitnorm_p1",
            "commit": commit,
            "seed": args.seed,
            "recipe": RECIPE,
            "arch": ARCH,
            "loss": LOSS,
            "steps": steps,
            "epochs": recipe["epochs"],
            "milestones": recipe["milestones"],
            "warmup_steps": recipe.get("warmup_steps"),
            "temperature": temp,
            "temperature_ci95": [float(lo), float(hi)],
            "temperature_boot": BOOT,
            "overconfident": temp > 1.0,
            "ci_above_1": bool(lo > 1.0),
            "val_acc": metrics.accuracy(z, y_val),
            "val_nll": calibration.nll(z, y_val),
            "train_loss": last["train_loss"],
            "ocs_loss": ocs,
            "train_over_ocs": last["train_loss"] / ocs,
            "fitted_share": float(fitted_share(ocs - last["train_loss"], ocs, "ce")),
            "logit_norm_id_val": metrics.mean_logit_norm(z),
            "msp_fpr95_val": fpr,
            "msp_fpr95_val_mean": float(np.mean(list(fpr.values()))),
            "train_cpu_s": round(train_cpu, 1),
            "train_wall_s": round(train_wall, 1),
            "eval_cpu_s": round(eval_cpu, 1),
            "load_before": round(load0, 2),
            "load_after": round(os.getloadavg()[0], 2),
            "threads": int(recipe["threads"]),
            "numerics": "pinned",
            "cpu": cpu_model,
            "machine": platform.machine(),
            "curve_logit_norm_id": [round(r["logit_norm_id"], 3) for r in curve],
            "curve_train_loss": [round(r["train_loss"], 4) for r in curve],
        }
        line = json.dumps(row)
        print(line, flush=True)
        if args.record:
            with open(RECORD, "a") as fh:
                fh.write(line + "\n")


if __name__ == "__main__":
    main()
