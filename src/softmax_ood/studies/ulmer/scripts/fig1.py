"""Snakemake script: Fig. 1 of Ulmer & Cinà, one heatmap figure per uncertainty metric."""

from pathlib import Path

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.ulmer.figures import fig1_heatmaps


def main():
    inp = snakemake.input
    grid, points = pd.read_parquet(inp.grid), pd.read_parquet(inp.points)
    for path in snakemake.output.figures:
        metric = Path(path).stem.removeprefix("fig1_")
        # white = certain: low entropy / variance / MI, but HIGH max probability
        cmap = "Purples_r" if metric == "max_prob" else "Purples"
        fig1_heatmaps(grid, path, metric, data=points, cmap=cmap)
    prov = provenance_record(
        inputs={"grid": inp.grid, "points": inp.points},
        config=snakemake.params.spec,
        seeds=[int(snakemake.params.spec["seed"])],
        extra={
            "function": "softmax_ood.studies.ulmer.figures.fig1_heatmaps",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
