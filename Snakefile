# The softmax-overconfidence / OOD reproducibility workflow.
# Usage: snakemake --cores all [--use-conda] [--configfile config/smoke.yaml]
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/default.yaml"


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
