"""Snakemake script: extract the verified CIFAR-10-C archive (safe extraction, all or nothing)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

from softmax_ood.cli import run_script
from softmax_ood.download import safe_extract


def main():
    safe_extract(snakemake.input.archive[0], snakemake.output[0])


run_script(main, snakemake.log[0])
