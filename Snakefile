# The softmax-overconfidence / OOD reproducibility workflow.
# Usage: snakemake --cores all [--use-conda] [--configfile config/smoke.yaml]
from snakemake.utils import min_version

min_version("9.0")


# Paths are relative to the checkout: `snakemake --snakefile ../Snakefile` from a subfolder runs
# here; `-d <elsewhere>` stops with one sentence (inputs and code live in the checkout).
workdir: workflow.basedir


import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

# This checkout's library (scripts add the same path: they also run in --use-conda envs), and
# the studies it registers (src/softmax_ood/studies/registry.py). The core rules and library
# know no study: they get these modules handed in.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from softmax_ood.config import ConfigError, checked_configfile
from softmax_ood.studies.registry import registered_studies

if Path.cwd().resolve() != Path(workflow.basedir).resolve():
    raise WorkflowError(
        f"config error: this workflow runs in its checkout {workflow.basedir}, not in "
        f"{Path.cwd()}; drop -d/--directory (or give -d {workflow.basedir})"
    )
try:
    _DEFAULT_CONFIG = checked_configfile(Path(workflow.basedir) / "config/default.yaml")
except ConfigError as err:
    raise WorkflowError(str(err)) from None


configfile: _DEFAULT_CONFIG


KNOWN_STUDIES = registered_studies()


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"


# each enabled study's own rules (src/softmax_ood/studies/<name>/rules.smk)
for _study in STUDIES.values():

    include: os.path.relpath(_study.RULES, workflow.basedir)


# the results section across the enabled studies (reports/results.html, results_section.tex)
include: "rules/results.smk"


onerror:
    print(
        "To resume: rerun the same command (incomplete files are redone); after a kill, "
        "if the folder is locked: snakemake --unlock, then rerun.",
        file=sys.stderr,
    )


rule all:
    default_target: True
    input:
        final_outputs(),
        results_targets(),
