"""Snakemake script: the Fig. 5 frame (k-class theory vs a softmax classifier trained on each
network's penultimate features, pooled ID images cut into fit and test parts)."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.seddik.experiments import fig5_networks


def main():
    p = snakemake.params
    feats = pd.read_parquet(snakemake.input.features)
    frame = fig5_networks(feats, **p.kwargs)
    prov = provenance_record(
        inputs={"features": snakemake.input.features},
        config=dict(p.kwargs),
        extra={"runs": list(p.runs)},
    )
    write_parquet(frame, snakemake.output.frame, prov)


run_job(snakemake, main)
