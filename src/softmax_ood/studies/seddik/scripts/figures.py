"""Snakemake script: the Seddik study's figures (PNG + provenance sidecar each), drawn from
the frames in one job (drawing is cheap; computing is in the frame rules)."""

from pathlib import Path

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.seddik.figures import FIGURES


def main():
    for name in snakemake.params.figures:
        frame_path = snakemake.input[name]
        figure = snakemake.output[name]
        FIGURES[name](pd.read_parquet(frame_path), figure)
        prov = provenance_record(
            inputs={"frame": frame_path},
            extra={
                "figure": name,
                "function": f"softmax_ood.studies.seddik.figures.{FIGURES[name].__name__}",
            },
        )
        write_provenance(Path(figure).with_suffix(".prov.json"), prov)


run_job(snakemake, main)
