"""Snakemake script: Kang et al.'s claims tested on this run's results (premises first)."""

import pandas as pd

from softmax_ood.analysis.claims import render_claims_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.kang.claims import evaluate_kang_claims

FRAMES = ("grid", "components", "policies", "mechanism", "ood_scores", "fit", "levels", "selection")


def main():
    spec = snakemake.params.spec
    inputs = {k: snakemake.input[k] for k in FRAMES}
    claims = evaluate_kang_claims({k: pd.read_parquet(v) for k, v in inputs.items()}, spec)
    prov = provenance_record(inputs=inputs, config=spec, seeds=spec["seeds"])
    write_parquet(claims, snakemake.output.claims, prov)
    write_bytes_atomic(snakemake.output.markdown, render_claims_markdown(claims).encode())


run_job(snakemake, main)
