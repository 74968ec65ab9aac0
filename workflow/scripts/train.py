"""Snakemake script: train one (dataset, arch, loss, seed) run."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

from softmax_ood.cli import run_script
from softmax_ood.experiment import save_checkpoint, train_run
from softmax_ood.train import write_curve


def main():
    w = snakemake.wildcards
    model, curve, spec = train_run(
        snakemake.input.data,
        arch_name=w.arch,
        arch_cfg=snakemake.params.arch_cfg,
        loss_name=w.loss,
        loss_cfg=snakemake.params.loss_cfg,
        recipe_name=w.recipe,
        train_cfg=snakemake.params.train_cfg,
        seed=int(w.seed),
        device=snakemake.params.device,
    )
    write_curve(snakemake.output.curve, curve)
    save_checkpoint(snakemake.output.model, model, spec)


run_script(main, snakemake.log[0])
