"""Registration of the LogitNorm study (see :mod:`softmax_ood.studies.registry`)."""

from __future__ import annotations

from pathlib import Path

from ...config import check_names, config_error, study_section
from ...runs import Run
from ..registry import (
    ClaimsJob,
    ItemsJob,
    ReportJob,
    no_raw_sources,
    replication_seeds,
    results_dir,
    standard_report,
    standard_targets,
    with_seeds,
)
from .shared import HEADLINE as HEADLINE

NAME = "logitnorm"
CATEGORY = "LogitNorm"
TITLE = "Wei et al. 2022, Mitigating Neural Network Overconfidence with Logit Normalization"
HERE = Path(__file__).resolve().parent
PAPER_ITEMS = HERE / "paper_items.csv"  # the paper's results items, read once (coverage)
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
PAPER_VALUES = HERE / "paper_values.csv"  # the paper's printed values (results page)
TABLES = [f"table{i}" for i in range(1, 10)] + ["tau_ablation", "premise"]
FIGURES = ["fig1", "fig2", "fig3", "fig4", "fig5"]


def figures(config: dict) -> list[str]:
    """The figures this config draws: Fig. 5 (FPR95 against tau) only with two or more taus
    (one tau has no effect to show: the 28x28 default, a declared departure)."""
    taus = config[NAME]["tau_ablation"]
    return [f for f in FIGURES if f != "fig5" or len(taus) > 1]


def check(config: dict) -> None:
    s = config[NAME]
    archs, losses = config["architectures"], config["losses"]
    check_names(f"{NAME}.recipe", s["recipe"], config["recipes"])
    check_names(f"{NAME}.robustness_recipes", s["robustness_recipes"], config["recipes"])
    check_names(f"{NAME}.near_ood", s["near_ood"], config["data"]["ood_test"])
    if s["recipe"] in s["robustness_recipes"]:
        raise config_error(
            f"{NAME}.robustness_recipes lists the headline recipe {s['recipe']!r}; "
            "name only the variants"
        )
    if set(config["data"]["ood_test"]) <= set(s["near_ood"]):
        raise config_error(f"{NAME}.near_ood lists every OOD test set; keep at least one far set")
    check_names(f"{NAME}.main_arch", s["main_arch"], archs)
    check_names(f"{NAME}.arch_table", s["arch_table"], archs)
    check_names(f"{NAME}.main_losses", s["main_losses"], losses)
    for key in ("baseline", "method", "penalty", "godin"):
        check_names(f"{NAME}.{key}", s[key], losses)
    if losses[s["method"]]["loss"] != "logitnorm":
        raise config_error(f"{NAME}.method is {s['method']!r}, which is not a LogitNorm loss")
    check_names(f"{NAME}.scores", s["scores"], config["scores"])
    check_names(f"{NAME}.godin_compare_score", s["godin_compare_score"], config["scores"])
    ood_sets = list(config["data"]["ood_test"]) + list(config["data"]["ood_val"])
    check_names(f"{NAME}.norm_ood_set", s["norm_ood_set"], ood_sets)
    seed, seeds = s["softmax_outputs"]["model_seed"], study_section(config, NAME)["seeds"]
    if seed is not None and seed not in seeds:
        raise config_error(
            f"{NAME}.softmax_outputs.model_seed is {seed}, which is not one of the study's "
            f"seeds {list(seeds)}; name one of them (or null: the first)"
        )


def tau_variant(config: dict, tau: float) -> str:
    """Loss-variant name for LogitNorm at ``tau`` (the study's method itself when tau matches)."""
    method = config[NAME]["method"]
    if float(config["losses"][method]["tau"]) == float(tau):
        return method
    return f"{method}-tau{tau:g}"


def loss_variants(config: dict) -> dict:
    method = config[NAME]["method"]
    out = {}
    for tau in config[NAME]["tau_ablation"]:
        name = tau_variant(config, tau)
        if name not in config["losses"]:
            out[name] = {**config["losses"][method], "tau": float(tau)}
    return out


def runs(config: dict) -> list[Run]:
    """The trainings it needs: its seeds' (:func:`study_runs`) and, where the config replicates
    it, the same grid on the replication seeds."""
    fresh = replication_seeds(config, NAME)
    extra = [] if fresh is None else study_runs(with_seeds(config, NAME, fresh))
    return sorted(set(study_runs(config)) | set(extra))


