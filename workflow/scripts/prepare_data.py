"""Snakemake script: build data/<dataset>/ (embedded offline data: digits, or Fashion-MNIST
from Debian's package or its checked download; or the paper downloads)."""

import os

from softmax_ood.cli import run_job


def main():
    d = dict(snakemake.params.data)
    if d["source"] == "embedded":
        common = {k: d[k] for k in ("seed", "val_fraction", "ood_size", "ood_test", "ood_val")}
        common.update(id_classes=d["id_classes"], image_size=d["image_size"])
        if d["dataset"] == "fashion":
            from softmax_ood.fashion import make_fashion_dataset
            from softmax_ood.paper_data import load_paper_config

            sources = load_paper_config(d["sources"])
            make_fashion_dataset(
                snakemake.output[0], sources, "data/raw", sources_file=d["sources"], **common
            )
        else:
            from softmax_ood.data import make_embedded_dataset

            make_embedded_dataset(snakemake.output[0], test_fraction=d["test_fraction"], **common)
    else:
        from softmax_ood.paper_data import load_paper_config, prepare_paper_data

        prepare_paper_data(
            os.path.dirname(snakemake.input.raw[0]),
            snakemake.output[0],
            load_paper_config(d["sources"]),
            seed=d["seed"],
            val_fraction=d["val_fraction"],
            id_dataset=d["dataset"],
            ood_test=d["ood_test"],
            image_size=d["image_size"],
            sources_file=d["sources"],
        )


run_job(snakemake, main)
