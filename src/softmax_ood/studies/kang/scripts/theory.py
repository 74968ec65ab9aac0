"""Snakemake script: Sec. 4.2's theory on the toy (Thm 4.1, Props 4.1-4.2), one row per seed and
quantity (:func:`softmax_ood.studies.kang.theory.theory_frame`)."""

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.kang.theory import settings, theory_frame


def main():
    seeds = [int(s) for s in snakemake.params.seeds]
    prov = provenance_record(inputs={}, config=settings(), seeds=seeds)
    write_parquet(theory_frame(seeds), snakemake.output.theory, prov)


run_job(snakemake, main)
