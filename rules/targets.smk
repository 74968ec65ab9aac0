# What the workflow makes: every enabled study's targets and report captions (rules/study.smk),
# and what each contributes to the results section (rules/results.smk), in the papers' order.

def final_outputs():
    """Every enabled study's targets (the default target's inputs, with results_targets)."""
    return [t for study in STUDIES.values() for t in study.targets(config)]




def study_caption(study, kind):
    """A study's Snakemake-report caption of ``kind`` (its package's ``captions/<kind>.rst``,
    else ``workflow/report/<NAME>_<kind>.rst``), absolute: for rules/study.smk."""
    return str(Path(workflow.basedir) / caption_of_study(study, kind))


# -- the results section (rules/results.smk): what each enabled study contributes, read from
# its targets, in the papers' order (KNOWN_STUDIES, handed in by the Snakefile)
from softmax_ood.results_section.latex import latex_path  # noqa: E402
from softmax_ood.results_section.outputs import study_outputs  # noqa: E402

RESULTS_STUDIES = study_outputs(
    {name: STUDIES[name] for name in KNOWN_STUDIES if name in STUDIES}, config
)
RESULTS_TABLES = [t for s in RESULTS_STUDIES for t in s.tables]
RESULTS_FIGURES = [f for s in RESULTS_STUDIES for f in s.figures]
RESULTS_CLAIMS = {s.name: s.claims for s in RESULTS_STUDIES if s.claims}


def results_targets():
    if not RESULTS_STUDIES:
        return []
    return [
        "results/claims_all.parquet",
        "results/claims_all.csv",
        "results/results_section.tex",
        "reports/results.ipynb",
        "reports/results.html",
    ]
