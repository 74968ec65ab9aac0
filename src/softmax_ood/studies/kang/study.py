"""Registration of the Kang et al. study (see :mod:`softmax_ood.studies.registry`).

Imports nothing heavy (the Snakefile loads it at parse time): corruption and featurizer names are
read from the source of :mod:`softmax_ood.corruptions` / :mod:`softmax_ood.discriminator`.
"""

from __future__ import annotations

from pathlib import Path

from ...codedeps import registry_entries
from ...config import check_names, config_error, study_section
from ...runs import Run
from ..registry import (
    ClaimsJob,
    ItemsJob,
    ReportJob,
    claims_over_frames,
    items_over_frames,
    no_loss_variants,
    replication_seeds,
    results_dir,
    standard_report,
    standard_targets,
    with_seeds,
)
from .shared import HEADLINE as HEADLINE

NAME = "kang"
CATEGORY = "Kang"
TITLE = "Kang et al. 2024, Deep Neural Networks Tend To Extrapolate Predictably"
HERE = Path(__file__).resolve().parent
PAPER_ITEMS = HERE / "paper_items.csv"  # the paper's results items, read once (coverage)
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
SRC = HERE.parents[1]
TABLES = ["fit", "discriminator", "ocs", "distance", "selective", "trend_by_shift"]
FIGURES = ["fig2", "fig3", "fig3_full", "fig4", "fig5", "fig6", "fig7"]
#: the loss family each role must name (``losses:`` entries of the core config)
ROLES = {"classifier": "ce", "reward_model": "reward_mse", "regressor": "gaussian_nll"}
SEVERITIES = (1, 2, 3, 4, 5)
ID_GROUP = "id"  # discriminator group of the clean held-out ID split
FAR_GROUP = "far_ood"  # ... of the far OOD sets
ROTATION = "rotation"


def corruption_names() -> dict[str, str]:
    return registry_entries(SRC / "corruptions.py", "CORRUPTIONS")


def featurizer_names() -> dict[str, str]:
    return registry_entries(SRC / "discriminator.py", "FEATURIZERS")


def check(config: dict) -> None:
    s = config[NAME]
    check_names(f"{NAME}.recipe", s["recipe"], config["recipes"])
    check_names(f"{NAME}.arch", s["arch"], config["architectures"])
    losses = config["losses"]
    for role, family in ROLES.items():
        check_names(f"{NAME}.{role}", s[role], losses)
        if losses[s[role]]["loss"] != family:
            raise config_error(
                f"{NAME}.{role} is {s[role]!r}, whose loss is {losses[s[role]]['loss']!r}; "
                f"the {role} must be a {family!r} loss"
            )
    check_names(f"{NAME}.corruptions", s["corruptions"], corruption_names())
    for sev in s["severities"]:
        if isinstance(sev, bool) or not isinstance(sev, int) or sev not in SEVERITIES:
            raise config_error(
                f"{NAME}.severities has {sev!r}; corruption severities are the integers 1-5"
            )
    for angle in s["rotations"]:
        if not 0 < angle <= 180:
            raise config_error(
                f"{NAME}.rotations has {angle!r}; rotation angles are in (0, 180] degrees "
                "(0 is the clean held-out ID split, always included)"
            )
    check_names(f"{NAME}.far_ood", s["far_ood"], config["data"]["ood_test"])
    if s.get("corruption_source") == "cifar10c" and not s.get("corruption_dir"):
        raise config_error(
            f"{NAME}.corruption_source is 'cifar10c' but {NAME}.corruption_dir names no folder"
        )
    source = s["featurizer"].get("source")
    if source and config["data"].get("source") != "paper":
        raise config_error(
            f"{NAME}.featurizer.source is {source!r} but data.source is not 'paper' "
            "(weights are downloaded at paper scale only)"
        )
    if s.get("corruption_source") == "cifar10c" and s["discriminator"].get("alpha") is None:
        raise config_error(
            f"{NAME}.corruption_source is 'cifar10c' but {NAME}.discriminator.alpha is not set: "
            "alpha cannot be selected on the validation split (CIFAR-10-C corrupts only the test "
            "set); give a fixed alpha"
        )
    check_names(f"{NAME}.featurizer.name", s["featurizer"]["name"], featurizer_names())
    shifts = list(s["corruptions"]) + ([ROTATION] if s["rotations"] else [])
    if not shifts:
        raise config_error(f"{NAME} needs at least one corruption or rotation to shift along")
    check_names(f"{NAME}.figure_shift", s["figure_shift"], shifts)
    m = s["mechanism"]
    check_names(f"{NAME}.mechanism.arch", m["arch"], config["architectures"])
    if "recipe" in m:
        check_names(f"{NAME}.mechanism.recipe", m["recipe"], config["recipes"])
    check_names(f"{NAME}.mechanism.losses", m["losses"], [s[r] for r in ROLES])
    check_names(f"{NAME}.mechanism.shift", m["shift"], shifts)
    family = config["architectures"][m["arch"]]["family"]
    if family not in ("mlp", "cnn", "convnet") and int(m.get("constants_layer", -2)) != -1:
        raise config_error(
            f"{NAME}.mechanism.arch is {m['arch']!r} (family {family!r}), not a feed-forward "
            "chain: its Fig. 4 accumulated constants are defined at the classifier only; set "
            f"{NAME}.mechanism.constants_layer to -1"
        )


