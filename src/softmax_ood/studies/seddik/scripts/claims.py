"""Snakemake script: Seddik et al.'s claims tested on this run's frames."""

import pandas as pd

from softmax_ood.analysis.claims import render_claims_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.seddik.claims import evaluate_seddik_claims


def main():
    bars = dict(snakemake.params.bars)
    inputs = {k: snakemake.input[k] for k in ("fig2", "fig4", "fig5", "validation")}
    frames = {k: pd.read_parquet(p) for k, p in inputs.items()}
    claims = evaluate_seddik_claims(**frames, **bars)
    prov = provenance_record(inputs=inputs, config=bars)
    write_parquet(claims, snakemake.output.claims, prov)
    text = render_claims_markdown(claims, "Claims of Seddik et al. 2021 tested at this scale")
    write_bytes_atomic(snakemake.output.markdown, text.encode())


run_job(snakemake, main)
