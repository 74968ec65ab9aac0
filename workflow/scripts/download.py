"""Snakemake script: download the paper-scale sources (checksum-verified) into data/raw/."""

import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

from softmax_ood.cli import run_script
from softmax_ood.paper_data import fetch_sources, load_paper_config


def main():
    cfg = load_paper_config(snakemake.input.sources)
    fetch_sources(cfg, snakemake.output[0], names=snakemake.params.names)


run_script(main, snakemake.log[0])
