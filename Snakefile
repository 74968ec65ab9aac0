# The softmax-overconfidence / OOD reproducibility workflow.
# Usage: snakemake --cores all [--use-conda] [--configfile config/smoke.yaml]
from snakemake.utils import min_version

min_version("9.0")


# Paths are relative to the checkout: `snakemake --snakefile ../Snakefile` from a subfolder runs
# here; `-d <elsewhere>` stops with one sentence (inputs and code live in the checkout).
workdir: workflow.basedir


import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

# This checkout's library, and the studies it registers (src/softmax_ood/studies/registry.py).
# The core rules and library know no study: they get these modules handed in.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))
# Every Python a job starts (scripts, notebook kernels; locally, in --use-conda envs and on a
# cluster) finds this checkout's library first and starts with workflow/jobstart/sitecustomize.py
# (softmax_ood.cli.set_job_pythonpath).
from softmax_ood.cli import set_job_pythonpath

set_job_pythonpath(workflow.basedir)
from softmax_ood.config import ConfigError, checked_configfile
from softmax_ood.studies.registry import (
    registered_studies,
    replication_job,
    replication_seeds,
    results_dir,
    with_seeds,
)
from softmax_ood.studies.registry import study_caption as caption_of_study

if Path.cwd().resolve() != Path(workflow.basedir).resolve():
    from softmax_ood.errors import remove_refused_folder

    _here = Path.cwd()
    # `-d elsewhere` made its log there, and maybe the folder (and its parents): remove what this
    # run made (the logger plugin noted what existed before), never what was there before
    _hook = sys.modules.get("snakemake_logger_plugin_softmax_ood")
    _made = getattr(_hook, "MADE_FOR_DIRECTORY", ())
    remove_refused_folder(_made, workflow.logger_manager.get_logfile())
    raise WorkflowError(
        f"config error: this workflow runs in its checkout {workflow.basedir}, not in "
        f"{_here}; drop -d/--directory (or give -d {workflow.basedir})"
    )
# Another run working here (its locks and live processes): stop before this one reads or
# re-dates anything of the tree (softmax_ood.errors.live_lock; a killed run's locks: below).
if workflow.is_main_process:
    from softmax_ood.errors import live_lock

    _live = live_lock(Path(".snakemake/locks"), Path.cwd(), sys.argv)
    if _live:
        raise WorkflowError(_live)
try:
    _DEFAULT_CONFIG = checked_configfile(Path(workflow.basedir) / "config/default.yaml")
except ConfigError as err:
    raise WorkflowError(str(err)) from None


configfile: _DEFAULT_CONFIG


KNOWN_STUDIES = registered_studies()


# The image every job runs in under --sdm conda apptainer (config key container), built by you
# from workflow/apptainer.def, or workflow/Dockerfile (docs/paper-scale.md, Containers).
containerized: config.get("container", "softmax-ood.sif")


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/units.smk"
include: "rules/sources.smk"
include: "rules/targets.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"


# each enabled study's own rules (src/softmax_ood/studies/<name>/rules.smk)
for _study in STUDIES.values():

    include: os.path.relpath(_study.RULES, workflow.basedir)


# what every study shares: its claims table and its report (rules/study.smk)
include: "rules/study.smk"


# the results section across the enabled studies (reports/results.html, results_section.tex)
include: "rules/results.smk"


# The run around the jobs: cluster resources, benchmark files, the user's command for rebuild
# hints, stale files marked, the start/success/error handlers (one each).
include: "rules/session.smk"


rule all:
    default_target: True
    input:
        final_outputs(),
        results_targets(),
