"""Snakemake script: max probability and entropy of softmax(alpha z) against alpha."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.ulmer.figures import softmax_note_figure


def main():
    softmax_note_figure(pd.read_parquet(snakemake.input.sharpness), snakemake.output.figure)
    prov = provenance_record(
        inputs={"sharpness": snakemake.input.sharpness},
        config={},
        seeds=[],
        extra={
            "function": "softmax_ood.studies.ulmer.figures.softmax_note_figure",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
