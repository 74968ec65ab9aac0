# The Ulmer & Cinà study (Know your limits): per (dataset, seed) train + evaluate -> per dataset
# aggregate (tables) -> figures, claims -> report; plus the softmax note. No core training run.
# Everything is written under results/ulmer/<data.dataset>/ (UL below), like every study; the
# study's own data sets are the {uds} wildcard (the core's {dataset} is the core ID dataset).
# Included by the Snakefile when "ulmer" is in config["studies"]; script:/conda: paths are
# relative to this file, inputs/outputs to the working directory.

UL_STUDY = STUDIES["ulmer"]
UL_SPEC = UL_STUDY.spec(config)
UL_DIR = "src/softmax_ood/studies/ulmer"
UL = UL_STUDY.base(config)
UL_GRID = UL_STUDY.GRID_DATASET


wildcard_constraints:
    uds="|".join(UL_STUDY.DATASETS),


# one (dataset, seed) job: train every kind and the control with one seed, fit, scaling,
# directions, data size; on the 2-D data (ulmer_run_grid) also the Fig. 1 grid of every kind.
# One template, two rules: Snakemake needs each rule's outputs fixed, and only the 2-D data has
# the grid's two extra frames.
for _rule, _frames, _uds in (
    ("ulmer_run", UL_STUDY.FRAMES, "|".join(d for d in UL_STUDY.DATASETS if d != UL_GRID)),
    ("ulmer_run_grid", UL_STUDY.FRAMES + UL_STUDY.GRID_FRAMES, UL_GRID),
):

    rule:
        name:
            _rule
        input:
            code=code(f"{UL_DIR}/scripts/run.py"),
        output:
            **{n: f"{UL}/runs/{{uds}}/seed{{seed}}/{n}.parquet" for n in _frames},
            provenance=multiext(
                f"{UL}/runs/{{uds}}/seed{{seed}}/", *(f"{n}.prov.json" for n in _frames)
            ),
        log:
            f"logs/ulmer/{{uds}}/seed{{seed}}.log",
        benchmark:
            f"logs/benchmarks/{_rule}/run_{{uds}}_seed{{seed}}.tsv"
        wildcard_constraints:
            uds=_uds,
        conda:
            ENV_TORCH  # its models are torch networks (studies/ulmer/uncertainty.py)
        resources:
            mem_mb=1000,
            runtime=10,
        params:
            spec=lambda w: UL_STUDY.run_spec(config, w.uds),
        script:
            "scripts/run.py"


rule ulmer_aggregate:
    input:
        unpack(UL_STUDY.frame_inputs(config, UL_STUDY.FRAMES)),
        code=code(f"{UL_DIR}/scripts/aggregate.py"),
    output:
        fit=f"{UL}/frames/{{uds}}/fit.parquet",
        scaling=f"{UL}/frames/{{uds}}/scaling.parquet",
        directions=f"{UL}/frames/{{uds}}/directions.parquet",
        datasize=f"{UL}/frames/{{uds}}/datasize.parquet",
        tables=[f"{UL}/tables/{t}_{{uds}}.parquet" for t in UL_STUDY.TABLE_KINDS],
        markdown=[
            report(
                f"{UL}/tables/{t}_{{uds}}.md",
                caption=caption("ulmer_table.rst"),
                category=UL_STUDY.CATEGORY,
                subcategory="Tables",
                labels={"dataset": "{uds}", "table": t},
            )
            for t in UL_STUDY.TABLE_KINDS
        ],
        provenance=[
            f"{UL}/frames/{{uds}}/{n}.prov.json"
            for n in UL_STUDY.FRAMES
        ]
        + [f"{UL}/tables/{t}_{{uds}}.prov.json" for t in UL_STUDY.TABLE_KINDS],
    log:
        f"logs/ulmer/{{uds}}/aggregate.log",
    benchmark:
        f"logs/benchmarks/ulmer_aggregate/aggregate_{{uds}}.tsv"
    conda:
        ENV_REPORT
    params:
        spec=lambda w: UL_STUDY.claims_spec(config),
    script:
        "scripts/aggregate.py"


rule ulmer_note:
    input:
        code=code(f"{UL_DIR}/scripts/note.py"),
    output:
        sharpness=f"{UL}/frames/softmax_note/sharpness.parquet",
        jacobian=f"{UL}/frames/softmax_note/jacobian.parquet",
        checks=f"{UL}/tables/softmax_note.parquet",
        markdown=report(
            f"{UL}/tables/softmax_note.md",
            caption=caption("ulmer_table.rst"),
            category=UL_STUDY.CATEGORY,
            subcategory="Softmax note",
        ),
        provenance=[
            f"{UL}/frames/softmax_note/sharpness.prov.json",
            f"{UL}/frames/softmax_note/jacobian.prov.json",
            f"{UL}/tables/softmax_note.prov.json",
        ],
    log:
        "logs/ulmer/note.log",
    benchmark:
        "logs/benchmarks/ulmer_note/note.tsv"
    conda:
        ENV_REPORT
    params:
        spec=UL_SPEC["note"],
    script:
        "scripts/note.py"
