"""Snakemake script: the cross-paper grid (Kang's shifts on a declared budget, far sets, rays)."""

import numpy as np

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.crosspaper.measure import build_grid


def main():
    spec = snakemake.params.spec
    x, y, index = build_grid(snakemake.input.data, spec, spec["far_ood"])
    np.save(snakemake.output.x, x, allow_pickle=False)
    np.save(snakemake.output.y, y, allow_pickle=False)
    prov = provenance_record(
        inputs={"data": snakemake.input.data},
        config={k: spec[k] for k in ("grid", "rays", "axis", "far_ood")},
    )
    write_parquet(index, snakemake.output.index, prov)


run_job(snakemake, main)
