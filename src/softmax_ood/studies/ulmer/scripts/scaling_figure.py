"""Snakemake script: metrics and input-gradient norms vs alpha, one dataset (mean ± std bands)."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.ulmer.figures import scaling_figure


def main():
    scaling = pd.read_parquet(snakemake.input.scaling)
    directions = pd.read_parquet(snakemake.input.directions)
    paper = directions[directions["paper_direction"]].drop_duplicates("direction")
    note = "".join(
        f"along {d['direction']}: a degenerate direction, parallel to a class boundary"
        for _, d in paper.iterrows()
        if d["degenerate"]
    )
    scaling_figure(scaling, snakemake.output.figure, snakemake.wildcards.uds, note=note)
    prov = provenance_record(
        inputs={"scaling": snakemake.input.scaling, "directions": snakemake.input.directions},
        config={},
        seeds=sorted(int(s) for s in set(scaling["seed"])),
        extra={
            "function": "softmax_ood.studies.ulmer.figures.scaling_figure",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
