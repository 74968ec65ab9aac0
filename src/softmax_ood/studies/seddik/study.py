"""Registration of the Seddik study (see :mod:`softmax_ood.studies.registry`).

Imports nothing heavy: the Snakefile loads it at parse time.
"""

from __future__ import annotations

from pathlib import Path

from ...config import check_names, config_error
from ...runs import Run
from ..registry import ClaimsJob, ItemsJob, ReportJob, no_loss_variants, no_raw_sources, results_dir
from .shared import HEADLINE as HEADLINE

#: the frames of config-drawn seeds that a replication re-runs on its fresh seeds (Fig. 5 reads
#: trained networks and is not re-run: the rows built on it are not replicated)
REPLICATED_FRAMES = ("fig2", "fig4", "validation")
#: rows whose frames the fresh seeds do not redraw: Fig. 5's (the LogitNorm grid's networks) and
#: Fig. 3's (one draw of the image pair, not one per seed)
NOT_REPLICATED = ("P3", "S2", "C3*", "P4", "C4")

NAME = "seddik"
CATEGORY = "Seddik"
TITLE = (
    "Seddik, Louart, Couillet, Tamaazousti 2021, The Unexpected Deterministic and Universal "
    "Behavior of Large Softmax Classifiers"
)
HERE = Path(__file__).resolve().parent
PAPER_ITEMS = HERE / "paper_items.csv"  # the paper's results items, read once (coverage)
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
#: frames computed from the config alone (no trained network) and the Fig. 5 frame (features)
FRAMES = ["fig2", "fig3", "fig4", "validation"]
FIGURES = ["fig2", "fig3", "fig4", "fig5", "validation"]
TABLES: list[str] = []  # the paper prints figures only; the report tabulates their data


def check(config: dict) -> None:
    s = config[NAME]
    f5 = s["fig5"]
    check_names(f"{NAME}.fig5.recipe", f5["recipe"], config["recipes"])
    check_names(f"{NAME}.fig5.arch", f5["arch"], config["architectures"])
    check_names(f"{NAME}.fig5.loss", f5["loss"], config["losses"])
    if len(set(f5["splits"])) != len(f5["splits"]):
        raise config_error(f"{NAME}.fig5.splits is {f5['splits']}; a split is listed twice")
    if f5["stats_from"] == "independent":
        share = f5["stats_fraction"]
        if share is None or share + f5["fit_fraction"] >= 1:
            raise config_error(
                f"{NAME}.fig5.stats_fraction is {share} with fit_fraction {f5['fit_fraction']}; "
                "stats_from: independent needs a share for the class statistics that leaves a "
                "test part (fit_fraction + stats_fraction < 1)"
            )
    pair = s["digits"]["pair"]
    if pair[0] == pair[1]:
        raise config_error(f"{NAME}.digits.pair is {pair}; the two digits must differ")
    gammas = s["fig2"]["gammas"]
    if abs(sum(gammas) - 1) > 1e-6:
        raise config_error(f"{NAME}.fig2.gammas is {gammas}, which does not sum to 1")
    gammas = s["validation"]["gammas"]
    if abs(sum(gammas) - 1) > 1e-6:
        raise config_error(f"{NAME}.validation.gammas is {gammas}, which does not sum to 1")


loss_variants = no_loss_variants


def fig5_runs(config: dict) -> list[Run]:
    """The trained networks (one per seed of ``seddik.fig5.seeds``) whose penultimate features
    Fig. 5 uses; with the default config they are runs of the LogitNorm grid, trained once."""
    f5 = config[NAME]["fig5"]
    ds = config["data"]["dataset"]
    return [Run(ds, f5["recipe"], f5["arch"], f5["loss"], int(s)) for s in sorted(f5["seeds"])]


def runs(config: dict) -> list[Run]:
    return fig5_runs(config)


def images_label(digits: dict) -> str:
    """Figs. 3-4's image pair in words, from the ``seddik.digits`` section: "Fashion-MNIST
    Pullover vs Coat" (``source: fashion``) or "digits 1 vs 2" (``sklearn``)."""
    a, b = (int(v) for v in digits["pair"])
    if digits.get("source", "sklearn") == "fashion":
        from ...fashion import FASHION_CLASSES

        return f"Fashion-MNIST {FASHION_CLASSES[a]} vs {FASHION_CLASSES[b]}"
    return f"digits {a} vs {b}"


def claim_specs(config: dict) -> list:
    """The claims table's rows for this config (premises, claims, the sanity row)."""
    from .claims import claim_specs as specs

    c = config[NAME]["claims"]
    return specs(c["max_gap_points"], c["ridge_n_gap"], images=images_label(config[NAME]["digits"]))


def targets(config: dict) -> list[str]:
    base = results_dir(NAME, config)
    return (
        [f"{base}/figures/{f}.png" for f in FIGURES]
        + [f"{base}/claims.parquet", f"{base}/claims.md"]
        + [f"{base}/departures.parquet", f"{base}/departures.md"]
        + [f"reports/{NAME}.ipynb", f"reports/{NAME}.html"]
    )


