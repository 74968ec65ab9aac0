"""Registration of the Ulmer & Cinà study (see :mod:`softmax_ood.studies.registry`).

The study needs no core training run: it trains its own small ReLU networks (single, MC
dropout, Bayes-by-backprop, deep ensemble) and samples one's posterior (MCMC) on its own data (synthetic 2-D blobs and scikit-learn's
breast-cancer table) in its rules, one job per (dataset, seed). Imports nothing heavy (the
Snakefile loads it at parse time).
"""

from __future__ import annotations

from pathlib import Path

from ...config import check_names, config_error, study_section
from ..registry import (
    ClaimsJob,
    ItemsJob,
    ReportJob,
    no_loss_variants,
    no_raw_sources,
    results_dir,
    standard_targets,
    with_seeds,
)
from .shared import HEADLINE as HEADLINE

NAME = "ulmer"
CATEGORY = "Ulmer & Cinà"
TITLE = (
    "Ulmer & Cinà 2021, Know Your Limits: Monotonicity & Softmax Make Neural Classifiers "
    "Overconfident on OOD Data"
)
HERE = Path(__file__).resolve().parent
PAPER_ITEMS = HERE / "paper_items.csv"  # the paper's results items, read once (coverage)
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
DATASETS = ("synthetic", "breast_cancer")
GRID_DATASET = "synthetic"  # the 2-D data of Fig. 1
KINDS = ("single", "mc_dropout", "bbb", "ensemble", "mcmc")
METRICS = ("max_prob", "class_variance", "predictive_entropy", "mutual_information")
#: tables (``results/ulmer/<data.dataset>/tables/<name>``): per dataset, the fit, the scaling curve
#: along the paper's feature, certainty per direction and the K-vs-2K check; the softmax note
TABLE_KINDS = ("fit", "scaling", "directions", "kstability")
#: per-dataset frames (``results/ulmer/<data.dataset>/frames/<ds>/<name>``): one file per seed
#: concatenated; ``datasize`` is §6's more-data comparison (deep ensemble)
FRAMES = ("fit", "scaling", "directions", "datasize")
#: what a run on the 2-D data (:data:`GRID_DATASET`) writes besides :data:`FRAMES`: the Fig. 1 grid
GRID_FRAMES = ("grid", "train_points")
TABLES = [f"{t}_{ds}" for ds in DATASETS for t in TABLE_KINDS] + ["softmax_note"]
FIG1 = [f"fig1_{m}" for m in METRICS]
FIGURES = [f"scaling_{ds}" for ds in DATASETS] + ["directions", *FIG1, "softmax_note"]


def base(config: dict) -> str:
    """Where the study writes: ``results/ulmer/<data.dataset>`` like every study (the study
    trains on its own data sets, which are subfolders and table-name suffixes below it)."""
    return results_dir(NAME, config)


def check(config: dict) -> None:
    s = config[NAME]
    check_names(f"{NAME}.kinds", list(s["kinds"]), KINDS)
    seeds = study_section(config, NAME)["seeds"]
    if s["grid"]["seed"] not in seeds:
        raise config_error(
            f"{NAME}.grid.seed is {s['grid']['seed']}, which is not one of the study's seeds "
            f"({', '.join(str(x) for x in seeds)})"
        )
    sc = s["scaling"]
    if sc["max_exponent"] <= sc["min_exponent"]:
        raise config_error(
            f"{NAME}.scaling.max_exponent ({sc['max_exponent']}) must exceed "
            f"{NAME}.scaling.min_exponent ({sc['min_exponent']})"
        )
    if sc["min_exponent"] != 0:
        raise config_error(
            f"{NAME}.scaling.min_exponent is {sc['min_exponent']}; it must be 0 (alpha = 1 is "
            "the held-out data, the reference of the gradient claims)"
        )
    feature = s["datasets"]["synthetic"]["feature"]
    if isinstance(feature, int) and not 0 <= feature < 2:
        raise config_error(f"{NAME}.datasets.synthetic.feature is {feature}; allowed values: 0, 1")
    if "ensemble" in s["kinds"] and s["model"]["n_members"] < 2:
        raise config_error(
            f"{NAME}.model.n_members is {s['model']['n_members']}; an ensemble needs 2 or more"
        )
    if "mcmc" in s["kinds"] and s["model"]["mcmc"]["n_samples"] < 2:
        raise config_error(
            f"{NAME}.model.mcmc.n_samples is {s['model']['mcmc']['n_samples']}; the chain's "
            "mixing premise needs 2 or more (2K >= 4 kept samples)"
        )


loss_variants = no_loss_variants


def runs(config: dict) -> list:
    """No core training run: the study trains its own small models in its rules."""
    return []


def spec(config: dict) -> dict:
    """The study section with the global seeds filled in where it names none."""
    return study_section(config, NAME)


def run_spec(config: dict, dataset: str) -> dict:
    """What one (dataset, seed) job reads: its dataset's entry only, and the grid size only on
    the 2-D data (editing the breast-cancer entry does not rerun the synthetic jobs)."""
    s = spec(config)
    out = {
        k: s[k] for k in ("kinds", "model", "control", "train", "scaling", "directions", "datasize")
    }
    out["datasets"] = {dataset: s["datasets"][dataset]}
    if dataset == GRID_DATASET:
        out["grid"] = {k: s["grid"][k] for k in ("extent", "n")}
    return out


def seeds(config: dict) -> list[int]:
    return [int(x) for x in study_section(config, NAME)["seeds"]]


def seed_files(config: dict, dataset: str, name: str) -> list[str]:
    return [f"{base(config)}/runs/{dataset}/seed{k}/{name}" for k in seeds(config)]


