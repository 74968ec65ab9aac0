"""Snakemake script: the generated block of the LogitNorm page (``summary.DOC_PAGE``), from the
claims table and the pixel floor (the release step checks the page against it)."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import write_bytes_atomic
from softmax_ood.studies.logitnorm.summary import readme_block


def main():
    claims = pd.read_parquet(snakemake.input.claims)
    floor = pd.read_parquet(snakemake.input.floor)
    write_bytes_atomic(snakemake.output.readme, readme_block(claims, floor).encode())


run_job(snakemake, main)
