"""Snakemake script of rule ``results_claims`` (rules/results.smk): one claims table across the
studies, ``results/claims_all.{parquet,csv}``."""

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.results_section.outputs import collect_claims


def main():
    sm = snakemake
    table = collect_claims(dict(sm.params.claims))
    prov = provenance_record(inputs=dict(sm.params.claims), extra={"rule": sm.rule})
    write_parquet(table, sm.output.parquet, prov)
    write_bytes_atomic(sm.output.csv, table.to_csv(index=False, lineterminator="\n").encode())


run_job(snakemake, main)
