"""Snakemake script: the LogitNorm paper's claims tested on this run's results."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

import pandas as pd

from softmax_ood.claims import CLAIM_SETS, render_claims_markdown
from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet


def main():
    inputs = {k: snakemake.input[k] for k in ("runs", "ood", "curves")}
    f = {k: pd.read_parquet(p) for k, p in inputs.items()}
    claims = CLAIM_SETS["logitnorm"](f["runs"], f["ood"], f["curves"], snakemake.params.spec)
    prov = provenance_record(
        inputs=inputs,
        config=snakemake.params.config,
        seeds=snakemake.params.config["seeds"],
        extra={"rule": "logitnorm_claims"},
    )
    write_parquet(claims, snakemake.output.claims, prov)
    write_bytes_atomic(snakemake.output.markdown, render_claims_markdown(claims).encode())


run_script(main, snakemake.log[0])
