"""Snakemake script of rule ``results_audit`` (rules/results.smk): the audit's verdict and
provenance of every table and figure, ``results/audit.json``."""

import json

from softmax_ood.cli import run_job
from softmax_ood.provenance import write_bytes_atomic
from softmax_ood.results_section.records import audit_records


def main():
    sm = snakemake
    records = audit_records(list(sm.params.files), root=".")
    write_bytes_atomic(
        sm.output[0], (json.dumps(records, indent=1, sort_keys=True) + "\n").encode()
    )


run_job(snakemake, main)
