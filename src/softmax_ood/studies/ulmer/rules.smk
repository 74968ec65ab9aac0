# The Ulmer & Cinà study (Know your limits): per (dataset, seed) train + evaluate -> per dataset
# aggregate (tables) -> figures, claims -> report; plus the softmax note. No core training run.
# Included by the Snakefile when "ulmer" is in config["studies"]; paths in script:/conda: are
# relative to this file, inputs/outputs to the working directory. The dataset wildcard is
# {uds} (the core's {dataset} is the core ID dataset).

UL_STUDY = STUDIES["ulmer"]
UL_SPEC = UL_STUDY.spec(config)
UL_DIR = "src/softmax_ood/studies/ulmer"
UL = "results/ulmer"
UL_GRID = UL_STUDY.GRID_DATASET
UL_ENV = "../../../../envs/report.yaml"


wildcard_constraints:
    uds="|".join(UL_STUDY.DATASETS),


rule ulmer_run:
    # breast cancer: train every kind with one seed, held-out accuracy, scaling experiment
    input:
        code=code(f"{UL_DIR}/scripts/run.py"),
    output:
        fit=f"{UL}/{{uds}}/seed{{seed}}/fit.parquet",
        scaling=f"{UL}/{{uds}}/seed{{seed}}/scaling.parquet",
        provenance=multiext(
            f"{UL}/{{uds}}/seed{{seed}}/", "fit.prov.json", "scaling.prov.json"
        ),
    log:
        "logs/ulmer/{uds}/seed{seed}.log",
    wildcard_constraints:
        uds="|".join(d for d in UL_STUDY.DATASETS if d != UL_GRID),
    conda:
        UL_ENV
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        spec=lambda w: UL_STUDY.run_spec(config, w.uds),
    script:
        "scripts/run.py"


rule ulmer_run_grid:
    # the 2-D data: the same, plus the Fig. 1 grid of every kind
    input:
        code=code(f"{UL_DIR}/scripts/run.py"),
    output:
        fit=f"{UL}/{{uds}}/seed{{seed}}/fit.parquet",
        scaling=f"{UL}/{{uds}}/seed{{seed}}/scaling.parquet",
        grid=f"{UL}/{{uds}}/seed{{seed}}/grid.parquet",
        train_points=f"{UL}/{{uds}}/seed{{seed}}/train_points.parquet",
        provenance=multiext(
            f"{UL}/{{uds}}/seed{{seed}}/",
            "fit.prov.json",
            "scaling.prov.json",
            "grid.prov.json",
            "train_points.prov.json",
        ),
    log:
        "logs/ulmer/{uds}/seed{seed}.log",
    wildcard_constraints:
        uds=UL_GRID,
    conda:
        UL_ENV
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        spec=lambda w: UL_STUDY.run_spec(config, w.uds),
    script:
        "scripts/run.py"


rule ulmer_aggregate:
    input:
        fit=lambda w: UL_STUDY.seed_files(config, w.uds, "fit.parquet"),
        scaling=lambda w: UL_STUDY.seed_files(config, w.uds, "scaling.parquet"),
        code=code(f"{UL_DIR}/scripts/aggregate.py"),
    output:
        fit=f"{UL}/{{uds}}/fit.parquet",
        scaling=f"{UL}/{{uds}}/scaling.parquet",
        fit_table=f"{UL}/{{uds}}/tables/fit.parquet",
        scaling_table=f"{UL}/{{uds}}/tables/scaling.parquet",
        fit_md=report(
            f"{UL}/{{uds}}/tables/fit.md",
            caption="../../../../workflow/report/ulmer_table.rst",
            category="Ulmer & Cinà",
            subcategory="Tables",
            labels={"dataset": "{uds}", "table": "fit"},
        ),
        scaling_md=report(
            f"{UL}/{{uds}}/tables/scaling.md",
            caption="../../../../workflow/report/ulmer_table.rst",
            category="Ulmer & Cinà",
            subcategory="Tables",
            labels={"dataset": "{uds}", "table": "scaling"},
        ),
        provenance=[
            f"{UL}/{{uds}}/fit.prov.json",
            f"{UL}/{{uds}}/scaling.prov.json",
            f"{UL}/{{uds}}/tables/fit.prov.json",
            f"{UL}/{{uds}}/tables/scaling.prov.json",
        ],
    log:
        "logs/ulmer/{uds}/aggregate.log",
    conda:
        UL_ENV
    script:
        "scripts/aggregate.py"


rule ulmer_fig1:
    input:
        grid=f"{UL}/{UL_GRID}/seed{UL_SPEC['grid']['seed']}/grid.parquet",
        points=f"{UL}/{UL_GRID}/seed{UL_SPEC['grid']['seed']}/train_points.parquet",
        code=code(f"{UL_DIR}/scripts/fig1.py"),
    output:
        figures=[
            report(
                f"{UL}/{UL_GRID}/figures/{name}.png",
                caption="../../../../workflow/report/ulmer_figure.rst",
                category="Ulmer & Cinà",
                subcategory="Figures",
                labels={"figure": name},
            )
            for name in UL_STUDY.fig1_names(config)
        ],
        provenance=f"{UL}/{UL_GRID}/figures/fig1.prov.json",
    log:
        "logs/ulmer/fig1.log",
    conda:
        UL_ENV
    params:
        spec=UL_SPEC["grid"],
    script:
        "scripts/fig1.py"


