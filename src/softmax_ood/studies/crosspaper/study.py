"""Registration of the cross-paper study (see :mod:`softmax_ood.studies.registry`).

Imports nothing heavy: the Snakefile loads it at parse time. Trains nothing of its own: its
networks are core runs named in its section (with the default config the LogitNorm grid's
main-architecture CE and LogitNorm runs: the same :class:`~softmax_ood.runs.Run` objects, so the
workflow trains them once for both studies).
"""

from __future__ import annotations

from pathlib import Path

from ...analysis.departures import config_scale
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
    no_raw_sources,
    results_dir,
    standard_report,
    standard_targets,
)
from .shared import HEADLINE as HEADLINE

NAME = "crosspaper"
CATEGORY = "Cross-paper"
TITLE = (
    "Cross-paper: Kang et al. 2024's reversion, Ulmer & Cinà 2021's Theorem 1 and Seddik et al. "
    "2021's Theorem 4.8 asked of Wei et al. 2022's LogitNorm networks, on Kang's discriminator axis"
)
HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
SRC = HERE.parents[1]
TABLES = ["reversion", "rays", "axis", "seddik"]
FIGURES = ["reversion", "rays", "axis", "seddik"]
#: the frames its compute rules write under results/crosspaper/<dataset>/
FRAMES = ("shift", "rays", "fit", "levels", "ood_scores", "seddik")
#: the loss family each role must name (``losses:`` entries of the core config)
ROLES = {"baseline": "ce", "method": "logitnorm"}


def check(config: dict) -> None:
    s = config[NAME]
    check_names(f"{NAME}.recipe", s["recipe"], config["recipes"])
    check_names(f"{NAME}.arch", s["arch"], config["architectures"])
    for role, family in ROLES.items():
        check_names(f"{NAME}.{role}", s[role], config["losses"])
        if config["losses"][s[role]]["loss"] != family:
            raise config_error(
                f"{NAME}.{role} is {s[role]!r}, whose loss is "
                f"{config['losses'][s[role]]['loss']!r}; the {role} must be a {family!r} loss"
            )
    check_names(
        f"{NAME}.grid.corruptions",
        s["grid"]["corruptions"],
        registry_entries(SRC / "corruptions.py", "CORRUPTIONS"),
    )
    check_names(
        f"{NAME}.discriminator.featurizer",
        s["discriminator"]["featurizer"],
        registry_entries(SRC / "discriminator.py", "FEATURIZERS"),
    )
    if not s["grid"]["corruptions"] and not s["grid"]["rotations"]:
        raise config_error(f"{NAME}.grid needs at least one corruption or rotation to shift along")
    sd = s["seddik"]
    if sd["stats_from"] == "independent" and sd["fit_fraction"] + sd["stats_fraction"] >= 1:
        raise config_error(
            f"{NAME}.seddik.stats_fraction is {sd['stats_fraction']} with fit_fraction "
            f"{sd['fit_fraction']}; stats_from: independent needs fit_fraction + stats_fraction "
            "< 1 (a test part must remain)"
        )
    r = s["rays"]
    if r["max_exponent"] <= r["min_exponent"]:
        raise config_error(
            f"{NAME}.rays.max_exponent is {r['max_exponent']}, not above min_exponent "
            f"{r['min_exponent']}"
        )


loss_variants = no_loss_variants


def _control(config: dict, name: str) -> bool:
    """A cue-removal control set (a variant of another far set, :data:`softmax_ood.fashion.
    CUE_REMOVED`): a sanity row of the LogitNorm study, not a point of the shift axis."""
    if config["data"]["dataset"] != "fashion":
        return False
    from ...fashion import CUE_REMOVED

    return name in CUE_REMOVED


def spec(config: dict) -> dict:
    """The section as its scripts and claims read it: seeds filled in, the method's tau, the
    far sets (the pipeline's OOD test sets but the cue-removal controls)."""
    s = study_section(config, NAME)
    s["tau"] = float(config["losses"][s["method"]]["tau"])
    s["far_ood"] = [n for n in config["data"]["ood_test"] if not _control(config, n)]
    s["dataset"] = config["data"]["dataset"]
    s["scale"] = config_scale(config)
    return s


def runs(config: dict) -> list[Run]:
    s = study_section(config, NAME)
    ds = config["data"]["dataset"]
    return sorted(
        Run(ds, s["recipe"], s["arch"], s[role], int(seed)) for role in ROLES for seed in s["seeds"]
    )


def targets(config: dict) -> list[str]:
    return standard_targets(NAME, config, TABLES, FIGURES) + [
        f"{results_dir(NAME, config)}/departures.md"
    ]


def claim_specs(config: dict) -> list:
    from .claims import claim_specs as specs

    return specs(spec(config))


def _frames(config: dict) -> dict[str, str]:
    base = results_dir(NAME, config)
    return {k: f"{base}/{k}.parquet" for k in FRAMES}


def claims_job(config: dict) -> ClaimsJob:
    return claims_over_frames(
        "softmax_ood.studies.crosspaper.claims:crosspaper_claims",
        _frames(config),
        spec(config),
        title=(
            "Cross-paper claims: Kang's reversion, Ulmer's Theorem 1 and Seddik's Theorem 4.8 "
            "on LogitNorm's networks"
        ),
    )


def report_job(config: dict) -> ReportJob:
    return standard_report(NAME, config, TABLES, FIGURES, "shift.prov.json")


def _items_job(config: dict, names, functions: str) -> ItemsJob:
    return items_over_frames(names, functions, _frames(config), spec(config))


def table_job(config: dict) -> ItemsJob:
    return _items_job(config, TABLES, "softmax_ood.studies.crosspaper.tables:TABLES")


def figure_job(config: dict) -> ItemsJob:
    return _items_job(config, FIGURES, "softmax_ood.studies.crosspaper.figures:FIGURES")


def departures(config: dict) -> list:
    from .departures import departures as of_config

    return of_config(config, claim_specs(config))


raw_sources = no_raw_sources
