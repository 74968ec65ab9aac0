"""Snakemake script: the softmax-properties note's checks (sharpness, Jacobian, stability)."""

import numpy as np
import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.ulmer.softmax_note import (
    jacobian_check,
    note_checks,
    property_checks,
    render_checks,
    sharpness_table,
)


def main():
    spec, out = snakemake.params.spec, snakemake.output
    pos = np.logspace(spec["min_exponent"], spec["max_exponent"], spec["n_alphas"])
    alphas = np.concatenate([-pos[::-1], pos])
    vectors = {k: [float(v) for v in z] for k, z in spec["vectors"].items()}
    prov = provenance_record(inputs={}, config=spec, seeds=[])
    write_parquet(sharpness_table(vectors, alphas), out.sharpness, prov)
    write_parquet(jacobian_check(vectors, alphas), out.jacobian, prov)
    checks = pd.concat([note_checks(vectors, alphas), property_checks(vectors)], ignore_index=True)
    write_parquet(checks, out.checks, prov)
    write_bytes_atomic(out.markdown, render_checks(checks).encode())


run_job(snakemake, main)
