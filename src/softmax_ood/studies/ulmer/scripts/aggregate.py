"""Snakemake script: the per-seed frames of one dataset -> all-seed frames and the mean ± std
tables (parquet with provenance + markdown): fit, scaling curve, certainty per direction and the
K-vs-2K check."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.ulmer.study import FRAMES, TABLE_KINDS
from softmax_ood.studies.ulmer.tables import (
    directions_table,
    fit_table,
    kstability_table,
    render_directions,
    render_fit,
    render_kstability,
    render_scaling,
    scaling_table,
)


def main():
    inp, out, dataset = snakemake.input, snakemake.output, snakemake.wildcards.uds
    frames = {n: pd.concat([pd.read_parquet(p) for p in inp[n]], ignore_index=True) for n in FRAMES}
    inputs = {p: p for n in FRAMES for p in inp[n]}
    prov = provenance_record(
        inputs=inputs,
        config=snakemake.params.spec,
        seeds=sorted(int(s) for s in set(frames["fit"]["seed"])),
    )
    for n, f in frames.items():
        write_parquet(f, getattr(out, n), prov)
    k_margin = float(snakemake.params.spec["k_margin"])
    tables = {
        "fit": (fit_table(frames["fit"]), render_fit, "held-out accuracy and fit"),
        "scaling": (
            scaling_table(frames["scaling"]),
            render_scaling,
            "metrics and input-gradient norms vs alpha along the paper's feature",
        ),
        "directions": (
            directions_table(frames["directions"]),
            render_directions,
            "certainty at the largest alpha per direction",
        ),
        "kstability": (
            kstability_table(frames["directions"], k_margin),
            render_kstability,
            "the certainty statistic at K and 2K samples",
        ),
    }
    for i, kind in enumerate(TABLE_KINDS):
        table, render, what = tables[kind]
        write_parquet(table, out.tables[i], prov)
        title = f"{dataset}: {what} (mean ± std over seeds)"
        write_bytes_atomic(out.markdown[i], render(table, title).encode())


run_job(snakemake, main)
