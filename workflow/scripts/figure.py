"""Snakemake script: one figure of the LogitNorm study (PNG + provenance sidecar)."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

import json

import pandas as pd

from softmax_ood.cli import run_script
from softmax_ood.figures import FIGURES
from softmax_ood.provenance import provenance_record, write_bytes_atomic


def main():
    name = snakemake.wildcards.fig
    inputs = {k: snakemake.input[k] for k in ("runs", "ood", "curves", "samples")}
    frames = {k: pd.read_parquet(p) for k, p in inputs.items()}
    FIGURES[name](frames, snakemake.params.spec, snakemake.output.figure)
    prov = provenance_record(
        inputs=inputs,
        config=snakemake.params.config,
        seeds=snakemake.params.config["seeds"],
        extra={
            "rule": "logitnorm_figure",
            "figure": name,
            "script": "workflow/scripts/figure.py",
            "function": f"softmax_ood.figures.{name}",
        },
    )
    write_bytes_atomic(
        snakemake.output.provenance, (json.dumps(prov, sort_keys=True, indent=2) + "\n").encode()
    )


run_script(main, snakemake.log[0])
