"""Snakemake script: the Kang shift grid (corruptions x severities, rotations, far OOD sets)."""

import numpy as np

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.kang.grid import build_grid


def save_npy(path, array):
    import io

    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    write_bytes_atomic(path, buf.getvalue())


def main():
    spec, out = snakemake.params.spec, snakemake.output
    x, y, index = build_grid(snakemake.input.data, spec)
    save_npy(out.x, x)
    save_npy(out.y, y)
    prov = provenance_record(inputs={"data": snakemake.input.data}, config=spec)
    write_parquet(index, out.index, prov)


run_job(snakemake, main)
