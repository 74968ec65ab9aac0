"""Snakemake script of every study's claims rule (rules/study.smk): the study's frames ->
its claims table (parquet with provenance, and markdown), by the function its
``claims_job`` names (``softmax_ood.studies.registry.ClaimsJob``)."""

import pandas as pd

from softmax_ood.analysis.claims import render_claims_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.registry import resolve


def read_frame(paths) -> pd.DataFrame:
    """One frame from a parquet path, or from a list of them (concatenated in order)."""
    if isinstance(paths, str):
        return pd.read_parquet(paths)
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def main():
    job = snakemake.params.job
    names = snakemake.params.frames
    claims_of = resolve(job["function"])
    frames = {name: read_frame(snakemake.input[name]) for name in names}
    claims = claims_of(frames, job["section"])
    inputs = {}
    for name in names:
        paths = snakemake.input[name]
        inputs.update({name: paths} if isinstance(paths, str) else {p: p for p in paths})
    prov = provenance_record(
        inputs=inputs,
        config=job["section"],
        seeds=job["seeds"],
        extra={"function": job["function"]},
    )
    write_parquet(claims, snakemake.output.claims, prov)
    markdown = render_claims_markdown(claims, job["title"])
    write_bytes_atomic(snakemake.output.markdown, markdown.encode())


run_job(snakemake, main)
