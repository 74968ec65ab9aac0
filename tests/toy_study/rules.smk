# The toy study's one compute step: its frame from its config section alone.
from toy_study.study import base as _toy_base, spec as _toy_spec


rule toy_lines:
    output:
        lines=f"{_toy_base(config)}/lines.parquet",
        provenance=f"{_toy_base(config)}/lines.prov.json",
    log:
        f"logs/toy/{DATASET}/lines.log",
    params:
        section=_toy_spec(config),
    run:
        from softmax_ood.provenance import provenance_record, write_parquet
        from toy_study.lines import lines

        prov = provenance_record(inputs={}, config=params.section, seeds=params.section["seeds"])
        write_parquet(lines(params.section), output.lines, prov)  # and lines.prov.json
