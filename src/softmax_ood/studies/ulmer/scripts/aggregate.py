"""Snakemake script: the per-seed frames of one dataset -> all-seed frames and the mean ± std
tables (parquet with provenance + markdown)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

import pandas as pd

from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.ulmer.tables import fit_table, render_fit, render_scaling, scaling_table


def main():
    inp, out, dataset = snakemake.input, snakemake.output, snakemake.wildcards.uds
    fit = pd.concat([pd.read_parquet(p) for p in inp.fit], ignore_index=True)
    scaling = pd.concat([pd.read_parquet(p) for p in inp.scaling], ignore_index=True)
    inputs = {p: p for p in [*inp.fit, *inp.scaling]}
    prov = provenance_record(
        inputs=inputs, config={}, seeds=sorted(set(fit["seed"])), extra={"rule": snakemake.rule}
    )
    write_parquet(fit, out.fit, prov)
    write_parquet(scaling, out.scaling, prov)
    ft, st = fit_table(fit), scaling_table(scaling)
    write_parquet(ft, out.fit_table, prov)
    write_parquet(st, out.scaling_table, prov)
    write_bytes_atomic(
        out.fit_md, render_fit(ft, f"{dataset}: held-out accuracy (mean ± std over seeds)").encode()
    )
    title = f"{dataset}: metrics and input-gradient norms vs alpha (mean ± std over seeds)"
    write_bytes_atomic(out.scaling_md, render_scaling(st, title).encode())


run_script(main, snakemake.log[0])
