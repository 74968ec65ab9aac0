"""Snakemake script: download one paper-scale source (checksum-verified) into data/raw/."""

from pathlib import Path

from softmax_ood.cli import run_job
from softmax_ood.paper_data import fetch_sources


def main():
    # this source's own entry of the sources file (the rule's params: editing another entry
    # does not rerun this job)
    p = snakemake.params
    out = Path(snakemake.output[0])
    fetch_sources(
        {p.name: dict(p.entry)},
        out.parent,
        names=[p.name],
        timeout=float(p.limits["timeout_s"]),
        max_seconds=float(p.limits["max_seconds"]),
    )


run_job(snakemake, main)
