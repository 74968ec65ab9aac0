"""Snakemake script: one frame of the Seddik study computed from the config alone (Figs. 2-4,
validation), as parquet with provenance."""

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_parquet
from softmax_ood.studies.seddik import experiments

BUILDERS = {
    "fig2": experiments.fig2_frame,
    "fig3": experiments.fig3_frame,
    "fig4": experiments.fig4_frame,
    "validation": experiments.validation_frame,
}


def main():
    name, kwargs = snakemake.wildcards.frame, dict(snakemake.params.kwargs)
    if "digits" in kwargs:
        kwargs["digits"] = tuple(kwargs["digits"])
    frame = BUILDERS[name](**kwargs)
    prov = provenance_record(
        inputs={},
        config=kwargs,
        seeds=kwargs.get("seeds"),
        extra={"frame": name},
    )
    write_parquet(frame, snakemake.output.frame, prov)


run_job(snakemake, main)
