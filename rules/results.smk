# The results section across every enabled study (study-agnostic: each study's tables, figures
# and claims are read from its targets). Outputs: results/claims_all.{parquet,csv},
# results/audit.json, every table/figure under results/<study>/<ds>/latex/, the document
# results/results_section.tex, and the page reports/results.{ipynb,html}. Its Python (what each
# study contributes, results_targets) is in rules/targets.smk.
rule results_claims:
    input:
        claims=list(RESULTS_CLAIMS.values()),
        code=code("workflow/scripts/results_claims.py"),
    output:
        parquet="results/claims_all.parquet",
        csv=report(
            "results/claims_all.csv",
            caption="../workflow/report/claims_all.rst",
            category="Results section",
        ),
    log:
        "logs/results/claims.log",
    benchmark:
        "logs/benchmarks/results_claims/claims.tsv"
    conda:
        "../envs/report.yaml"
    params:
        claims=RESULTS_CLAIMS,
    script:
        "../workflow/scripts/results_claims.py"


rule results_latex:
    input:
        tables=RESULTS_TABLES,
        figures=RESULTS_FIGURES,
        claims="results/claims_all.parquet",
        paper=[s.paper_values for s in RESULTS_STUDIES if s.paper_values],
        code=code("workflow/scripts/results_latex.py"),
    output:
        section="results/results_section.tex",  # first: its outputs record is beside it
        fragments=[latex_path(p) for p in RESULTS_TABLES + RESULTS_FIGURES],
    log:
        "logs/results/latex.log",
    benchmark:
        "logs/benchmarks/results_latex/latex.tsv"
    conda:
        "../envs/report.yaml"
    params:
        studies=[vars(s) for s in RESULTS_STUDIES],
    script:
        "../workflow/scripts/results_latex.py"


rule results_audit:
    # the audit as a rule: a stale or tampered input of any table or figure shows on the page
    input:
        files=RESULTS_TABLES + RESULTS_FIGURES + list(RESULTS_CLAIMS.values()),
        code=code("workflow/scripts/results_audit.py"),
    output:
        "results/audit.json",
    log:
        "logs/results/audit.log",
    benchmark:
        "logs/benchmarks/results_audit/audit.tsv"
    conda:
        "../envs/report.yaml"
    params:
        files=RESULTS_TABLES + RESULTS_FIGURES + list(RESULTS_CLAIMS.values()),
    script:
        "../workflow/scripts/results_audit.py"


rule results_report:
    input:
        notebook="workflow/notebooks/results.ipynb",
        claims="results/claims_all.parquet",
        audit="results/audit.json",
        section="results/results_section.tex",
        paper=[s.paper_values for s in RESULTS_STUDIES if s.paper_values],
        tables=RESULTS_TABLES,
        figures=RESULTS_FIGURES,
        code=code("workflow/scripts/render_report.py")
        + code("workflow/notebooks/results.ipynb"),
    output:
        notebook="reports/results.ipynb",
        html=report(
            "reports/results.html",
            caption="../workflow/report/results.rst",
            category="Results section",
        ),
    log:
        "logs/results/report.log",
    benchmark:
        "logs/benchmarks/results_report/report.tsv"
    conda:
        "../envs/report.yaml"
    params:
        parameters=lambda w, input: {
            "studies_json": json.dumps([vars(s) for s in RESULTS_STUDIES]),
            "claims_path": input.claims,
            "audit_path": input.audit,
        },
    script:
        "../workflow/scripts/render_report.py"
