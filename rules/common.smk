# Workflow-level Python: config validation, wildcard constraints, input functions.
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

# the library of this checkout (scripts add the same path: they also run in --use-conda envs)
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from softmax_ood.config import (  # noqa: E402
    ConfigError,
    expanded_losses,
    logitnorm_runs,
    validate_config,
)
from softmax_ood.provenance import (
    config_sha256,
    registry_entry,
    source_digest,
)  # noqa: E402

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
RUNS = logitnorm_runs(config)
CONFIG_SHA256 = config_sha256(config)
FAMILY_FILES = {
    "mlp": "mlp",
    "cnn": "cnn",
    "resnet": "resnet",
    "wrn": "wrn",
    "densenet": "densenet",
}


wildcard_constraints:
    dataset="|".join([DATASET]),
    arch="|".join(sorted(config["architectures"])),
    loss="|".join(sorted((re.escape(l) for l in LOSSES), key=len, reverse=True)),
    seed=r"\d+",


def data_inputs(wildcards):
    inputs = {"code": ["src/softmax_ood/data.py"]}
    if config["data"]["source"] == "paper":
        inputs["raw"] = "data/raw"
        inputs["code"] += ["src/softmax_ood/paper_data.py", config["data"]["sources"]]
    return inputs


def loss_digest(wildcards):
    """Hash of the loss class's own source: editing LogitNormLoss reruns only its trainings."""
    path = "src/softmax_ood/losses.py"
    family = LOSSES[wildcards.loss]["loss"]
    return source_digest(path, registry_entry(path, "LOSSES", family))


def model_code(wildcards):
    family = config["architectures"][wildcards.arch]["family"]
    return [
        f"src/softmax_ood/models/{FAMILY_FILES[family]}.py",
        "src/softmax_ood/models/heads.py",
    ]


def run_dirs(kind, name):
    return [
        f"results/{kind}/{DATASET}/{arch}/{loss}/seed{seed}/{name}"
        for arch, loss, seed in RUNS
    ]


def logitnorm_outputs():
    base = f"results/logitnorm/{DATASET}"
    tables = [f"table{i}" for i in range(1, 7)] + ["tau_ablation"]
    return (
        [f"{base}/tables/{t}.parquet" for t in tables]
        + [f"{base}/tables/{t}.md" for t in tables]
        + [f"{base}/figures/{f}.png" for f in ("fig1", "fig4", "fig5")]
        + [f"{base}/claims.parquet", f"{base}/claims.md"]
        + ["reports/logitnorm.ipynb", "reports/logitnorm.html"]
    )


def final_outputs():
    return logitnorm_outputs()


def study_spec():
    """The LogitNorm study section with the tau-ablation loss variants spelled out."""
    from softmax_ood.config import tau_variant

    spec = dict(config["logitnorm"])
    spec["tau_ablation"] = [tau_variant(config, t) for t in spec["tau_ablation"]]
    return spec
