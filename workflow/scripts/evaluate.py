"""Snakemake script: evaluate the checkpoints of one job (every seed of a cell, or one) on ID test and
every OOD set."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.data import load_prepared, write_json
from softmax_ood.evaluation import evaluate_run
from softmax_ood.experiment import settings_digest
from softmax_ood.provenance import path_sha256, write_parquet
from softmax_ood.runs import parse_run_dir


def main():
    ev = snakemake.params.evaluation
    digest = settings_digest(*snakemake.params.settings)
    data_sha = path_sha256(snakemake.input.data)
    data = load_prepared(snakemake.input.data)  # once for every seed of the job
    outputs = zip(
        snakemake.input.model, snakemake.output.summary, snakemake.output.samples, strict=True
    )
    for model_path, summary_path, samples_path in outputs:
        evaluation = evaluate_run(
            model_path,
            snakemake.input.data,
            scores_cfg=snakemake.params.scores,
            score_overrides=snakemake.params.overrides,
            batch_size=ev["batch_size"],
            ece_bins=ev["ece_bins"],
            device=snakemake.params.device,
            expected=parse_run_dir(model_path)._asdict(),
            expected_digest=digest,
            data=data,
            per_image=True,
        )
        summary = evaluation.summary
        summary["inputs"] = {"model_sha256": path_sha256(model_path), "data_sha256": data_sha}
        # every score's per-image values on the ID and OOD test images (set, score, value)
        frame = pd.concat(
            [
                pd.DataFrame({"set": name, "score": score, "value": values})
                for (score, name), values in evaluation.images.items()
            ],
            ignore_index=True,
        )
        write_parquet(frame, samples_path)
        write_json(summary_path, summary)


run_job(snakemake, main)
