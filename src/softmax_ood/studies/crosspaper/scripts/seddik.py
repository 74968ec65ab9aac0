"""Snakemake script: (c) Seddik's Theorem 4.8 on the cross-paper networks' penultimate features."""

import torch

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.crosspaper.measure import seddik_frame


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p = snakemake.params
    runs = [{**r, "model": m} for r, m in zip(p.runs, snakemake.input.models, strict=True)]
    checkpoints = {
        loss: {int(r["seed"]): r["model"] for r in runs if r["loss"] == loss} for loss in p.losses
    }
    frame = seddik_frame(checkpoints, snakemake.input.data, dict(p.section))
    prov = provenance_record(
        inputs={**{f"model_{r['name']}": r["model"] for r in runs}, "data": snakemake.input.data},
        config={"seddik": dict(p.section["seddik"]), "runs": [r["name"] for r in runs]},
        seeds=sorted({int(r["seed"]) for r in runs}),
    )
    write_parquet(frame, snakemake.output.frame, prov)


run_job(snakemake, main)
