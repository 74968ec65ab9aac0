"""Snakemake script: train the seeds of one job (every seed of a cell, or one: rules/train.smk), in
one process."""

from softmax_ood.cli import run_job
from softmax_ood.data import load_prepared
from softmax_ood.experiment import save_checkpoint, train_run
from softmax_ood.train import write_curve


def main():
    w = snakemake.wildcards
    data = load_prepared(snakemake.input.data)  # once for every seed of the job
    outputs = zip(
        snakemake.params.seeds, snakemake.output.model, snakemake.output.curve, strict=True
    )
    for seed, model_path, curve_path in outputs:
        model, curve, spec = train_run(
            snakemake.input.data,
            arch_name=w.arch,
            arch_cfg=snakemake.params.arch_cfg,
            loss_name=w.loss,
            loss_cfg=snakemake.params.loss_cfg,
            recipe_name=w.recipe,
            train_cfg=snakemake.params.train_cfg,
            seed=int(seed),
            device=snakemake.params.device,
            data=data,
        )
        write_curve(curve_path, curve)
        save_checkpoint(model_path, model, spec)


run_job(snakemake, main)
