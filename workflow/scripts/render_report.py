"""Snakemake script (every study's report rule): execute the study's notebook with papermill,
then write a deterministic ``.ipynb`` and an ``.html`` without code (:mod:`softmax_ood.report`).

The rule gives ``input.notebook``, ``output.notebook``, ``output.html``, ``log`` and
``params.parameters`` (the notebook's parameters; the kernel runs in the working directory).
Outside Snakemake: ``python3 workflow/scripts/render_report.py NOTEBOOK IPYNB HTML -p NAME VALUE``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # this checkout's library

import logging

from softmax_ood.cli import run_job
from softmax_ood.report import ReportError, main, render_report


def snakemake_main():
    sm = snakemake  # noqa: F821
    try:
        render_report(
            sm.input.notebook,
            sm.output.notebook,
            sm.output.html,
            parameters=dict(sm.params.parameters),
        )
    except ReportError as err:
        logging.getLogger("softmax_ood").error("%s", err)
        sys.exit(1)


if "snakemake" in globals():
    run_job(snakemake, snakemake_main)  # noqa: F821
else:
    sys.exit(main())
