"""Snakemake script: penultimate-layer features of the Fig. 5 network on two ID splits."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

import torch

from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.seddik.features import extract_features


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    p = snakemake.params
    frame = extract_features(snakemake.input.model, snakemake.input.data, p.splits)
    prov = provenance_record(
        inputs={"model": snakemake.input.model, "data": snakemake.input.data},
        config={"run": p.run, "splits": list(p.splits)},
        extra={"rule": snakemake.rule, "run": p.run},
    )
    write_parquet(frame, snakemake.output.features, prov)


run_script(main, snakemake.log[0])
