"""Snakemake script: where the cross-paper study departs from the papers, as a table."""

from softmax_ood.analysis.departures import departures_frame
from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.crosspaper.departures import departures_of_section


def main():
    frame = departures_frame(departures_of_section(snakemake.params.section))
    write_parquet(frame, snakemake.output.table, provenance_record(inputs={}))
    text = render_markdown(frame, "Departures from the papers")
    write_bytes_atomic(snakemake.output.markdown, text.encode())


run_job(snakemake, main)
