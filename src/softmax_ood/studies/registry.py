"""The study registry: one line per study.

Each entry names the module that registers the study (``studies/<name>/study.py``). That module
imports nothing heavy (the Snakefile loads it at parse time) and defines:

* ``NAME``, ``TITLE`` (paper), ``SCHEMA`` (its config-section schema fragment), ``RULES`` (its
  Snakemake rules file);
* ``check(config)``: cross-references of its section (one-sentence :class:`ConfigError`);
* ``loss_variants(config) -> {name: loss entry}``: loss variants it derives (may be empty);
* ``runs(config) -> [Run]``: the trainings it needs; the workflow trains the union once each;
* ``targets(config) -> [path]``: its final outputs (``rule all`` collects them).

Adding a study: a package ``studies/<name>/`` with those files, its notebook and tests, and one
line here.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["STUDIES", "load_study", "registered_studies", "standard_targets"]

STUDIES: dict[str, str] = {
    "kang": "softmax_ood.studies.kang.study",
    "logitnorm": "softmax_ood.studies.logitnorm.study",
    "seddik": "softmax_ood.studies.seddik.study",
    "ulmer": "softmax_ood.studies.ulmer.study",
}


def load_study(name: str) -> ModuleType:
    """The registration module of study ``name``."""
    if name not in STUDIES:
        raise ValueError(
            f"unknown study {name!r}; registered studies: {', '.join(sorted(STUDIES))}"
        )
    return importlib.import_module(STUDIES[name])


def registered_studies() -> dict[str, ModuleType]:
    """Every registered study, name -> registration module (what the Snakefile hands the core)."""
    return {name: load_study(name) for name in sorted(STUDIES)}


def standard_targets(name: str, config: dict, tables, figures) -> list[str]:
    """The usual final outputs of study ``name``: each table as parquet and markdown, each
    figure, the claims table and the report (for a study's ``targets(config)``)."""
    base = f"results/{name}/{config['data']['dataset']}"
    return (
        [f"{base}/tables/{t}.{ext}" for t in tables for ext in ("parquet", "md")]
        + [f"{base}/figures/{f}.png" for f in figures]
        + [f"{base}/claims.parquet", f"{base}/claims.md"]
        + [f"reports/{name}.ipynb", f"reports/{name}.html"]
    )
