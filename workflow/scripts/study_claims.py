"""Snakemake script of every study's claims rule (rules/study.smk): the study's frames ->
its claims table (parquet with provenance, and markdown), by the function its
``claims_job`` names (``softmax_ood.studies.registry.ClaimsJob``); where the config replicates
the study, judged again on the replication seeds' frames (inputs ``replication_<frame>``) and
merged into the ``replicates`` column (``softmax_ood.analysis.claims.claims_with_replication``)."""

import pandas as pd

from softmax_ood.analysis.claims import (
    Replication,
    claims_with_replication,
    render_claims_markdown,
)
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
    fresh, replication = snakemake.params.replication, None
    keys = [f"replication_{name}" for name in snakemake.params.replication_frames]
    if fresh is not None:
        replication = Replication(
            frames={k.removeprefix("replication_"): read_frame(snakemake.input[k]) for k in keys},
            section=fresh["section"],
            seeds=fresh["seeds"],
            not_replicated=fresh["not_replicated"],
        )
    claims = claims_with_replication(claims_of, frames, job["section"], replication)
    inputs = {}
    for name in [*names, *keys]:
        paths = snakemake.input[name]
        inputs.update({name: paths} if isinstance(paths, str) else {p: p for p in paths})
    extra = {"function": job["function"]}
    if fresh is not None:
        extra["replication"] = {"seeds": fresh["seeds"], "section": fresh["section"]}
    prov = provenance_record(
        inputs=inputs,
        config=job["section"],
        seeds=job["seeds"],
        extra=extra,
    )
    write_parquet(claims, snakemake.output.claims, prov)
    markdown = render_claims_markdown(claims, job["title"])
    write_bytes_atomic(snakemake.output.markdown, markdown.encode())


run_job(snakemake, main)
