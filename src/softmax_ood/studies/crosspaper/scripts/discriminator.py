"""Snakemake script: Kang's OOD score of every set of the cross-paper grid."""

import numpy as np
import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.crosspaper.measure import score_grid


def main():
    inp, disc = snakemake.input, dict(snakemake.params.discriminator)
    scores = score_grid(
        inp.data, np.load(inp.x, allow_pickle=False), pd.read_parquet(inp.index), disc
    )
    prov = provenance_record(
        inputs={"data": inp.data, "grid": inp.x, "index": inp.index}, config=disc
    )
    write_parquet(scores, snakemake.output.scores, prov)


run_job(snakemake, main)