def frame_inputs(config: dict, names):
    """Input function of the aggregate rule: frame name -> every seed's file for dataset
    ``{uds}``."""
    return lambda w: {n: seed_files(config, w.uds, f"{n}.parquet") for n in names}


def targets(config: dict) -> list[str]:
    return standard_targets(NAME, config, TABLES, FIGURES)


def claims_spec(config: dict) -> dict:
    """What the claims rule reads: the thresholds, the certainty level of the scaling, the kinds
    and the control's activation."""
    s = spec(config)
    return {
        **s["claims"],
        "confident": s["scaling"]["confident"],
        "kinds": list(s["kinds"]),
        "control": s["control"]["activation"],
        "seeds": [int(x) for x in s["seeds"]],
    }


def claim_specs(config: dict) -> list:
    """The claims table's specs for this config (see :mod:`.claims`)."""
    from .claims import claim_specs as specs

    return specs(list(DATASETS), claims_spec(config))


def claims_job(config: dict) -> ClaimsJob:
    """Every data set's fit, scaling and directions frames, each concatenated into one."""
    base_dir = base(config)
    return ClaimsJob(
        inputs={
            **{n: [f"{base_dir}/frames/{ds}/{n}.parquet" for ds in DATASETS] for n in FRAMES},
            "note": [f"{base_dir}/tables/softmax_note.parquet"],
        },
        function="softmax_ood.studies.ulmer.claims:claims_table",
        section=claims_spec(config),
        seeds=seeds(config),
        title="Claims of Ulmer & Cinà 2021 tested at this scale",
    )


def replication_job(config: dict, seeds) -> ClaimsJob:
    """Its claims on the fresh seeds (config ``replication``): every data set's per-seed frames
    of those seeds, trained by the same run rules (the aggregate only concatenates them); the
    softmax note uses no model, so its rows (``note-*``) are not replicated."""
    fresh = with_seeds(config, NAME, seeds)
    return ClaimsJob(
        inputs={
            **{
                n: [f for ds in DATASETS for f in seed_files(fresh, ds, f"{n}.parquet")]
                for n in FRAMES
            },
        },
        function="softmax_ood.studies.ulmer.claims:claims_table",
        section=claims_spec(fresh),
        seeds=seeds,
        title="Claims of Ulmer & Cinà 2021 on the replication seeds",
        not_replicated=("note-*",),
    )


def report_job(config: dict) -> ReportJob:
    b = base(config)
    return ReportJob(
        inputs={
            "claims": f"{b}/claims.parquet",
            "tables": [f"{b}/tables/{t}.parquet" for t in TABLES],
            "figures": [f"{b}/figures/{f}.png" for f in FIGURES],
            "scaling": [f"{b}/frames/{ds}/scaling.parquet" for ds in DATASETS],
            "provenance": f"{b}/claims.prov.json",
        },
        parameters={
            "results_dir": b,
            "grid_dataset": GRID_DATASET,
            "provenance_path": f"{b}/claims.prov.json",
            # the departures table the report shows, derived from the config (claims resolved)
            "departures": departure_rows(config),
        },
    )


def departure_rows(config: dict) -> list[dict]:
    """:func:`departures` as plain rows (the report's parameter): the shared table's columns,
    claim patterns resolved against this config's claim ids."""
    from ...analysis.departures import departures_frame

    frame = departures_frame(departures(config))
    return [{k: str(v) for k, v in r.items()} for r in frame.to_dict("records")]


def figure_job(config: dict) -> ItemsJob:
    """Each figure from the frames it draws: the scaling curve of one data set (with its
    directions, for the degenerate-direction note), the directions of both, the Fig. 1 grid of
    the 2-D data, the softmax note's sharpness."""
    b, s = base(config), spec(config)
    run = f"{b}/runs/{GRID_DATASET}/seed{s['grid']['seed']}"
    inputs = {
        **{
            f"scaling_{ds}": {k: f"{b}/frames/{ds}/{k}.parquet" for k in ("scaling", "directions")}
            for ds in DATASETS
        },
        "directions": {
            f"directions_{ds}": f"{b}/frames/{ds}/directions.parquet" for ds in DATASETS
        },
        **{
            f: {"grid": f"{run}/grid.parquet", "points": f"{run}/train_points.parquet"}
            for f in FIG1
        },
        "softmax_note": {"sharpness": f"{b}/frames/softmax_note/sharpness.parquet"},
    }
    return ItemsJob(
        inputs=inputs,
        functions="softmax_ood.studies.ulmer.figures:FRAME_FIGURES",
        section={"level": s["claims"]["certain_max_prob"]},
        # Fig. 1 is drawn from the grid seed's models, the softmax note from no model
        seeds={
            f: [s["grid"]["seed"]] if f in FIG1 else [] if f == "softmax_note" else seeds(config)
            for f in FIGURES
        },
    )


def departures(config: dict) -> list:
    """Its departures from the paper (:class:`~softmax_ood.analysis.departures.Departure`) that
    apply to ``config`` (``departures.py``)."""
    from .departures import departures as of_config

    return of_config(config, claim_specs(config))


raw_sources = no_raw_sources


def table_job(config: dict) -> None:
    """Its tables are made in its own rules (the aggregate and note rules), not by the shared
    table rule."""
    return None


def coverage(config: dict) -> list[dict]:
    """Where each item of the paper's results (:data:`PAPER_ITEMS`) runs, why, and what covers
    it (``coverage.csv``; :mod:`softmax_ood.analysis.coverage`). The declaration holds for
    every config: its places name the configs."""
    from ...analysis.coverage import read_coverage

    return read_coverage(HERE / "coverage.csv")