def study_runs(config: dict) -> list[Run]:
    """The grid on the study's own seeds: what its aggregate reads."""
    s = study_section(config, NAME)
    pairs = {(s["main_arch"], loss) for loss in s["main_losses"]}
    pairs |= {(a, loss) for a in s["arch_table"] for loss in (s["baseline"], s["method"])}
    pairs |= {(s["main_arch"], tau_variant(config, t)) for t in s["tau_ablation"]}
    ds = config["data"]["dataset"]
    out = {Run(ds, s["recipe"], a, loss, int(seed)) for a, loss in pairs for seed in s["seeds"]}
    out |= {
        Run(ds, recipe, s["main_arch"], loss, int(seed))
        for recipe in s["robustness_recipes"]
        for loss in (s["baseline"], s["method"])
        for seed in s["seeds"]
    }
    return sorted(out)


def softmax_runs(config: dict) -> list[Run]:
    """The two models of Figs. 2 and 3 (rule ``logitnorm_softmax``): the baseline's and the
    method's on the main architecture and headline recipe, of training seed
    ``softmax_outputs.model_seed`` (null: the study's first seed), the models Figs. 1 and 4
    read among others."""
    s = study_section(config, NAME)
    seed = s["softmax_outputs"]["model_seed"]
    seed = int(s["seeds"][0] if seed is None else seed)
    ds = config["data"]["dataset"]
    return [Run(ds, s["recipe"], s["main_arch"], s[k], seed) for k in ("baseline", "method")]


def softmax_section(config: dict) -> dict:
    """``softmax_outputs`` as the rule ``logitnorm_softmax`` passes it (the model seed
    resolved)."""
    out = dict(config[NAME]["softmax_outputs"])
    out["model_seed"] = softmax_runs(config)[0].seed
    return out


def spec(config: dict) -> dict:
    """The study section as its tables/figures/claims read it: tau-ablation variants named,
    seeds filled in, the OOD validation sets listed (they never enter a test table). Without
    ``softmax_outputs``: only the rule that writes the softmax frame reads it (its params),
    so those settings are not part of every table's and claim's record."""
    s = study_section(config, NAME)
    s.pop("softmax_outputs", None)
    s["tau_ablation"] = [tau_variant(config, t) for t in s["tau_ablation"]]
    s["ood_val"] = list(config["data"]["ood_val"])
    s["monitor_set"] = config["recipes"][s["recipe"]].get("monitor_set")
    s["ood_test"] = list(config["data"]["ood_test"])
    s["num_classes"] = len(config["data"].get("id_classes") or range(10))
    s["ece_bins"] = int(config["evaluation"]["ece_bins"])  # C4's ECE on bootstrap resamples
    return s


def claim_specs(config: dict) -> list:
    """The claims table's rows for this config (premises, claims, sanity checks)."""
    from .claims import claim_specs as specs

    return specs(spec(config))


def paper_names(config: dict) -> dict:
    """How this study's tables name what the paper's printed tables name (results page): our
    loss names -> the paper's loss ids (through the spec's roles), the paper's column compared
    (CIFAR-10) and what our sets stand for."""
    from .paper_values import ROLES

    s = spec(config)
    ours = ", ".join(s["ood_test"])
    return {
        "loss": {s[role]: paper for paper, role in ROLES.items() if role in s},
        "id_dataset": "cifar10",
        "note": f"Our ID data are {config['data']['dataset']}, the paper's CIFAR-10; our OOD "
        f"sets ({ours}) are not the paper's (Texture, SVHN, LSUN-C, LSUN-R, iSUN, Places365), "
        "so a row is compared only where both print the same row (the average over each "
        "side's own sets, a score, a TS setting), and its difference is between regimes, not "
        "a replication error.",
    }


def targets(config: dict) -> list[str]:
    readme = f"{results_dir(NAME, config)}/readme_block.md"
    return [*standard_targets(NAME, config, TABLES, figures(config)), readme]


FRAMES = ("runs", "ood", "curves", "samples", "floor")  # written by logitnorm_aggregate


