"""Snakemake script: Fig. 8's FGSM sets of one trained classifier (distance to the OCS, accuracy,
OOD score, per-layer representation norms; :func:`softmax_ood.studies.kang.adversarial.
adversarial_frame`)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.kang.adversarial import adversarial_frame


def main():
    inp, p, w = snakemake.input, snakemake.params, snakemake.wildcards
    disc = {**p.discriminator, "alpha": float(json.loads(Path(inp.alpha).read_text())["alpha"])}
    frame = adversarial_frame(
        inp.model,
        inp.data,
        np.load(inp.x, allow_pickle=False),
        np.load(inp.y, allow_pickle=False),
        pd.read_parquet(inp.index),
        epsilons=list(p.epsilons),
        featurizer=p.featurizer,
        discriminator=disc,
    )
    for k, v in {"recipe": w.recipe, "arch": w.arch, "loss": w.loss, "seed": int(w.seed)}.items():
        frame.insert(0, k, v)
    prov = provenance_record(
        inputs={"model": inp.model, "data": inp.data, "grid": inp.x},
        config={"epsilons": list(p.epsilons), "featurizer": p.featurizer, "discriminator": disc},
        seeds=[int(w.seed)],
    )
    write_parquet(frame, snakemake.output.adversarial, prov)


run_job(snakemake, main)
