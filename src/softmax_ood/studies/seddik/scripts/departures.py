"""Snakemake script: every place the code departs from the printed paper, as a table."""

from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.seddik.departures import departures_frame
from softmax_ood.studies.seddik.study import departures


def main():
    frame = departures_frame(departures(snakemake.params.config))
    prov = provenance_record(inputs={}, config=snakemake.params.config)
    write_parquet(frame, snakemake.output.table, prov)
    text = render_markdown(frame, "Departures from the printed text")
    write_bytes_atomic(snakemake.output.markdown, text.encode())


run_job(snakemake, main)