def claims_job(config: dict) -> ClaimsJob:
    base, s = results_dir(NAME, config), spec(config)
    return ClaimsJob(
        inputs={k: f"{base}/{k}.parquet" for k in FRAMES},
        function="softmax_ood.studies.logitnorm.claims:claims_table",
        section=s,
        seeds=s["seeds"],
        mem_mb=8000,  # every score per test image of every run: several GB at paper scale
    )


def replication_job(config: dict, seeds) -> ClaimsJob:
    """Its claims on the fresh seeds (config ``replication``): the same grid trained on them,
    aggregated by ``logitnorm_aggregate_replication`` into ``<results>/replication/``."""
    base, fresh = results_dir(NAME, config), spec(with_seeds(config, NAME, seeds))
    return ClaimsJob(
        inputs={k: f"{base}/replication/{k}.parquet" for k in FRAMES},
        function="softmax_ood.studies.logitnorm.claims:claims_table",
        section=fresh,
        seeds=fresh["seeds"],
        mem_mb=8000,
    )


def report_job(config: dict) -> ReportJob:
    paper = f"src/softmax_ood/studies/{NAME}/paper_values.csv"
    return standard_report(
        NAME,
        config,
        TABLES,
        figures(config),
        "tables/table1.prov.json",
        inputs={"paper": paper},
        parameters={"paper_values_path": paper},
    )


def table_job(config: dict) -> ItemsJob:
    base, s = results_dir(NAME, config), spec(config)
    return ItemsJob(
        inputs={t: {k: f"{base}/{k}.parquet" for k in ("runs", "ood")} for t in TABLES},
        functions="softmax_ood.studies.logitnorm.tables:FRAME_TABLES",
        section=s,
        seeds=s["seeds"],
        labels="softmax_ood.studies.logitnorm.tables:PREMISE_LABELS",
    )


def figure_job(config: dict) -> ItemsJob:
    base, s = results_dir(NAME, config), spec(config)
    # the frames each figure draws (the per-image samples, large at paper scale, only for Fig. 4)
    frames = {
        "fig1": ("curves",),
        "fig2": ("softmax", "ood"),  # the softmax frame: rule logitnorm_softmax
        "fig3": ("softmax", "ood"),
        "fig4": ("samples", "ood"),
        "fig5": ("runs", "ood"),
    }
    return ItemsJob(
        inputs={f: {k: f"{base}/{k}.parquet" for k in frames[f]} for f in figures(config)},
        functions="softmax_ood.studies.logitnorm.figures:FIGURES",
        section=s,
        seeds=s["seeds"],
    )


def departures(config: dict) -> list:
    """Its departures from the paper (:class:`~softmax_ood.analysis.departures.Departure`) that
    apply to ``config`` (``departures.py``)."""
    from .departures import departures as of_config

    return of_config(config, claim_specs(config))


raw_sources = no_raw_sources


def coverage(config: dict) -> list[dict]:
    """Where each item of the paper's results (:data:`PAPER_ITEMS`) runs, why, and what covers
    it (``coverage.csv``; :mod:`softmax_ood.analysis.coverage`). The declaration holds for
    every config: its places name the configs."""
    from ...analysis.coverage import read_coverage

    return read_coverage(HERE / "coverage.csv")


def headline_plain(claims) -> dict[str, str]:
    """The headline in the paper's terms: CE -> LogitNorm average FPR95 (MSP, headline sets)
    here beside the paper's Table 1 CIFAR-10 average (``paper_values.csv``). Ours comes from
    the claims rows: CE's is ``P-ce-fpr``'s value, LogitNorm's is CE's less the relative
    reduction of ``headline`` (the same seeds and sets); {} when either is missing."""
    import math

    from .claims import paper_value

    value = dict(zip(claims["claim_id"], claims["value"], strict=True))
    ce, rel = (float(value.get(k, math.nan)) for k in ("P-ce-fpr", "headline"))
    if not (math.isfinite(ce) and math.isfinite(rel)):
        return {}
    paper = [paper_value("table1", "average", loss, "fpr95") for loss in ("ce", "logitnorm")]
    text = (
        f"average FPR95 CE → LogitNorm {ce:.2f} → {ce * (1 - rel / 100):.2f} % "
        f"(paper {paper[0]:.2f} → {paper[1]:.2f} %, Table 1 CIFAR-10)"
    )
    return {"headline": text, "C1": text}