loss_variants = no_loss_variants


def runs(config: dict) -> list[Run]:
    """The trainings it needs: its seeds' (:func:`study_runs`) and, where the config replicates
    it, the same models on the replication seeds."""
    fresh = replication_seeds(config, NAME)
    extra = [] if fresh is None else study_runs(with_seeds(config, NAME, fresh))
    return sorted(set(study_runs(config)) | set(extra))


def study_runs(config: dict) -> list[Run]:
    """The models on the study's own seeds: what its aggregate reads."""
    s = study_section(config, NAME)
    ds = config["data"]["dataset"]
    m = s["mechanism"]
    triples = {(s["recipe"], s["arch"], s[role]) for role in ROLES}
    triples |= {(m.get("recipe", s["recipe"]), m["arch"], loss) for loss in m["losses"]}
    return sorted(
        Run(ds, recipe, a, loss, int(seed)) for recipe, a, loss in triples for seed in s["seeds"]
    )


def shift_groups(config: dict) -> list[str]:
    """Discriminator groups: one job per group (every level of one shift type), each set fitted
    once per featurizer."""
    s = config[NAME]
    groups = list(s["corruptions"]) + ([ROTATION] if s["rotations"] else [])
    return groups + [ID_GROUP] + ([FAR_GROUP] if s["far_ood"] else [])


def spec(config: dict) -> dict:
    """The study section as its scripts read it: seeds filled in, the loss entries of its roles
    (reward values included) and the discriminator groups."""
    s = study_section(config, NAME)
    s["loss_entries"] = {s[r]: dict(config["losses"][s[r]]) for r in ROLES}
    s["roles"] = {r: s[r] for r in ROLES}
    s["groups"] = shift_groups(config)
    s["dataset"] = config["data"]["dataset"]
    s["featurizer"] = featurizer_with_weights(config, s["featurizer"])
    return s


