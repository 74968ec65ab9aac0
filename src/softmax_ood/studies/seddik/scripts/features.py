"""Snakemake script: penultimate-layer features of the Fig. 5 networks on the pooled ID splits."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

import torch

from softmax_ood.cli import run_script
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
        extra={"rule": snakemake.rule, "runs": list(p.runs)},
    )
    write_parquet(frame, snakemake.output.features, prov)


run_script(main, snakemake.log[0])
