"""Snakemake script: one figure of the Kang study (PNG + provenance sidecar)."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.kang.plots import draw

FRAMES = ("grid", "components", "policies", "mechanism", "ood_scores", "fit", "levels", "selection")


def main():
    name, spec = snakemake.wildcards.fig, snakemake.params.spec
    inputs = {k: snakemake.input[k] for k in FRAMES}
    draw(name, {k: pd.read_parquet(v) for k, v in inputs.items()}, spec, snakemake.output.figure)
    prov = provenance_record(
        inputs=inputs,
        config=spec,
        seeds=spec["seeds"],
        extra={
            "figure": name,
            "function": f"softmax_ood.studies.kang.plots.{name}",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
