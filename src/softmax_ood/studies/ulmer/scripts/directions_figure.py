"""Snakemake script: certainty at the largest alpha per direction and model, both datasets."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.ulmer.figures import directions_figure


def main():
    frame = pd.concat([pd.read_parquet(p) for p in snakemake.input.directions], ignore_index=True)
    directions_figure(frame, snakemake.output.figure, level=float(snakemake.params.level))
    prov = provenance_record(
        inputs={p: p for p in snakemake.input.directions},
        config={"level": snakemake.params.level},
        seeds=sorted(int(s) for s in set(frame["seed"])),
        extra={
            "function": "softmax_ood.studies.ulmer.figures.directions_figure",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
