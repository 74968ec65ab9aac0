"""Snakemake script: the study's per-run evaluation files -> its long tables (with provenance),
and the pixel-statistics floor of every OOD set beside CE (which sets are trivial)."""

from softmax_ood.analysis.aggregate import aggregate_runs
from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.logitnorm.floor import floor_frame, load_images
from softmax_ood.studies.logitnorm.frames import (
    full_precision_samples,
    mark_trivial,
    with_reference_fpr,
)


def main():
    inp, out, spec = snakemake.input, snakemake.output, snakemake.params.spec
    frames = aggregate_runs(
        list(inp.summaries),
        list(inp.curves),
        list(inp.samples),
        main_arch=spec["main_arch"],
        losses=snakemake.params.losses,
    )
    # every architecture's and score's per-image values: each comparison's bootstrap
    frames["samples"] = full_precision_samples(list(inp.samples))
    sets = sorted(set(frames["samples"]["set"]) - {"id"})
    frames["floor"] = floor_frame(frames["samples"], load_images(inp.data, sets), spec)
    frames["ood"] = with_reference_fpr(
        mark_trivial(frames["ood"], frames["floor"]), frames["samples"]
    )
    inputs = {"data": inp.data}
    inputs.update({f"summary:{p}": p for p in inp.summaries})
    prov = provenance_record(inputs=inputs, config=spec, seeds=spec["seeds"])
    for name, frame in frames.items():
        write_parquet(frame, getattr(out, name), prov)


run_job(snakemake, main)
