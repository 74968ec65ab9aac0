"""Snakemake script: extract the verified CIFAR-10-C archive (safe extraction, all or nothing)."""

from softmax_ood.cli import run_job
from softmax_ood.download import safe_extract


def main():
    safe_extract(snakemake.input.archive[0], snakemake.output[0])


run_job(snakemake, main)
