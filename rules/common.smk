# Workflow-level Python: config validation, the study registry, wildcard constraints, and the
# derived code inputs of every rule. Knows no study: studies register in
# src/softmax_ood/studies/registry.py and bring their own rules file.
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

# the library of this checkout (scripts add the same path: they also run in --use-conda envs)
SRC = Path(workflow.basedir) / "src"
sys.path.insert(0, str(SRC))

from softmax_ood.codedeps import code_inputs, entry_digest  # noqa: E402
from softmax_ood.config import (  # noqa: E402
    ConfigError,
    all_runs,
    expanded_losses,
    validate_config,
)
from softmax_ood.provenance import config_sha256  # noqa: E402
from softmax_ood.runs import run_dir  # noqa: E402
from softmax_ood.studies.registry import load_study  # noqa: E402

try:
    _validated = validate_config(
        config, Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"
    )
except ConfigError as err:
    raise WorkflowError(str(err)) from None
config.clear()
config.update(_validated)

DATASET = config["data"]["dataset"]
LOSSES = expanded_losses(config)
STUDIES = {name: load_study(name) for name in config["studies"]}
RUNS = all_runs(config)
GPU = 1 if config["device"] == "cuda" else 0


wildcard_constraints:
    dataset="|".join([DATASET]),
    recipe="|".join(sorted(re.escape(r) for r in config["recipes"])),
    arch="|".join(sorted(re.escape(a) for a in config["architectures"])),
    loss="|".join(sorted((re.escape(l) for l in LOSSES), key=len, reverse=True)),
    seed=r"\d+",


def _here(path):
    """A path under the workflow's folder, as seen from the working directory."""
    return os.path.relpath(Path(workflow.basedir) / path)


def code(script, exclude=()):
    """Every project module the script (or notebook) at ``script`` (relative to the workflow
    folder) runs, transitively: the rule's derived code inputs."""
    found = code_inputs(
        Path(workflow.basedir) / script,
        SRC,
        exclude=[Path(workflow.basedir) / e for e in exclude],
    )
    return [os.path.relpath(p) for p in found]


def section_digest(*sections):
    """Hash of the config sections a job reads, as a params value (so other sections never rerun it)."""
    return config_sha256({s: config[s] for s in sections})


def run_files(runs, kind, name):
    return [f"{run_dir(kind, r)}/{name}" for r in runs]


def data_inputs(wildcards):
    inputs = {"code": code("workflow/scripts/prepare_data.py")}
    if config["data"]["source"] == "paper":
        inputs["raw"] = "data/raw"
        inputs["sources"] = config["data"]["sources"]
    return inputs


MODEL_FILES = {
    family: f"src/softmax_ood/models/{module}.py"
    for family, module in {
        "mlp": "mlp",
        "cnn": "cnn",
        "resnet": "resnet",
        "wrn": "wrn",
        "densenet": "densenet",
    }.items()
}


def train_code(wildcards):
    """The training script's modules, minus the loss file (digested per loss class below) and
    the other architecture families' files: editing one loss or family reruns only its runs.
    """
    family = config["architectures"][wildcards.arch]["family"]
    others = [f for fam, f in MODEL_FILES.items() if fam != family]
    return code(
        "workflow/scripts/train.py", exclude=["src/softmax_ood/losses.py", *others]
    )


def loss_digest(wildcards):
    path = Path(workflow.basedir) / "src/softmax_ood/losses.py"
    return entry_digest(path, "LOSSES", LOSSES[wildcards.loss]["loss"])


def final_outputs():
    return [t for study in STUDIES.values() for t in study.targets(config)]
