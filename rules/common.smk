# Workflow-level Python: config validation, wildcard constraints, and the derived code inputs
# of every rule. Knows no study: the Snakefile hands in KNOWN_STUDIES (name -> registration
# module); each study brings its own rules file.
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


# The unit of a train / evaluate job (config scheduling.per_seed): the recipes of each unit. A
# "cell" job runs every seed of a (dataset, recipe, arch, loss) cell in one process; a "seed"
# job runs one. rules/train.smk and rules/evaluate.smk define one rule per unit that has recipes
# (train / evaluate and train_seed / evaluate_seed), each constrained to its recipes.
JOB_UNITS = {
    unit: names
    for unit, names in {
        "cell": sorted(set(config["recipes"]) - set(config["scheduling"]["per_seed"])),
        "seed": sorted(config["scheduling"]["per_seed"]),
    }.items()
    if names
}


def unit_rule(stage, unit):
    """The rule name of ``stage`` (train, evaluate) for job ``unit``."""
    return stage if unit == "cell" else f"{stage}_seed"


def unit_files(unit, cell, name):
    """A job's per-run files: every seed's (cell unit) or the ``{seed}`` wildcard's."""
    return seed_files(cell, name) if unit == "cell" else [f"{cell}/seed{{seed}}/{name}"]


def unit_path(unit, stem, suffix):
    """A job's log or benchmark file: ``<stem><suffix>`` per cell, ``<stem>/seed{seed}<suffix>``
    per seed."""
    return f"{stem}{suffix}" if unit == "cell" else f"{stem}/seed{{seed}}{suffix}"


def unit_benchmark(stage, unit, cell):
    """A job's benchmark file, under its rule's name: ``logs/benchmarks/<rule>/<cell>[/seed{seed}].tsv``."""
    return unit_path(unit, f"logs/benchmarks/{unit_rule(stage, unit)}/{cell}", ".tsv")


def unit_seeds(unit):
    """The seeds a job runs (its ``seeds`` param)."""
    if unit == "cell":
        return lambda w: TRAIN_SEEDS
    return lambda w: [int(w.seed)]


def unit_seed_count(unit):
    return len(TRAIN_SEEDS) if unit == "cell" else 1


def recipe_pattern(names):
    """The ``{recipe}`` wildcard constraint of a unit's rules: exactly its recipes."""
    return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))


def run_files(runs, kind, name):
    return [f"{run_dir(kind, r)}/{name}" for r in runs]


def _raw_files(with_studies=True):
    """Paper source: downloaded file name -> source name, for the ID set and every OOD set
    (what prepare_data reads) and, with ``with_studies``, the sources the enabled studies ask
    for (their ``raw_sources`` hook). Embedded fashion: its IDX files that Debian's
    package does not provide here (downloaded instead)."""
    from softmax_ood.paper_data import load_paper_config, source_names

    if config["data"]["dataset"] == "fashion" and config["data"]["source"] == "embedded":
        sources = load_paper_config(config["data"]["sources"])["sources"]
        SOURCE_ENTRIES.update(sources)
        return {
            sources[n]["filename"]: n
            for n in source_names(sources, "fashion")
            if not os.path.isfile(sources[n].get("installed") or "")
        }
    if config["data"]["source"] != "paper":
        return {}
    sources = load_paper_config(config["data"]["sources"])["sources"]
    SOURCE_ENTRIES.update(sources)
    names = [*source_names(sources, config["data"]["dataset"]), *config["data"]["ood_test"]]
    if with_studies:
        names += [n for s in STUDIES.values() for n in s.raw_sources(config)]
    return {sources[n]["filename"]: n for n in names if n in sources}


from softmax_ood.paper_data import download_identity, source_names, tracked_entry  # noqa: E402

SOURCE_ENTRIES = {}  # paper source: name -> its entry of the sources file
RAW_FILES = _raw_files()
DATA_RAW_FILES = _raw_files(with_studies=False)


def data_inputs(wildcards):
    # the sources file is no input: prepare_data tracks the entries it reads (data_sources)
    inputs = {"code": code("workflow/scripts/prepare_data.py")}
    if config["data"]["source"] == "paper":
        inputs["raw"] = [f"data/raw/{f}" for f in DATA_RAW_FILES]
    elif config["data"]["dataset"] == "fashion":
        # the Debian package's files where installed, else the checked downloads
        from softmax_ood.fashion import fashion_entries, fashion_paths

        entries = fashion_entries({n: SOURCE_ENTRIES[n] for n in SOURCE_ENTRIES})
        inputs["idx"] = [str(p) for p in fashion_paths(entries, "data/raw").values()]
    return inputs


def data_sources(wildcards):
    """prepare_data's params: the tracked part of each source entry it reads (paper: the ID
    set's and the OOD sets'; embedded fashion: the four IDX files')."""
    if config["data"]["source"] == "paper":
        names = DATA_RAW_FILES.values()
    elif config["data"]["dataset"] == "fashion":
        names = source_names(SOURCE_ENTRIES, "fashion")
    else:
        return {}
    return {n: tracked_entry(SOURCE_ENTRIES[n]) for n in sorted(names)}


_MODELS_INIT = SRC / "softmax_ood/models/__init__.py"
# family -> the file its class is imported from, read from the MODELS dict in models/__init__.py
MODEL_FILES = {
    family: os.path.relpath(path)
    for family, path in entry_files(_MODELS_INIT, "MODELS").items()
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


# -- the results section (rules/results.smk): what each enabled study contributes, read from
# its targets, in the papers' order (KNOWN_STUDIES, handed in by the Snakefile)
import json

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


def study_caption(study, kind):
    """A study's Snakemake-report caption of ``kind`` (its package's ``captions/<kind>.rst``,
    else ``workflow/report/<NAME>_<kind>.rst``), absolute: for rules/study.smk."""
    return str(Path(workflow.basedir) / caption_of_study(study, kind))
