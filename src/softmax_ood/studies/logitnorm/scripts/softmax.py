"""Snakemake script: the softmax frame of the LogitNorm study's Figs. 2 and 3 (one baseline and
one method model on seeded subsets of the test images, with each model's t-SNE)."""

import torch

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.logitnorm.outputs import softmax_frame


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p = snakemake.params
    models = dict(zip([r["loss"] for r in p.runs], snakemake.input.models, strict=True))
    frame = softmax_frame(
        models, snakemake.input.data, list(p.sets), dict(p.section), batch_size=int(p.batch_size)
    )
    prov = provenance_record(
        inputs={
            **{
                f"model_{r['name']}": m for r, m in zip(p.runs, snakemake.input.models, strict=True)
            },
            "data": snakemake.input.data,
        },
        config={"softmax_outputs": dict(p.section), "sets": list(p.sets)},
        seeds=sorted({int(r["seed"]) for r in p.runs}),
    )
    write_parquet(frame, snakemake.output.frame, prov)


run_job(snakemake, main)
