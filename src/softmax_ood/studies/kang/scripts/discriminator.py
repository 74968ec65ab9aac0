"""Snakemake script: OOD scores of one shift group's evaluation sets (one featurizer)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.kang.discrimination import score_group
from softmax_ood.studies.kang.grid import raw_split


def main():
    inp, p = snakemake.input, snakemake.params
    split = p.discriminator.get("id_split", "train")
    alpha = json.loads(Path(inp.alpha).read_text())["alpha"]
    disc = {**p.discriminator, "alpha": float(alpha)}
    scores = score_group(
        raw_split(inp.data, f"id_{split}"),
        np.load(inp.x, allow_pickle=False),
        pd.read_parquet(inp.index),
        snakemake.wildcards.group,
        featurizer=p.featurizer,
        discriminator=disc,
    )
    prov = provenance_record(
        inputs={"data": inp.data, "grid": inp.x, "index": inp.index},
        config={"featurizer": p.featurizer, "discriminator": disc},
        extra={"group": snakemake.wildcards.group},
    )
    write_parquet(scores, snakemake.output.scores, prov)


run_job(snakemake, main)
