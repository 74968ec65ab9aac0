"""Snakemake script of the results-section rules (rules/results.smk): ``snakemake.params.step``
says which: ``claims`` (one claims table across the studies), ``latex`` (every table as a
booktabs fragment with the paper's printed values beside ours, every figure as a PDF page, ``results/results_section.tex``, headline table first) or ``audit``
(the audit's verdict and provenance of every table and figure)."""

import json

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.results_section import (
    StudyOutputs,
    audit_records,
    collect_claims,
    figure_pdf,
    latex_path,
    section_tex,
    study_table_latex,
)


def claims():
    sm = snakemake
    table = collect_claims(dict(sm.params.claims))
    prov = provenance_record(inputs=dict(sm.params.claims), extra={"rule": sm.rule})
    write_parquet(table, sm.output.parquet, prov)
    write_bytes_atomic(sm.output.csv, table.to_csv(index=False, lineterminator="\n").encode())


def latex():
    import pandas as pd

    sm = snakemake
    studies = [StudyOutputs(**s) for s in sm.params.studies]
    for s in studies:
        for t in s.tables:
            write_bytes_atomic(latex_path(t), study_table_latex(s, t).encode())
        for f in s.figures:
            figure_pdf(f, latex_path(f))
    claims = pd.read_parquet(sm.input.claims)
    write_bytes_atomic(sm.output.section, section_tex(studies, claims=claims).encode())


def audit():
    sm = snakemake
    records = audit_records(list(sm.params.files), root=".")
    write_bytes_atomic(
        sm.output[0], (json.dumps(records, indent=1, sort_keys=True) + "\n").encode()
    )


run_job(snakemake, {"claims": claims, "latex": latex, "audit": audit}[snakemake.params.step])
