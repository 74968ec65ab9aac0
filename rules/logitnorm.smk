# The LogitNorm study (Wei et al. 2022): aggregate -> tables, figures, claims -> report.
import os

LN = "results/logitnorm/{dataset}"
LNX = f"results/logitnorm/{DATASET}"


rule logitnorm_aggregate:
    input:
        summaries=lambda w: run_dirs("eval", "summary.json"),
        samples=lambda w: run_dirs("eval", "msp.parquet"),
        curves=lambda w: run_dirs("train", "curve.tsv"),
        data="data/{dataset}",
        code="src/softmax_ood/aggregate.py",
    output:
        runs=f"{LN}/runs.parquet",
        ood=f"{LN}/ood.parquet",
        curves=f"{LN}/curves.parquet",
        samples=f"{LN}/samples.parquet",
        provenance=multiext(
            f"{LN}/",
            "runs.prov.json",
            "ood.prov.json",
            "curves.prov.json",
            "samples.prov.json",
        ),
    log:
        "logs/logitnorm/{dataset}/aggregate.log",
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
    params:
        config=config,
        main_arch=config["logitnorm"]["main_arch"],
        losses=LOSSES,
    script:
        "../workflow/scripts/aggregate.py"


rule logitnorm_table:
    input:
        runs=f"{LN}/runs.parquet",
        ood=f"{LN}/ood.parquet",
        code="src/softmax_ood/tables.py",
    output:
        table=f"{LN}/tables/{{table}}.parquet",
        provenance=f"{LN}/tables/{{table}}.prov.json",
        markdown=report(
            f"{LN}/tables/{{table}}.md",
            caption="../workflow/report/table.rst",
            category="LogitNorm",
            subcategory="Tables",
            labels={"table": "{table}"},
        ),
    log:
        "logs/logitnorm/{dataset}/{table}.log",
    wildcard_constraints:
        table=r"table[1-6]|tau_ablation",
    conda:
        "../envs/report.yaml"
    params:
        spec=lambda w: study_spec(),
        config=config,
    script:
        "../workflow/scripts/table.py"


rule logitnorm_figure:
    input:
        runs=f"{LN}/runs.parquet",
        ood=f"{LN}/ood.parquet",
        curves=f"{LN}/curves.parquet",
        samples=f"{LN}/samples.parquet",
        code=["src/softmax_ood/figures.py", "src/softmax_ood/tables.py"],
    output:
        figure=report(
            f"{LN}/figures/{{fig}}.png",
            caption="../workflow/report/figure.rst",
            category="LogitNorm",
            subcategory="Figures",
            labels={"figure": "{fig}"},
        ),
        provenance=f"{LN}/figures/{{fig}}.prov.json",
    log:
        "logs/logitnorm/{dataset}/{fig}.log",
    wildcard_constraints:
        fig=r"fig[145]",
    conda:
        "../envs/report.yaml"
    params:
        spec=lambda w: study_spec(),
        config=config,
    script:
        "../workflow/scripts/figure.py"


rule logitnorm_claims:
    input:
        runs=f"{LN}/runs.parquet",
        ood=f"{LN}/ood.parquet",
        curves=f"{LN}/curves.parquet",
        code="src/softmax_ood/claims.py",
    output:
        claims=f"{LN}/claims.parquet",
        provenance=f"{LN}/claims.prov.json",
        markdown=report(
            f"{LN}/claims.md",
            caption="../workflow/report/claims.rst",
            category="LogitNorm",
        ),
    log:
        "logs/logitnorm/{dataset}/claims.log",
    conda:
        "../envs/report.yaml"
    params:
        spec=lambda w: study_spec(),
        config=config,
    script:
        "../workflow/scripts/claims.py"


rule logitnorm_report:
    # the config decides which dataset the report shows
    input:
        notebook="workflow/notebooks/logitnorm.ipynb",
        tables=expand(
            f"{LNX}/tables/{{table}}.parquet",
            table=[f"table{i}" for i in range(1, 7)] + ["tau_ablation"],
        ),
        figures=expand(f"{LNX}/figures/{{fig}}.png", fig=["fig1", "fig4", "fig5"]),
        claims=f"{LNX}/claims.parquet",
        provenance=f"{LNX}/tables/table1.prov.json",
        paper="config/paper_values/logitnorm.csv",
    output:
        notebook="reports/logitnorm.ipynb",
        html=report(
            "reports/logitnorm.html",
            caption="../workflow/report/notebook.rst",
            category="LogitNorm",
        ),
    log:
        "logs/logitnorm/report.log",
    conda:
        "../envs/report.yaml"
    params:
        tables_dir=lambda w, input: os.path.dirname(input.tables[0]),
        figures_dir=lambda w, input: os.path.dirname(input.figures[0]),
    shell:
        "(papermill {input.notebook} {output.notebook} --cwd . --kernel python3 "
        "-p tables_dir {params.tables_dir} -p figures_dir {params.figures_dir} "
        "-p claims_path {input.claims} -p paper_values_path {input.paper} "
        "-p provenance_path {input.provenance} "
        "&& jupyter nbconvert --to html --output-dir reports {output.notebook}) > {log} 2>&1"
