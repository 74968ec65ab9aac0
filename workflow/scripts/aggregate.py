"""Snakemake script: per-run evaluation files -> the study's long tables (with provenance)."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

from softmax_ood.aggregate import aggregate_runs
from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_parquet


def main():
    inp, out = snakemake.input, snakemake.output
    frames = aggregate_runs(
        list(inp.summaries),
        list(inp.curves),
        list(inp.samples),
        main_arch=snakemake.params.main_arch,
        losses=snakemake.params.losses,
    )
    inputs = {"data": inp.data}
    inputs.update({f"summary:{p}": p for p in inp.summaries})
    prov = provenance_record(
        inputs=inputs,
        config=snakemake.params.config,
        seeds=snakemake.params.config["seeds"],
        extra={"rule": "logitnorm_aggregate"},
    )
    for name, frame in frames.items():
        write_parquet(frame, getattr(out, name), prov)


run_script(main, snakemake.log[0])
