"""Snakemake script: one table of the LogitNorm study (parquet with provenance + markdown)."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

import pandas as pd

from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.tables import TABLES, render_markdown, tau_ablation


def main():
    name = snakemake.wildcards.table
    runs, ood = pd.read_parquet(snakemake.input.runs), pd.read_parquet(snakemake.input.ood)
    build = tau_ablation if name == "tau_ablation" else TABLES[name]
    table = build(runs, ood, snakemake.params.spec)
    prov = provenance_record(
        inputs={"runs": snakemake.input.runs, "ood": snakemake.input.ood},
        config=snakemake.params.config,
        seeds=snakemake.params.config["seeds"],
        extra={"rule": "logitnorm_table", "table": name},
    )
    write_parquet(table, snakemake.output.table, prov)
    write_bytes_atomic(snakemake.output.markdown, render_markdown(table, name).encode())


run_script(main, snakemake.log[0])
