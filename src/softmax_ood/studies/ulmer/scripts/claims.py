"""Snakemake script: the claims of Ulmer & Cinà tested on this run's results."""

import pandas as pd

from softmax_ood.analysis.claims import render_claims_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.ulmer.claims import PAPER, evaluate_ulmer_claims


def main():
    inp, spec = snakemake.input, snakemake.params.spec
    fit = pd.concat([pd.read_parquet(p) for p in inp.fit], ignore_index=True)
    scaling = pd.concat([pd.read_parquet(p) for p in inp.scaling], ignore_index=True)
    directions = pd.concat([pd.read_parquet(p) for p in inp.directions], ignore_index=True)
    claims = evaluate_ulmer_claims(fit, scaling, directions, spec)
    prov = provenance_record(
        inputs={p: p for p in [*inp.fit, *inp.scaling, *inp.directions]},
        config=spec,
        seeds=sorted(int(s) for s in set(fit["seed"])),
    )
    write_parquet(claims, snakemake.output.claims, prov)
    write_bytes_atomic(
        snakemake.output.markdown,
        render_claims_markdown(claims, f"Claims of {PAPER} tested at this scale").encode(),
    )


run_job(snakemake, main)
