"""Snakemake script of rule ``results_latex`` (rules/results.smk): every table as a booktabs
fragment with the paper's printed values beside ours, every figure as a PDF page, and
``results/results_section.tex``, headline table first."""

import pandas as pd

from softmax_ood.cli import run_job
from softmax_ood.provenance import write_bytes_atomic
from softmax_ood.results_section.latex import (
    figure_pdf,
    latex_path,
    section_tex,
    study_table_latex,
)
from softmax_ood.results_section.outputs import StudyOutputs


def main():
    sm = snakemake
    studies = [StudyOutputs(**s) for s in sm.params.studies]
    for s in studies:
        for t in s.tables:
            write_bytes_atomic(latex_path(t), study_table_latex(s, t).encode())
        for f in s.figures:
            figure_pdf(f, latex_path(f))
    claims = pd.read_parquet(sm.input.claims)
    write_bytes_atomic(sm.output.section, section_tex(studies, claims=claims).encode())


run_job(snakemake, main)
