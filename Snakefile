# The softmax-overconfidence / OOD reproducibility workflow.
# Usage: snakemake --cores all [--use-conda] [--configfile config/smoke.yaml]
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/default.yaml"


# This checkout's library (scripts add the same path: they also run in --use-conda envs), and
# the studies it registers (src/softmax_ood/studies/registry.py). The core rules and library
# know no study: they get these modules handed in.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from softmax_ood.studies.registry import registered_studies

KNOWN_STUDIES = registered_studies()


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/evaluate.smk"


# each enabled study's own rules (src/softmax_ood/studies/<name>/rules.smk)
for _study in STUDIES.values():

    include: os.path.relpath(_study.RULES, workflow.basedir)


rule all:
    default_target: True
    input:
        final_outputs(),
