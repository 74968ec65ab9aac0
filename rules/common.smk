# Workflow-level Python every rules file uses: config validation, the config's derived globals,
# envs and captions, wildcard constraints, and the derived code inputs of a script. The job units
# are in rules/units.smk, the data's sources in rules/sources.smk, what the workflow makes (the
# studies' targets and captions, the results section's inputs) in rules/targets.smk. Knows no study: the Snakefile hands in KNOWN_STUDIES (name -> registration
# module); each study brings its own rules file.
import json
import os
import re
from pathlib import Path

from snakemake.exceptions import WorkflowError

SRC = Path(workflow.basedir) / "src"  # on sys.path (the Snakefile put it there)

from softmax_ood.codedeps import (  # noqa: E402
    code_inputs,
    entry_digest,
    entry_files,
    module_inputs,
    use_cache,
)
from softmax_ood.startcache import open_cache  # noqa: E402

# each module's imports, parsed once per version of its text and kept between starts
use_cache(open_cache(workflow.basedir, "imports"))
from softmax_ood.config import (  # noqa: E402
    ConfigError,
    all_runs,
    expanded_losses,
    validate_config,
)
from softmax_ood.estimate import train_minutes  # noqa: E402
from softmax_ood.runs import run_dir  # noqa: E402

try:
    _validated = validate_config(
        config,
        Path(workflow.basedir) / "workflow/schemas/config.schema.yaml",
        KNOWN_STUDIES,
    )
except ConfigError as err:
    raise WorkflowError(str(err)) from None
config.clear()
config.update(_validated)

# Pinned numerics (softmax_ood.numerics): set in this process's environment before any job
# starts, so every script, notebook kernel and cluster job inherits it; never by the user.
from softmax_ood import numerics as _numerics  # noqa: E402

_numerics.apply(config["numerics"])

DATASET = config["data"]["dataset"]
STUDIES = {name: KNOWN_STUDIES[name] for name in config["studies"]}
LOSSES = expanded_losses(config, STUDIES)
RUNS = all_runs(config, STUDIES)
# every cell (dataset, recipe, arch, loss) is trained for the union of the seeds any study asks
TRAIN_SEEDS = sorted({r.seed for r in RUNS})
GPU = 1 if config["device"] == "cuda" else 0
CLUSTER = config["cluster"]

# Shared files named by the rules of every folder (the study packages sit four levels down),
# absolute from the checkout, so that no path climbs with ../../../../.
_BASE = Path(workflow.basedir)
ENV_TORCH = str(_BASE / "envs/torch.yaml")  # conda: of jobs that run torch
ENV_REPORT = str(_BASE / "envs/report.yaml")  # conda: of analysis, figure and report jobs


def caption(name):
    """The Snakemake-report caption ``workflow/report/<name>`` (absolute)."""
    return str(_BASE / "workflow/report" / name)


def cluster_resources():
    """The config's `cluster:` section as Snakemake resources of every rule, called once after
    all rules are defined. It sets `slurm_partition` (GPU jobs: `gpu_partition`), `gpu_model` for GPU
    jobs, `runtime` (minutes) of the rules named in `cluster.runtime`. A cluster executor
    (profiles/slurm) turns them into sbatch's --partition, --gpus and --time; a local run
    ignores them. Resources a rule sets itself, or --set-resources, win."""
    for spec in workflow.rules:
        res = spec.resources
        gpu = res.get("gpu").value
        gpu = isinstance(gpu, int) and gpu > 0
        part = (CLUSTER["gpu_partition"] or CLUSTER["partition"]) if gpu else CLUSTER["partition"]
        if part and "slurm_partition" not in res:
            res["slurm_partition"] = part
        if gpu and CLUSTER["gpu_model"] and "gpu_model" not in res:
            res["gpu_model"] = CLUSTER["gpu_model"]
        if spec.name in CLUSTER["runtime"]:
            res["runtime"] = CLUSTER["runtime"][spec.name]


# the train/evaluate rules' `device` param: the device name alone while the `gpu:` options are
# off (so existing runs keep their params), else softmax_ood.experiment.Execution's fields
EXECUTION = (
    {"device": config["device"], **config["compute"]}
    if any(config["compute"].values())
    else config["device"]
)


wildcard_constraints:
    dataset="|".join([DATASET]),
    recipe="|".join(sorted(re.escape(r) for r in config["recipes"])),
    arch="|".join(sorted(re.escape(a) for a in config["architectures"])),
    loss="|".join(sorted((re.escape(l) for l in LOSSES), key=len, reverse=True)),
    seed=r"\d+",


def code(script, exclude=()):
    """Every project module the script (or notebook) at ``script`` (relative to the workflow
    folder) runs, transitively: the rule's derived code inputs."""
    found = code_inputs(
        Path(workflow.basedir) / script,
        SRC,
        exclude=[Path(workflow.basedir) / e for e in exclude],
    )
    return [os.path.relpath(p) for p in found]


def module_code(ref):
    """Every project module a ``"module:function"`` reference runs: its module, the packages it
    sits in, and what it imports, transitively (a shared rule's code inputs for the study
    function it calls)."""
    return [os.path.relpath(p) for p in module_inputs(ref, SRC)]


def item_inputs(inputs, wildcard):
    """Input function of a shared table or figure rule: the frames of the item its
    ``wildcard`` names (``inputs``: item -> {frame: path})."""
    return lambda w: dict(inputs[getattr(w, wildcard)])


def seed_files(cell, name):
    """``<cell>/seed<k>/<name>`` for every training seed: the per-run files of one cell job."""
    return [f"{cell}/seed{s}/{name}" for s in TRAIN_SEEDS]


def run_files(runs, kind, name):
    return [f"{run_dir(kind, r)}/{name}" for r in runs]
