"""Snakemake script: penultimate-layer features of the Fig. 5 networks on the pooled ID splits."""

import torch

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.seddik.features import extract_network_features


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p = snakemake.params
    models = list(snakemake.input.models)
    checkpoints = dict(zip(p.seeds, models, strict=True))
    frame = extract_network_features(checkpoints, snakemake.input.data, p.splits)
    prov = provenance_record(
        inputs={
            **{f"model_seed{s}": m for s, m in checkpoints.items()},
            "data": snakemake.input.data,
        },
        config={"runs": list(p.runs), "splits": list(p.splits)},
        extra={"runs": list(p.runs)},
    )
    write_parquet(frame, snakemake.output.features, prov)


run_job(snakemake, main)
