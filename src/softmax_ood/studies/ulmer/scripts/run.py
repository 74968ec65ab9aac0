"""Snakemake script: one (dataset, seed) of the Ulmer study: train every model kind, evaluate
held-out accuracy, the scaling experiment and (2-D data) the Fig. 1 grid."""

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.ulmer.experiment import run_seed
from softmax_ood.train import seed_everything


def main():
    spec, seed = snakemake.params.spec, int(snakemake.wildcards.seed)
    dataset = snakemake.wildcards.uds
    seed_everything(seed, threads=1)
    out = snakemake.output
    frames = run_seed(dataset, spec, seed, grid="grid" in out.keys())
    prov = provenance_record(inputs={}, config=spec, seeds=[seed], extra={"dataset": dataset})
    for name, frame in frames.items():
        write_parquet(frame, getattr(out, name), prov)


run_job(snakemake, main)
