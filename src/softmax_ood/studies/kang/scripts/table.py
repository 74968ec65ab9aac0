"""Snakemake script: one table of the Kang study (parquet with provenance + markdown)."""

import pandas as pd

from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.kang.tables import TABLES

FRAMES = ("grid", "components", "policies", "mechanism", "ood_scores", "fit", "levels", "selection")


def main():
    name, spec = snakemake.wildcards.table, snakemake.params.spec
    inputs = {k: snakemake.input[k] for k in FRAMES}
    table = TABLES[name]({k: pd.read_parquet(v) for k, v in inputs.items()}, spec)
    prov = provenance_record(
        inputs=inputs,
        config=spec,
        seeds=spec["seeds"],
        extra={"table": name},
    )
    write_parquet(table, snakemake.output.table, prov)
    write_bytes_atomic(snakemake.output.markdown, render_markdown(table, name).encode())


run_job(snakemake, main)
