"""Snakemake script: one table of the LogitNorm study (parquet with provenance + markdown)."""

import pandas as pd

from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.logitnorm.tables import PREMISE_LABELS, TABLES


def main():
    name, spec = snakemake.wildcards.table, snakemake.params.spec
    runs, ood = pd.read_parquet(snakemake.input.runs), pd.read_parquet(snakemake.input.ood)
    table = TABLES[name](runs, ood, spec)
    prov = provenance_record(
        inputs={"runs": snakemake.input.runs, "ood": snakemake.input.ood},
        config=spec,
        seeds=spec["seeds"],
        extra={"table": name},
    )
    write_parquet(table, snakemake.output.table, prov)
    write_bytes_atomic(
        snakemake.output.markdown, render_markdown(table, name, PREMISE_LABELS).encode()
    )


run_job(snakemake, main)