def featurizer_with_weights(config: dict, featurizer: dict) -> dict:
    """The featurizer as its scripts read it, ``{name, params}``: ``params_by_name[name]`` if
    given, else ``params``; with ``featurizer.source`` (paper scale) also that source's
    downloaded file (``data/raw/<filename>``) and sha256 as ``params.weights_path`` /
    ``params.sha256``, and ``source``."""
    by_name = featurizer.get("params_by_name") or {}
    params = by_name.get(featurizer["name"], featurizer.get("params") or {})
    out = {"name": featurizer["name"], "params": dict(params)}
    name = featurizer.get("source")
    if not name:
        return out
    from ...paper_data import load_sources

    sources = load_sources(config["data"]["sources"])
    if name not in sources:
        raise config_error(
            f"{NAME}.featurizer.source {name!r} is not a source of {config['data']['sources']}"
        )
    entry = sources[name]
    out["params"]["weights_path"] = f"data/raw/{entry['filename']}"
    if entry.get("sha256"):
        out["params"]["sha256"] = entry["sha256"]
    return {**out, "source": name}


def featurizer_inputs(spec: dict) -> dict:
    """The discriminator rules' weight-file input (paper scale), else nothing."""
    f = spec["featurizer"]
    return {"weights": f["params"]["weights_path"]} if f.get("source") else {}


def targets(config: dict) -> list[str]:
    return standard_targets(NAME, config, TABLES, FIGURES)


#: Per trained model: the files its grid evaluation writes.
EVAL_FILES = ["sets", "components", "policies", "mechanism", "fit"]


def eval_files(runs) -> list[str]:
    """Every grid-evaluation file of ``runs`` (the aggregate rule's inputs)."""
    return [
        f"results/kang/{r.dataset}/eval/{r.recipe}/{r.arch}/{r.loss}/seed{r.seed}/{name}.parquet"
        for r in runs
        for name in EVAL_FILES
    ]


def mechanism_params(spec: dict, recipe: str, arch: str, loss: str) -> dict | None:
    """The Fig. 4 mechanism settings for a model of the mechanism chain, else ``None``."""
    m = spec["mechanism"]
    if recipe == m.get("recipe", spec["recipe"]) and arch == m["arch"] and loss in m["losses"]:
        return {
            "shift": m["shift"],
            "subspace_energy": m["subspace_energy"],
            "constants_layer": int(m.get("constants_layer", -2)),
        }
    return None


#: the keys of the study section :func:`~softmax_ood.studies.kang.grid.build_grid` reads: the
#: grid job receives only these, so an edit elsewhere in the section (a bar, the discriminator)
#: does not rebuild the grid and everything evaluated on it
GRID_KEYS = (
    "corruptions",
    "severities",
    "rotations",
    "far_ood",
    "eval_size",
    "corruption_source",
    "corruption_dir",
    "reference_size",
    "corruption_seed",
)


def grid_spec(spec: dict) -> dict:
    """The part of the study section the grid job reads (:data:`GRID_KEYS`)."""
    return {k: spec[k] for k in GRID_KEYS if k in spec}


def select_spec(spec: dict) -> dict:
    """The part of the study section the discriminator's alpha selection reads: the grid's keys
    (it builds the grid on the validation split), the featurizer and the discriminator."""
    return {
        **grid_spec(spec),
        "featurizer": spec["featurizer"],
        "discriminator": spec["discriminator"],
    }


def grid_inputs(spec: dict, dataset: str) -> dict:
    """The grid rule's data inputs: the prepared data, and the CIFAR-10-C folder at paper scale."""
    inputs = {"data": f"data/{dataset}"}
    if spec.get("corruption_source") == "cifar10c":
        inputs["corruptions"] = spec["corruption_dir"]
    return inputs


def raw_sources(config: dict) -> list[str]:
    """Paper-scale sources this study needs downloaded besides the core data (CIFAR-10-C, the
    featurizer's weights)."""
    s = config.get(NAME) or {}
    names = ["cifar10c"] if s.get("corruption_source") == "cifar10c" else []
    source = (s.get("featurizer") or {}).get("source")
    return names + ([source] if source else [])


def claim_specs(config: dict) -> list:
    """The claims table's rows for ``config`` (the validated full config): premises and claims
    of :mod:`softmax_ood.studies.kang.claims` (imported here, not at parse time)."""
    from .claims import claim_specs as specs

    return specs(spec(config))