def frame_kwargs(config: dict, name: str) -> dict:
    """Keyword arguments of :mod:`.experiments`' function for frame ``name`` (``fig2``,
    ``fig3``, ``fig4``, ``validation``, ``fig5``, ``timing``), read from the config section only:
    a rule's params, so editing one figure's settings reruns that figure alone."""
    s = config[NAME]
    common = {"solver": dict(s["solver"]), "train": dict(s["train"])}
    d = s["digits"]
    digits = {
        "lam": d["lam"],
        "digits": list(d["pair"]),
        "balance": d["balance"],
        "seed": d["seed"],
        "source": d.get("source", "sklearn"),
        "per_class": d.get("per_class"),
    }
    if name == "fig2":
        return {**s["fig2"], **common}
    if name == "fig3":
        return {**digits, "loo": s["fig3"]["loo"], **common}
    if name == "fig4":
        return {**digits, "ns": list(s["fig4"]["ns"]), "seeds": list(s["fig4"]["seeds"]), **common}
    if name == "validation":
        return {**s["validation"], **common}
    if name == "fig5":
        f5 = s["fig5"]
        keys = (
            "lam",
            "row_norm",
            "center",
            "stats_from",
            "stats_fraction",
            "fit_fraction",
            "split_seed",
        )
        chosen = {"classes": list(f5["classes"])} if f5.get("classes") is not None else {}
        cut = {"cut": f5.get("cut", "per_network")}  # the schema's default
        return {**{k: f5[k] for k in keys}, **cut, **chosen, "seed": f5["draw_seed"], **common}
    if name == "timing":
        return {**s["timing"], "solver": dict(s["solver"])}
    raise ValueError(
        f"unknown Seddik frame {name!r}; expected one of {FRAMES + ['fig5', 'timing']}"
    )


def claims_job(config: dict) -> ClaimsJob:
    frames = f"{results_dir(NAME, config)}/frames"
    return ClaimsJob(
        inputs={k: f"{frames}/{k}.parquet" for k in ("fig2", "fig3", "fig4", "fig5", "validation")},
        function="softmax_ood.studies.seddik.claims:claims_table",
        # the bars, and the image pair's name for the claims' wording (Figs. 3-4)
        section={**config[NAME]["claims"], "images": images_label(config[NAME]["digits"])},
        title="Claims of Seddik et al. 2021 tested at this scale",
    )


def replication_config(config: dict, seeds) -> dict:
    """``config`` with the seeds of the replicated frames (``fig2``, ``fig4``, ``validation``)
    set to the fresh ``seeds``; one sentence if a fresh seed is one of theirs already."""
    import copy

    out = copy.deepcopy(config)
    fresh = [int(x) for x in seeds]
    for name in REPLICATED_FRAMES:
        own = sorted(int(x) for x in config[NAME][name]["seeds"])
        shared = sorted(set(own) & set(fresh))
        if shared:
            raise config_error(
                f"replication.seeds {fresh} share {shared} with {NAME}.{name}.seeds ({own}); "
                "the replication seeds must be fresh"
            )
        out[NAME][name]["seeds"] = fresh
    return out


def replication_job(config: dict, seeds) -> ClaimsJob:
    """Its claims on the fresh seeds (config ``replication``): Figs. 2 and 4 and the validation
    drawn again on them (rule ``seddik_replication_frame``); Fig. 5's networks are the LogitNorm
    grid's, not re-trained, so its rows (:data:`NOT_REPLICATED`) are not replicated."""
    replication_config(config, seeds)  # the seeds are fresh
    frames = f"{results_dir(NAME, config)}/replication/frames"
    return ClaimsJob(
        inputs={k: f"{frames}/{k}.parquet" for k in REPLICATED_FRAMES},
        function="softmax_ood.studies.seddik.claims:claims_table",
        section=dict(config[NAME]["claims"]),
        seeds=[int(x) for x in seeds],
        title="Claims of Seddik et al. 2021 on the replication seeds",
        not_replicated=NOT_REPLICATED,
    )


def report_job(config: dict) -> ReportJob:
    ds = config["data"]["dataset"]
    base = results_dir(NAME, config)
    return ReportJob(
        inputs={
            "frames": [f"{base}/frames/{f}.parquet" for f in [*FRAMES, "fig5"]],
            "figures": [f"{base}/figures/{f}.png" for f in FIGURES],
            "claims": f"{base}/claims.parquet",
            "departures": f"{base}/departures.parquet",
            "timing": f"{base}/timing.parquet",
            "seconds": f"reports/seddik_timing_{ds}.json",
            "provenance": f"{base}/features.prov.json",
        },
        parameters={
            "frames_dir": f"{base}/frames",
            "figures_dir": f"{base}/figures",
            "claims_path": f"{base}/claims.parquet",
            "departures_path": f"{base}/departures.parquet",
            "timing_path": f"{base}/timing.parquet",
            "seconds_path": f"reports/seddik_timing_{ds}.json",
            "provenance_path": f"{base}/features.prov.json",
            "fig5_run": fig5_runs(config)[0].name,
        },
    )


def figure_job(config: dict) -> ItemsJob:
    """Each figure from its own frame (Figs. 2-4 and the validation: functions of the config;
    Fig. 5: the trained network's features)."""
    frames = f"{results_dir(NAME, config)}/frames"
    return ItemsJob(
        inputs={f: {f: f"{frames}/{f}.parquet"} for f in FIGURES},
        functions="softmax_ood.studies.seddik.figures:FRAME_FIGURES",
        section={},
    )


def departures(config: dict) -> list:
    """Its departures from the paper (:class:`~softmax_ood.analysis.departures.Departure`) that
    apply to ``config`` (``departures.py``)."""
    from .departures import departures as of_config

    return of_config(config, claim_specs(config))


raw_sources = no_raw_sources


def table_job(config: dict) -> None:
    """No table: the paper prints figures only (its report tabulates their data)."""
    return None


def coverage(config: dict) -> list[dict]:
    """Where each item of the paper's results (:data:`PAPER_ITEMS`) runs, why, and what covers
    it (``coverage.csv``; :mod:`softmax_ood.analysis.coverage`). The declaration holds for
    every config: its places name the configs."""
    from ...analysis.coverage import read_coverage

    return read_coverage(HERE / "coverage.csv")
