"""Snakemake script: the cross-paper networks on the grid and along the rays."""

import numpy as np
import pandas as pd
import torch

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.crosspaper.measure import evaluate_runs


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    inp, p = snakemake.input, snakemake.params
    runs = [
        {**r, "model": m, "curve": c}
        for r, m, c in zip(p.runs, inp.models, inp.curves, strict=True)
    ]
    frames = evaluate_runs(
        runs,
        inp.data,
        np.load(inp.x, allow_pickle=False),
        np.load(inp.y, allow_pickle=False),
        pd.read_parquet(inp.index),
        tau=float(p.tau),
        rays=dict(p.rays),
        batch_size=int(p.batch_size),
    )
    prov = provenance_record(
        inputs={
            **{f"model_{r['name']}": r["model"] for r in runs},
            **{f"curve_{r['name']}": r["curve"] for r in runs},
            "data": inp.data,
            "grid": inp.x,
            "index": inp.index,
        },
        config={"tau": p.tau, "rays": dict(p.rays), "runs": [r["name"] for r in runs]},
        seeds=sorted({int(r["seed"]) for r in runs}),
    )
    for name in ("shift", "rays", "fit"):
        write_parquet(frames[name], snakemake.output[name], prov)


run_job(snakemake, main)