rule ulmer_scaling_figure:
    input:
        scaling=f"{UL}/{{uds}}/scaling.parquet",
        code=code(f"{UL_DIR}/scripts/scaling_figure.py"),
    output:
        figure=report(
            f"{UL}/{{uds}}/figures/scaling.png",
            caption="../../../../workflow/report/ulmer_figure.rst",
            category="Ulmer & Cinà",
            subcategory="Figures",
            labels={"figure": "scaling", "dataset": "{uds}"},
        ),
        provenance=f"{UL}/{{uds}}/figures/scaling.prov.json",
    log:
        "logs/ulmer/{uds}/scaling_figure.log",
    conda:
        UL_ENV
    script:
        "scripts/scaling_figure.py"


rule ulmer_note:
    input:
        code=code(f"{UL_DIR}/scripts/note.py"),
    output:
        sharpness=f"{UL}/softmax_note/sharpness.parquet",
        jacobian=f"{UL}/softmax_note/jacobian.parquet",
        checks=f"{UL}/softmax_note/checks.parquet",
        markdown=report(
            f"{UL}/softmax_note/checks.md",
            caption="../../../../workflow/report/ulmer_table.rst",
            category="Ulmer & Cinà",
            subcategory="Softmax note",
        ),
        provenance=multiext(
            f"{UL}/softmax_note/",
            "sharpness.prov.json",
            "jacobian.prov.json",
            "checks.prov.json",
        ),
    log:
        "logs/ulmer/note.log",
    conda:
        UL_ENV
    params:
        spec=UL_SPEC["note"],
    script:
        "scripts/note.py"


rule ulmer_note_figure:
    input:
        sharpness=f"{UL}/softmax_note/sharpness.parquet",
        code=code(f"{UL_DIR}/scripts/note_figure.py"),
    output:
        figure=report(
            f"{UL}/softmax_note/figure.png",
            caption="../../../../workflow/report/ulmer_figure.rst",
            category="Ulmer & Cinà",
            subcategory="Softmax note",
        ),
        provenance=f"{UL}/softmax_note/figure.prov.json",
    log:
        "logs/ulmer/note_figure.log",
    conda:
        UL_ENV
    script:
        "scripts/note_figure.py"


rule ulmer_claims:
    input:
        fit=expand(f"{UL}/{{uds}}/fit.parquet", uds=UL_STUDY.DATASETS),
        scaling=expand(f"{UL}/{{uds}}/scaling.parquet", uds=UL_STUDY.DATASETS),
        code=code(f"{UL_DIR}/scripts/claims.py"),
    output:
        claims=f"{UL}/claims.parquet",
        provenance=f"{UL}/claims.prov.json",
        markdown=report(
            f"{UL}/claims.md",
            caption="../../../../workflow/report/ulmer_claims.rst",
            category="Ulmer & Cinà",
        ),
    log:
        "logs/ulmer/claims.log",
    conda:
        UL_ENV
    params:
        spec={**UL_SPEC["claims"], "confident": UL_SPEC["scaling"]["confident"]},
    script:
        "scripts/claims.py"


rule ulmer_report:
    # the shared renderer executes the notebook and writes a deterministic .ipynb and an .html
    # without code
    input:
        notebook=f"{UL_DIR}/report.ipynb",
        claims=f"{UL}/claims.parquet",
        tables=expand(
            f"{UL}/{{uds}}/tables/{{t}}.parquet",
            uds=UL_STUDY.DATASETS,
            t=("fit", "scaling"),
        ),
        figures=expand(f"{UL}/{{uds}}/figures/scaling.png", uds=UL_STUDY.DATASETS)
        + expand(f"{UL}/{UL_GRID}/figures/{{f}}.png", f=UL_STUDY.fig1_names(config)),
        note=f"{UL}/softmax_note/checks.parquet",
        note_figure=f"{UL}/softmax_note/figure.png",
        scaling=expand(f"{UL}/{{uds}}/scaling.parquet", uds=UL_STUDY.DATASETS),
        provenance=f"{UL}/claims.prov.json",
        code=code("workflow/scripts/render_report.py") + code(f"{UL_DIR}/report.ipynb"),
    output:
        notebook="reports/ulmer.ipynb",
        html=report(
            "reports/ulmer.html",
            caption="../../../../workflow/report/ulmer_notebook.rst",
            category="Ulmer & Cinà",
        ),
    log:
        "logs/ulmer/report.log",
    conda:
        UL_ENV
    params:
        parameters=lambda w, input: {
            "results_dir": UL,
            "grid_dataset": UL_GRID,
            "provenance_path": input.provenance,
        },
    script:
        "../../../../workflow/scripts/render_report.py"
