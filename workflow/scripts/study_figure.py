"""Snakemake script of every study's shared figure rule (rules/study.smk): one figure drawn
from the study's frames by the function its ``figure_job`` maps the figure's name to
(``softmax_ood.studies.registry.ItemsJob``); PNG and provenance sidecar."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_provenance
from softmax_ood.studies.registry import resolve


def main():
    job, name = snakemake.params.job, snakemake.wildcards.fig
    inputs = {k: snakemake.input[k] for k in snakemake.input.keys() if k != "code"}
    frames = {k: pd.read_parquet(p) for k, p in inputs.items()}
    resolve(job["functions"])[name](frames, job["section"], snakemake.output.figure)
    prov = provenance_record(
        inputs=inputs,
        config=job["section"],
        seeds=job["seeds"][name] if isinstance(job["seeds"], dict) else job["seeds"],
        extra={"figure": name, "function": f"{job['functions']}[{name}]"},
    )
    write_provenance(snakemake.output.provenance, prov)


run_job(snakemake, main)
