"""Snakemake script: download one paper-scale source (checksum-verified) into data/raw/."""

import sys
from pathlib import Path

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # this checkout's library

from softmax_ood.cli import run_script
from softmax_ood.paper_data import fetch_sources, load_paper_config


def main():
    cfg = load_paper_config(snakemake.input.sources)
    out = Path(snakemake.output[0])
    fetch_sources(cfg, out.parent, names=[snakemake.params.name])


run_script(main, snakemake.log[0])
