"""Snakemake script: one trained model on the whole Kang shift grid (loaded once)."""

import numpy as np
import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.kang.evaluate import evaluate_grid


def main():
    inp, p, out = snakemake.input, snakemake.params, snakemake.output
    frames = evaluate_grid(
        inp.model,
        inp.data,
        np.load(inp.x, allow_pickle=False),
        np.load(inp.y, allow_pickle=False),
        pd.read_parquet(inp.index),
        loss_entry=dict(p.loss_entry),
        rewards=dict(p.rewards),
        figure_class=p.figure_class,
        batch_size=int(p.batch_size),
        mechanism=dict(p.mechanism) if p.mechanism else None,
    )
    prov = provenance_record(
        inputs={"model": inp.model, "data": inp.data, "grid": inp.x},
        config={"loss": dict(p.loss_entry), "rewards": dict(p.rewards)},
        seeds=[int(snakemake.wildcards.seed)],
    )
    for name, frame in frames.items():
        write_parquet(frame, getattr(out, name), prov if name == "sets" else None)


run_job(snakemake, main)
