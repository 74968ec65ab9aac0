"""Snakemake script: the LogitNorm paper's claims tested on this run's results."""

import pandas as pd

from softmax_ood.analysis.claims import render_claims_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.logitnorm.claims import evaluate_logitnorm_claims
from softmax_ood.studies.logitnorm.summary import readme_block


def main():
    spec = snakemake.params.spec
    inputs = {k: snakemake.input[k] for k in ("runs", "ood", "curves", "samples", "floor")}
    f = {k: pd.read_parquet(p) for k, p in inputs.items()}
    claims = evaluate_logitnorm_claims(
        f["runs"], f["ood"], f["curves"], f["samples"], f["floor"], spec
    )
    prov = provenance_record(inputs=inputs, config=spec, seeds=spec["seeds"])
    write_parquet(claims, snakemake.output.claims, prov)
    write_bytes_atomic(snakemake.output.markdown, render_claims_markdown(claims).encode())
    write_bytes_atomic(snakemake.output.readme, readme_block(claims, f["floor"]).encode())


run_job(snakemake, main)
