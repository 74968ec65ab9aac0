"""Snakemake script: the discriminator's L2 strength, chosen on the validation split's shift grid."""

import json

from softmax_ood.cli import run_job
from softmax_ood.provenance import provenance_record, write_bytes_atomic, write_parquet
from softmax_ood.studies.kang.discrimination import choose_alpha


def main():
    spec, out = snakemake.params.spec, snakemake.output
    alpha, table = choose_alpha(snakemake.input.data, spec)
    prov = provenance_record(
        inputs={"data": snakemake.input.data},
        config={"featurizer": spec["featurizer"], "discriminator": spec["discriminator"]},
    )
    write_parquet(table, out.table, prov)
    write_bytes_atomic(out.alpha, (json.dumps({"alpha": alpha}, sort_keys=True) + "\n").encode())


run_job(snakemake, main)
