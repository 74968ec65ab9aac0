# The rules every study shares, written once and instantiated per enabled study from its
# registration (the Study protocol): its claims table, from its frames by the
# function its claims_job(config) names, and its papermill report, from what its
# report_job(config) lists. A study's own rules.smk keeps its compute, table and figure steps.

for _study in STUDIES.values():
    _claims = _study.claims_job(config)
    _report = _study.report_job(config)
    _out = f"results/{_study.NAME}/{DATASET}"
    _notebook = os.path.relpath(Path(_study.RULES).parent / "report.ipynb")

    rule:
        name:
            f"{_study.NAME}_claims"
        input:
            **dict(_claims.inputs),
            code=code("workflow/scripts/study_claims.py") + module_code(_claims.function),
        output:
            claims=f"{_out}/claims.parquet",
            provenance=f"{_out}/claims.prov.json",
            markdown=report(
                f"{_out}/claims.md",
                caption=caption(f"{_study.NAME}_claims.rst"),
                category=_study.CATEGORY,
            ),
        log:
            f"logs/{_study.NAME}/{DATASET}/claims.log",
        benchmark:
            f"logs/benchmarks/{_study.NAME}_claims/{DATASET}/claims.tsv"
        conda:
            ENV_REPORT
        params:
            job=_claims.params(),
            frames=list(_claims.inputs),
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
                caption=caption(f"{_study.NAME}_notebook.rst"),
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
            RENDER_REPORT
