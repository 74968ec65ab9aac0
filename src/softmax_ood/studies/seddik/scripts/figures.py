"""Snakemake script: the Seddik study's figures (PNG + provenance sidecar each), drawn from
the frames in one job (drawing is cheap; computing is in the frame rules)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/


import pandas as pd

from softmax_ood.cli import run_script
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
                "rule": snakemake.rule,
                "figure": name,
                "script": "src/softmax_ood/studies/seddik/scripts/figures.py",
                "function": f"softmax_ood.studies.seddik.figures.{FIGURES[name].__name__}",
            },
        )
        write_provenance(Path(figure).with_suffix(".prov.json"), prov)


run_script(main, snakemake.log[0])
