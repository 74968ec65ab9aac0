"""Snakemake script of every study's shared table rule (rules/study.smk): one table from the
study's frames, by the function its ``table_job`` maps the table's name to
(``softmax_ood.studies.registry.ItemsJob``); parquet with provenance, and markdown."""

import pandas as pd

from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.registry import resolve


def main():
    job, name = snakemake.params.job, snakemake.wildcards.table
    inputs = {k: snakemake.input[k] for k in snakemake.input.keys() if k != "code"}
    frames = {k: pd.read_parquet(p) for k, p in inputs.items()}
    table = resolve(job["functions"])[name](frames, job["section"])
    prov = provenance_record(
        inputs=inputs,
        config=job["section"],
        seeds=job["seeds"][name] if isinstance(job["seeds"], dict) else job["seeds"],
        extra={"table": name, "function": f"{job['functions']}[{name}]"},
    )
    write_parquet(table, snakemake.output.table, prov)
    labels = resolve(job["labels"]) if job["labels"] else None
    write_bytes_atomic(snakemake.output.markdown, render_markdown(table, name, labels).encode())


run_job(snakemake, main)
