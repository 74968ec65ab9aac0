"""Snakemake script: the Kang per-run grid evaluations and discriminator scores -> long frames."""

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.kang.frames import eval_paths, load_frames


def main():
    inp, spec = snakemake.input, snakemake.params.spec
    frames = load_frames(
        eval_paths(list(inp.evals)), list(inp.scores), spec, inp.index, inp.selection
    )
    inputs = {f"eval:{q}": q for q in inp.evals if q.endswith("sets.parquet")}
    inputs.update({f"scores:{q}": q for q in inp.scores})
    prov = provenance_record(inputs=inputs, config=spec, seeds=spec["seeds"])
    for name, frame in frames.items():
        write_parquet(frame.reset_index(drop=True), getattr(snakemake.output, name), prov)


run_job(snakemake, main)
