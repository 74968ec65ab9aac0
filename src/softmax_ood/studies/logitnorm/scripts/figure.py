"""Snakemake script: one figure of the LogitNorm study (PNG + provenance sidecar)."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.logitnorm.figures import FIGURES


def main():
    name, spec = snakemake.wildcards.fig, snakemake.params.spec
    inputs = {k: snakemake.input[k] for k in ("runs", "ood", "curves", "samples")}
    frames = {k: pd.read_parquet(p) for k, p in inputs.items()}
    FIGURES[name](frames, spec, snakemake.output.figure)
    prov = provenance_record(
        inputs=inputs,
        config=spec,
        seeds=spec["seeds"],
        extra={
            "figure": name,
            "function": f"softmax_ood.studies.logitnorm.figures.{name}",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
