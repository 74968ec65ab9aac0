"""Snakemake script: every place the code departs from the printed paper, as a table."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[3]))  # this checkout's src/

from softmax_ood.analysis.render import render_markdown
from softmax_ood.cli import run_script
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.seddik.departures import departures_frame


def main():
    frame = departures_frame()
    prov = provenance_record(inputs={}, extra={"rule": snakemake.rule})
    write_parquet(frame, snakemake.output.table, prov)
    text = render_markdown(frame, "Departures from the printed text")
    write_bytes_atomic(snakemake.output.markdown, text.encode())


run_script(main, snakemake.log[0])
