# The rules every study shares, written once and instantiated per enabled study from its
# registration (the Study protocol): its tables and figures, one job each, drawn from its frames
# by the functions its table_job(config) / figure_job(config) name (a study whose hook returns
# None makes no such item here); its claims table, from its frames by the function
# its claims_job(config) names (judged again on the replication seeds' frames when the config
# replicates the study: its replication_job, inputs prefixed "replication_"); and its papermill
# report, from what its report_job(config) lists. A study's own rules.smk keeps its compute steps.

for _study in STUDIES.values():
    _claims = _study.claims_job(config)
    _replication = replication_job(_study, config)
    _fresh = {} if _replication is None else dict(_replication.inputs)
    _report = _study.report_job(config)
    _out = results_dir(_study.NAME, config)
    _notebook = os.path.relpath(Path(_study.RULES).parent / "report.ipynb")
    _tables = _study.table_job(config)
    _figures = _study.figure_job(config)

    if _tables is not None:

        rule:
            name:
                f"{_study.NAME}_table"
            input:
                unpack(item_inputs(_tables.inputs, "table")),
                code=code("workflow/scripts/study_table.py")
                + module_code(_tables.functions)
                + (module_code(_tables.labels) if _tables.labels else []),
            output:
                table=f"{_out}/tables/{{table}}.parquet",
                provenance=f"{_out}/tables/{{table}}.prov.json",
                markdown=report(
                    f"{_out}/tables/{{table}}.md",
                    caption=study_caption(_study, "table"),
                    category=_study.CATEGORY,
                    subcategory="Tables",
                    labels={"table": "{table}"},
                ),
            log:
                f"logs/{_study.NAME}/{DATASET}/{{table}}.log",
            benchmark:
                f"logs/benchmarks/{_study.NAME}_table/{DATASET}/{{table}}.tsv"
            wildcard_constraints:
                table="|".join(_tables.inputs),
            conda:
                ENV_REPORT
            params:
                job=_tables.params(),
            script:
                "../workflow/scripts/study_table.py"

    if _figures is not None:

        rule:
            name:
                f"{_study.NAME}_figure"
            input:
                unpack(item_inputs(_figures.inputs, "fig")),
                code=code("workflow/scripts/study_figure.py") + module_code(_figures.functions),
            output:
                figure=report(
                    f"{_out}/figures/{{fig}}.png",
                    caption=study_caption(_study, "figure"),
                    category=_study.CATEGORY,
                    subcategory="Figures",
                    labels={"figure": "{fig}"},
                ),
                provenance=f"{_out}/figures/{{fig}}.prov.json",
            log:
                f"logs/{_study.NAME}/{DATASET}/{{fig}}.log",
            benchmark:
                f"logs/benchmarks/{_study.NAME}_figure/{DATASET}/{{fig}}.tsv"
            wildcard_constraints:
                fig="|".join(_figures.inputs),
            conda:
                ENV_REPORT
            params:
                job=_figures.params(),
            script:
                "../workflow/scripts/study_figure.py"

    rule:
        name:
            f"{_study.NAME}_claims"
        input:
            **dict(_claims.inputs),
            **{f"replication_{k}": v for k, v in _fresh.items()},
            code=code("workflow/scripts/study_claims.py") + module_code(_claims.function),
        output:
            claims=f"{_out}/claims.parquet",
            provenance=f"{_out}/claims.prov.json",
            markdown=report(
                f"{_out}/claims.md",
                caption=study_caption(_study, "claims"),
                category=_study.CATEGORY,
            ),
        log:
            f"logs/{_study.NAME}/{DATASET}/claims.log",
        benchmark:
            f"logs/benchmarks/{_study.NAME}_claims/{DATASET}/claims.tsv"
        conda:
            ENV_REPORT
        resources:
            mem_mb=_claims.mem_mb,
        params:
            job=_claims.params(),
            frames=list(_claims.inputs),
            replication=None if _replication is None else _replication.params(),
            replication_frames=list(_fresh),
        script:
            "../workflow/scripts/study_claims.py"

    rule:
        name:
            f"{_study.NAME}_report"
        input:
            notebook=_notebook,
            **dict(_report.inputs),
            code=code("workflow/scripts/render_report.py") + code(_notebook),
        output:
            notebook=f"reports/{_study.NAME}.ipynb",
            html=report(
                f"reports/{_study.NAME}.html",
                caption=study_caption(_study, "notebook"),
                category=_study.CATEGORY,
            ),
        log:
            f"logs/{_study.NAME}/report.log",
        benchmark:
            f"logs/benchmarks/{_study.NAME}_report/report.tsv"
        conda:
            ENV_REPORT
        params:
            parameters=dict(_report.parameters),
        script:
            "../workflow/scripts/render_report.py"
