"""Snakemake script: time the fixed point at the paper's size (p = 512, n = 3000).

The iteration counts and residuals are results (``timing.parquet``, deterministic); the wall
times differ from run to run, so they go to a JSON file next to the report, not under results/.
"""

import json

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.seddik.experiments import timing


def main():
    kwargs = dict(snakemake.params.kwargs)
    frame = timing(**kwargs)
    prov = provenance_record(inputs={}, config=kwargs)
    write_parquet(frame.drop(columns="seconds"), snakemake.output.timing, prov)
    seconds = [
        {"solver": r.solver, "k": int(r.k), "seconds": float(r.seconds)} for r in frame.itertuples()
    ]
    write_bytes_atomic(snakemake.output.seconds, (json.dumps(seconds, indent=2) + "\n").encode())


run_job(snakemake, main)
