"""Snakemake script: the Fig. 5 frame (k-class theory vs a softmax classifier trained on the
network's penultimate features)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

import pandas as pd

from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.seddik.experiments import fig5_frame
from softmax_ood.studies.seddik.features import num_classes, split_features


def main():
    p = snakemake.params
    feats = pd.read_parquet(snakemake.input.features)
    Xtr, ytr = split_features(feats, p.fit_split)
    Xte, yte = split_features(feats, p.test_split)
    frame = fig5_frame(Xtr, ytr, Xte, yte, k=num_classes(feats), **p.kwargs)
    prov = provenance_record(
        inputs={"features": snakemake.input.features},
        config={**p.kwargs, "fit_split": p.fit_split, "test_split": p.test_split},
        extra={"rule": snakemake.rule, "run": p.run},
    )
    write_parquet(frame, snakemake.output.frame, prov)


run_script(main, snakemake.log[0])
