# The train and evaluate jobs (rules/train.smk, rules/evaluate.smk): their unit (one job per
# cell or per seed, config scheduling.per_seed) and the training job's derived code inputs.

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
