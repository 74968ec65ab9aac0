"""Snakemake script: download one paper-scale source (checksum-verified) into data/raw/."""

from pathlib import Path

from softmax_ood.cli import run_job
from softmax_ood.paper_data import fetch_tracked_source


def main():
    # params: the source's name, file name and checksums (what the job tracks); its URL, texts,
    # size and the limits are read from the sources file and the config (editing them does
    # not rerun this job)
    p = snakemake.params
    out = Path(snakemake.output[0])
    fetch_tracked_source(p.name, dict(p.checksums), snakemake.config["data"], out.parent)


run_job(snakemake, main)
