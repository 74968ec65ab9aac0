"""Registration of the toy study (see :mod:`softmax_ood.studies.registry`): one frame computed
from its config section alone (a noisy line per seed), one table, one figure, one premise and
one claim. Imports nothing heavy."""

from __future__ import annotations

from pathlib import Path

from softmax_ood.config import study_section
from softmax_ood.studies import registry as reg

NAME = "toy"
CATEGORY = "Toy"
TITLE = "Toy 2099, A Line Has A Positive Slope"
HEADLINE = ("slope",)
HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "schema.yaml"
RULES = HERE / "rules.smk"
TABLES = ["slopes"]
FIGURES = ["lines"]


def check(config: dict) -> None:
    """Nothing to cross-reference: the section names no core entry."""


loss_variants = reg.no_loss_variants


def runs(config: dict) -> list:
    """No core training run: the frame is computed from the section alone."""
    return []


raw_sources = reg.no_raw_sources


def spec(config: dict) -> dict:
    return study_section(config, NAME)


def base(config: dict) -> str:
    return reg.results_dir(NAME, config)


def targets(config: dict) -> list[str]:
    return reg.standard_targets(NAME, config, TABLES, FIGURES)


def claim_specs(config: dict) -> list:
    from .claims import claim_specs as specs

    return specs(spec(config))


def _frames(config: dict) -> dict[str, str]:
    return {"lines": f"{base(config)}/lines.parquet"}


def claims_job(config: dict) -> reg.ClaimsJob:
    function, title = "toy_study.claims:claims_table", "Claims of the toy study"
    return reg.claims_over_frames(function, _frames(config), spec(config), title=title)


def report_job(config: dict) -> reg.ReportJob:
    return reg.standard_report(NAME, config, TABLES, FIGURES, "lines.prov.json")


def table_job(config: dict) -> reg.ItemsJob:
    return reg.items_over_frames(TABLES, "toy_study.tables:TABLES", _frames(config), spec(config))


def figure_job(config: dict) -> reg.ItemsJob:
    return reg.items_over_frames(
        FIGURES, "toy_study.figures:FIGURES", _frames(config), spec(config)
    )


def departures(config: dict) -> list:
    from softmax_ood.analysis.departures import Departure

    return [
        Departure(
            "toy.n_points",
            "1,000 points",
            "Sec. 1",
            f"{spec(config)['n_points']} points",
            "a toy: the smallest line that still tests its slope",
            ("slope",),
        )
    ]