#: the frames kang_aggregate writes under results/kang/<dataset>/ (tables, figures, claims read them)
FRAMES = ("grid", "components", "policies", "mechanism", "ood_scores", "fit", "levels", "selection")


def _frames(config: dict) -> dict[str, str]:
    base = results_dir(NAME, config)
    return {k: f"{base}/{k}.parquet" for k in FRAMES}


#: what the claims read besides :data:`FRAMES`: Sec. 4.2's toy (rule kang_theory); and Fig. 8's
#: per-seed FGSM frames (rule kang_adversarial, :func:`adversarial_files`)
CLAIM_FRAMES = ("theory",)

#: rows the fresh seeds do not redraw: Sec. 4.2's toy (rule kang_theory runs the study's seeds
#: once; it trains no classifier of the grid)
NOT_REPLICATED = ("theory_*",)


def claims_job(config: dict) -> ClaimsJob:
    function = "softmax_ood.studies.kang.claims:evaluate_kang_claims"
    base = results_dir(NAME, config)
    frames = {**_frames(config), **{k: f"{base}/{k}.parquet" for k in CLAIM_FRAMES}}
    frames["adversarial"] = adversarial_files(spec(config), runs(config))
    return claims_over_frames(function, frames, spec(config))


def adversarial_files(spec: dict, runs) -> list[str]:
    """Fig. 8's per-seed FGSM frames (rule kang_adversarial): one per trained classifier of the
    study's main recipe and architecture, on the section's seeds (not the replication's)."""
    return [
        f"results/kang/{r.dataset}/eval/{r.recipe}/{r.arch}/{r.loss}/seed{r.seed}/adversarial.parquet"
        for r in runs
        if (r.recipe, r.arch, r.loss) == (spec["recipe"], spec["arch"], spec["classifier"])
        and int(r.seed) in {int(s) for s in spec["seeds"]}
    ]


def replication_job(config: dict, seeds) -> ClaimsJob:
    """Its claims on the fresh seeds (config ``replication``): the same models trained on them
    and evaluated on the same grid and discriminator scores (which use no trained model),
    aggregated by ``kang_aggregate_replication`` into ``<results>/replication/``."""
    base = results_dir(NAME, config)
    fresh = with_seeds(config, NAME, seeds)
    frames = {k: f"{base}/replication/{k}.parquet" for k in FRAMES}
    frames["adversarial"] = adversarial_files(spec(fresh), runs(config))  # the fresh seeds'
    function = "softmax_ood.studies.kang.claims:evaluate_kang_claims"
    return claims_over_frames(function, frames, spec(fresh), not_replicated=NOT_REPLICATED)


def report_job(config: dict) -> ReportJob:
    return standard_report(NAME, config, TABLES, FIGURES, "grid.prov.json")


def _items_job(config: dict, names, functions: str) -> ItemsJob:
    return items_over_frames(names, functions, _frames(config), spec(config))


def table_job(config: dict) -> ItemsJob:
    return _items_job(config, TABLES, "softmax_ood.studies.kang.tables:TABLES")


def figure_job(config: dict) -> ItemsJob:
    return _items_job(config, FIGURES, "softmax_ood.studies.kang.plots:FIGURES")


def departures(config: dict) -> list:
    """Its departures from the paper (:class:`~softmax_ood.analysis.departures.Departure`) that
    apply to ``config`` (``departures.py``)."""
    from .departures import departures as of_config

    return of_config(config, claim_specs(config))


def coverage(config: dict) -> list[dict]:
    """Where each item of the paper's results (:data:`PAPER_ITEMS`) runs, why, and what covers
    it (``coverage.csv``; :mod:`softmax_ood.analysis.coverage`). The declaration holds for
    every config: its places name the configs."""
    from ...analysis.coverage import read_coverage

    return read_coverage(HERE / "coverage.csv")
