"""Snakemake script: Fig. 1 of Ulmer & Cinà, one heatmap figure per uncertainty metric."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/


import pandas as pd

from softmax_ood.cli import run_script
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
            "rule": snakemake.rule,
            "function": "softmax_ood.studies.ulmer.figures.fig1_heatmaps",
        },
    )
    write_provenance(snakemake.output.provenance, prov)


run_script(main, snakemake.log[0])
