r"""The results section: one page and one LaTeX section across every registered study.

Study-agnostic: what a study contributes is read from its ``targets(config)`` (its tables are
the ``tables/*.parquet`` targets, its figures the ``*.png`` targets under ``results/``, its
claims the ``claims.parquet`` target), in the order of the registry (:data:`STUDIES`).

* :func:`collect_claims` — one claims table across all studies (``results/claims_all.*``):
  paper, study, claim, kind, statistic, value, threshold, p, the family-adjusted p and how,
  alpha, power, n, the test kind,
  the observed direction and the opposite's p, selection and confirmation data, verdict.
* :func:`table_latex` / :func:`figure_pdf` / :func:`section_tex` — every table as a booktabs
  fragment, every figure as a PDF page, and ``results/results_section.tex``, a document that
  ``\input``\ s them in order and compiles with a plain TeX installation (pdflatex, booktabs,
  longtable, graphicx). Figures are the workflow's PNGs embedded at their own resolution (raster
  PDF pages, not vector redraws).
* :func:`audit_records` — the audit's verdict for each table and figure (its recorded input
  hashes checked against the files), written by a rule so a stale or tampered input shows on the
  page.

One module per output, each importable alone (this package imports none of them, so a rule's
derived code inputs are the modules its script uses): :mod:`.outputs` (what a study contributes, the
claims table across studies), :mod:`.headline` (the headline rows and sentences), :mod:`.latex`,
:mod:`.records` (the audit's verdicts) and :mod:`.page` (the HTML). Everything here writes the
same bytes for the same inputs.
"""
