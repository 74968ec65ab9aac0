"""The study registry: one line per study, and the one contract every study obeys.

Each entry names the module that registers the study (``studies/<name>/study.py``). That module
imports nothing heavy (the Snakefile loads it at parse time) and satisfies :class:`Study`: every
hook below, each documented once and each with one signature (:data:`DATA_HOOKS`,
:data:`HOOKS`; the functions its jobs name: :data:`ITEM_ARGUMENTS`), plus the optional ones in
:data:`OPTIONAL_HOOKS`. :func:`contract_problems` says what a study lacks;
``tests/test_study_contract.py`` checks every registered study with it (parametrised over this
registry), and runs the control frames of every claim.

Adding a study: a package ``studies/<name>/`` with those hooks (``departures`` reads its
``departures.py``), its rules file, notebook and tests (``tests/controls.py``: one frame where
each claim must hold and one where it must not), and one line in :data:`STUDIES` (a package kept outside the library: an entry of
:data:`EXTRA_STUDIES_ENV` instead, as ``tests/test_toy_study.py`` does).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

__all__ = [
    "DATA_HOOKS",
    "HOOKS",
    "ITEM_ARGUMENTS",
    "OPTIONAL_HOOKS",
    "ClaimsJob",
    "ItemsJob",
    "ReportJob",
    "claims_over_frames",
    "EXTRA_STUDIES_ENV",
    "STUDIES",
    "all_studies",
    "Study",
    "contract_problems",
    "load_study",
    "no_loss_variants",
    "no_raw_sources",
    "items_over_frames",
    "registered_studies",
    "replication_job",
    "replication_seeds",
    "with_seeds",
    "results_dir",
    "resolve",
    "standard_report",
    "standard_targets",
    "study_caption",
]


def _plain_seeds(seeds):
    """Seeds as sorted ints (per item where given per item), or None: plain rule params."""
    if isinstance(seeds, Mapping):
        return {k: sorted(int(s) for s in v) for k, v in seeds.items()}
    return None if seeds is None else sorted(int(s) for s in seeds)


@dataclass(frozen=True)
class ClaimsJob:
    """What the shared claims rule (``rules/study.smk``: ``<NAME>_claims``) needs of a study.

    It reads every frame in ``inputs`` (name -> parquet path, or a list of paths concatenated
    into one frame), calls ``function`` (``"module:function"``, a function of those frames and
    ``section`` returning the claims table), and writes ``claims.parquet`` (with a provenance
    record of the inputs, ``section`` and ``seeds``) and ``claims.md`` (headed ``title``) under
    ``results/<NAME>/<dataset>/``."""

    inputs: Mapping[str, str | Sequence[str]]
    function: str
    section: Mapping
    seeds: Sequence[int] | None = None
    title: str = "Claims"
    mem_mb: int = 2000  # the job's memory request (a cluster's hard limit)
    #: a replication's job only: ids (fnmatch patterns) of the rows whose frames it does not
    #: re-run on the fresh seeds (they read "not replicated here")
    not_replicated: Sequence[str] = ()

    def params(self) -> dict:
        """The rule's params: plain data (Snakemake reruns the job when they change)."""
        return {
            "function": self.function,
            "section": dict(self.section),
            "seeds": _plain_seeds(self.seeds),
            "title": self.title,
            "not_replicated": list(self.not_replicated),
        }


@dataclass(frozen=True)
class ItemsJob:
    """Tables or figures, one job each, drawn from a study's frames by the shared rules
    ``<NAME>_table`` and ``<NAME>_figure`` (``rules/study.smk``).

    ``inputs`` maps each table (figure) name to the frames it reads (frame name -> parquet
    path); ``functions`` names a mapping ``"module:MAPPING"`` of the same names to functions of
    those frames and ``section``: a table function returns the table (a DataFrame), a figure
    function draws to the path it is given (``function(frames, section, path)``). ``labels``
    (tables only) names a mapping of column headers for the markdown. Written under
    ``results/<NAME>/<dataset>/{tables,figures}/``, each with a provenance record."""

    inputs: Mapping[str, Mapping[str, str]]
    functions: str
    section: Mapping
    seeds: Sequence[int] | Mapping[str, Sequence[int]] | None = None  # or per item
    labels: str | None = None

    def params(self) -> dict:
        return {
            "functions": self.functions,
            "section": dict(self.section),
            "seeds": _plain_seeds(self.seeds),
            "labels": self.labels,
        }


@dataclass(frozen=True)
class ReportJob:
    """What the shared report rule (``rules/study.smk``: ``<NAME>_report``) needs of a study:
    the files its notebook (``<package>/report.ipynb``) reads (``inputs``: name -> path or list
    of paths; the rule waits for them) and the notebook's ``parameters``. The shared renderer
    (:mod:`softmax_ood.report`) writes ``reports/<NAME>.ipynb`` and ``reports/<NAME>.html``."""

    inputs: Mapping[str, str | Sequence[str]]
    parameters: Mapping = field(default_factory=dict)


@runtime_checkable
class Study(Protocol):
    """What a study's registration module provides.

        Attributes: ``NAME`` (the package name, also its config section and the prefix of its rule
        names), ``TITLE`` (the paper), ``CATEGORY`` (its heading in Snakemake's ``--report``),
        ``SCHEMA`` (its config-section schema fragment), ``RULES`` (its Snakemake rules file: its own
        compute, table and figure steps), ``TABLES`` and ``FIGURES`` (the names of its tables and
        figures, written under ``results/<NAME>/<dataset>/``), ``HEADLINE`` (ids or fnmatch patterns
    of its headline claims: the results page and section open with them). Its claims table and its report are
        made by the rules every study shares (``rules/study.smk``) from :meth:`claims_job` and
        :meth:`report_job`.
    """

    NAME: str
    TITLE: str
    CATEGORY: str
    SCHEMA: Path
    RULES: Path
    TABLES: Sequence[str]
    FIGURES: Sequence[str]
    HEADLINE: Sequence[str]

    def check(self, config: dict) -> None:
        """Cross-references of its section against the rest of the config; raises a one-sentence
        :class:`~softmax_ood.errors.ConfigError`."""

    def loss_variants(self, config: dict) -> dict:
        """Loss variants it derives from the core ``losses`` (name -> entry; may be empty)."""

    def runs(self, config: dict) -> list:
        """The core trainings (:class:`~softmax_ood.runs.Run`) it needs; the workflow trains the
        union of every study's runs once each. Empty for a study that trains in its own rules."""

    def targets(self, config: dict) -> list[str]:
        """Its final outputs (``rule all`` collects them)."""

    def claim_specs(self, config: dict) -> list:
        """Its claims as :class:`~softmax_ood.analysis.claims.ClaimSpec` for this config (premise,
        claim and sanity rows): what the claims table will judge."""

    def claims_job(self, config: dict) -> ClaimsJob:
        """How its claims table is made from its frames (the shared ``<NAME>_claims`` rule)."""

    def report_job(self, config: dict) -> ReportJob:
        """What its report notebook reads (the shared ``<NAME>_report`` rule)."""

    def departures(self, config: dict) -> list:
        """Its departures from the paper that apply to ``config``, as
        :class:`~softmax_ood.analysis.departures.Departure` rows (``<package>/departures.py``:
        setting, the paper's value and section, ours, why, the claim ids it touches, scale).
        Its ``PAPER_VALUES`` there records the cited config values that equal the paper's."""

    def table_job(self, config: dict) -> ItemsJob | None:
        """Its tables drawn from its frames by the shared rule ``<NAME>_table``; ``None`` when
        it makes no table there (none at all, or made in its own rules)."""

    def figure_job(self, config: dict) -> ItemsJob | None:
        """Its figures drawn from its frames by the shared rule ``<NAME>_figure``; ``None`` when
        it draws no figure there."""

    def raw_sources(self, config: dict) -> list[str]:
        """Paper-scale download sources it reads beyond the core data (e.g. CIFAR-10-C),
        downloaded by the core per-source rule (usually empty)."""


#: The data attributes every study has (see :class:`Study`; ``HEADLINE``: claim ids or fnmatch
#: patterns of its headline claims, with which the results page and section open).
DATA_HOOKS: tuple[str, ...] = (
    "NAME",
    "TITLE",
    "CATEGORY",
    "SCHEMA",
    "RULES",
    "TABLES",
    "FIGURES",
    "HEADLINE",
)

#: The function hooks every study has, each with the one signature (its parameter names) the
#: workflow calls it with (documented on :class:`Study`).
HOOKS: dict[str, tuple[str, ...]] = {
    hook: ("config",)
    for hook in (
        "check",
        "loss_variants",
        "runs",
        "targets",
        "claim_specs",
        "claims_job",
        "report_job",
        "table_job",
        "figure_job",
        "departures",
        "raw_sources",
    )
}

#: The functions a study's jobs name, by the positional arguments the shared scripts pass:
#: the claims function (:class:`ClaimsJob`), each table and each figure function (the mappings
#: :class:`ItemsJob` names).
ITEM_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "claims": ("frames", "section"),
    "table": ("frames", "section"),
    "figure": ("frames", "section", "path"),
}

#: Optional hooks: name -> what it does (only a study that compares with printed values has them).
OPTIONAL_HOOKS: dict[str, str] = {
    "PAPER_VALUES": "path of a CSV (table, id_dataset, row, loss, metric, value) of the paper's "
    "printed values; the results page shows each table's printed values beside ours.",
    "paper_names": "paper_names(config) -> {loss: {ours: paper id}, id_dataset, note}: how its "
    "tables' names map to PAPER_VALUES' (the page puts the printed value in our cell).",
    "PAPER_ITEMS": "path of a CSV (item, section, what) of the paper's results items (every "
    "figure, table, theorem and quantitative claim), read once from the paper.",
    "coverage": "coverage(config) -> rows (item, where, why, covered_by): where each item of "
    "PAPER_ITEMS runs (default, digits, full, paper scale, unit test, not yet run, not run, not "
    "possible offline), why, and the claims, tables, figures or tests that cover it "
    "(softmax_ood.analysis.coverage; the study's page and the results page show it). A study "
    "with one of PAPER_ITEMS and coverage has both, and a row for every item.",
    "headline_plain": "headline_plain(claims) -> {claim id: text}: a headline claim in the "
    "paper's own terms (e.g. LogitNorm: average FPR95 CE -> LogitNorm, ours beside the paper's "
    "printed numbers), computed from the study's rows of the claims table; the headline table "
    "opens the claim's 'ours' cell with it.",
    "replication_job": "replication_job(config, seeds) -> ClaimsJob: its claims job on the "
    "fresh seed set ``seeds`` (config ``replication``): the same function over frames computed "
    "on those seeds (``not_replicated``: the rows whose frames are not re-run); without it the "
    "study cannot replicate and its rows read 'not replicated here'.",
}
OPTIONAL_SIGNATURES: dict[str, tuple[str, ...]] = {
    "paper_names": ("config",),
    "coverage": ("config",),
    "headline_plain": ("claims",),
    "replication_job": ("config", "seeds"),
}


def _parameters(function) -> list[tuple[str, object, bool]]:
    import inspect

    return [
        (p.name, p.kind, p.default is inspect.Parameter.empty)
        for p in inspect.signature(function).parameters.values()
    ]


def _hook_problem(where: str, function, names: tuple[str, ...]) -> str | None:
    """Why ``function`` is not a hook called as ``function(<names>)`` by keyword or position
    (exactly those parameters, none with a default), or None."""
    import inspect

    if not callable(function):
        return f"{where} is not callable"
    params = _parameters(function)
    ok = (
        [n for n, _, _ in params] == list(names)
        and all(k == inspect.Parameter.POSITIONAL_OR_KEYWORD for _, k, _ in params)
        and all(required for _, _, required in params)
    )
    shown = ", ".join(n for n, _, _ in params)
    return None if ok else f"{where} has the signature ({shown}), not ({', '.join(names)})"


def _item_problem(where: str, function, names: tuple[str, ...]) -> str | None:
    """Why ``function`` cannot be called as ``function(*<names>)`` (the shared scripts pass
    them by position): exactly that many positional parameters without a default."""
    import inspect

    if not callable(function):
        return f"{where} is not callable"
    params = _parameters(function)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ok = len(params) == len(names) and all(k in positional and r for _, k, r in params)
    shown = ", ".join(n for n, _, _ in params)
    return None if ok else f"{where} takes ({shown}), not the {len(names)} ({', '.join(names)})"


def contract_problems(study, config: dict | None = None) -> list[str]:
    """What ``study`` (a registration module) lacks of the one study shape: each required data
    hook, each function hook with its signature (:data:`HOOKS`), an optional hook present with
    a wrong signature; with a validated ``config``, also the functions its jobs name (the claims
    function, every table and figure function: :data:`ITEM_ARGUMENTS`). Empty when it obeys."""
    name = getattr(study, "NAME", getattr(study, "__name__", "study"))
    problems = [f"{name} has no {h}" for h in DATA_HOOKS if not hasattr(study, h)]
    for hook, names in {**HOOKS, **OPTIONAL_SIGNATURES}.items():
        if not hasattr(study, hook):
            if hook in HOOKS:
                problems.append(f"{name} has no hook {hook}({', '.join(names)})")
            continue
        problem = _hook_problem(f"{name}.{hook}", getattr(study, hook), names)
        problems += [problem] if problem else []
    if not problems:
        from ..analysis.coverage import coverage_problems

        problems += coverage_problems(study)
    if problems or config is None:
        return problems
    job = study.claims_job(config)
    checks = [(f"{name}'s claims function {job.function}", resolve(job.function), "claims")]
    for hook, kind in (("table_job", "table"), ("figure_job", "figure")):
        items = getattr(study, hook)(config)
        if items is None:
            continue
        mapping = resolve(items.functions)
        for item in items.inputs:
            if item not in mapping:
                problems.append(f"{name}'s {kind} {item!r} is not in {items.functions}")
                continue
            checks.append(
                (f"{name}'s {kind} function {items.functions}[{item}]", mapping[item], kind)
            )
    for where, function, kind in checks:
        problem = _item_problem(where, function, ITEM_ARGUMENTS[kind])
        problems += [problem] if problem else []
    return problems


#: name -> registration module, in the order the results section shows the papers.
STUDIES: dict[str, str] = {
    "logitnorm": "softmax_ood.studies.logitnorm.study",
    "kang": "softmax_ood.studies.kang.study",
    "ulmer": "softmax_ood.studies.ulmer.study",
    "seddik": "softmax_ood.studies.seddik.study",
    "crosspaper": "softmax_ood.studies.crosspaper.study",
}


#: Environment variable naming studies registered outside this package, ``name=module`` entries
#: separated by commas (each module importable, e.g. from ``PYTHONPATH``): a study package kept
#: elsewhere (the toy study of ``tests/``) joins the workflow without an edit here. Enable it
#: with ``studies:`` in a config overlay; its section defaults to its schema's defaults.
EXTRA_STUDIES_ENV = "SOFTMAX_OOD_EXTRA_STUDIES"


def all_studies() -> dict[str, str]:
    """:data:`STUDIES` and, after them, the studies :data:`EXTRA_STUDIES_ENV` names."""
    import os

    out = dict(STUDIES)
    for entry in filter(
        None, (e.strip() for e in os.environ.get(EXTRA_STUDIES_ENV, "").split(","))
    ):
        name, sep, module = (x.strip() for x in entry.partition("="))
        if not (sep and name and module) or name in STUDIES:
            raise ValueError(
                f"{EXTRA_STUDIES_ENV} has {entry!r}; each entry is name=module, a name not "
                f"registered already ({', '.join(STUDIES)})"
            )
        out[name] = module
    return out


def resolve(ref: str):
    """The object a ``"module:name"`` reference names (a study's function or mapping)."""
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def load_study(name: str) -> ModuleType:
    """The registration module of study ``name``."""
    studies = all_studies()
    if name not in studies:
        raise ValueError(
            f"unknown study {name!r}; registered studies: {', '.join(sorted(studies))}"
        )
    return importlib.import_module(studies[name])


def registered_studies() -> dict[str, ModuleType]:
    """Every registered study, name -> registration module (what the Snakefile hands the core):
    :data:`STUDIES` in the papers' order, then any :data:`EXTRA_STUDIES_ENV` names."""
    return {name: load_study(name) for name in all_studies()}


def no_loss_variants(config: dict) -> dict:
    """``loss_variants`` of a study that derives no loss variant (``loss_variants =
    no_loss_variants`` in its registration)."""
    return {}


def no_raw_sources(config: dict) -> list[str]:
    """``raw_sources`` of a study that reads no paper-scale source beyond the core data."""
    return []


def results_dir(name: str, config: dict) -> str:
    """Where study ``name`` writes: ``results/<name>/<data.dataset>`` (the one place the path
    is built)."""
    return f"results/{name}/{config['data']['dataset']}"


def standard_targets(name: str, config: dict, tables, figures) -> list[str]:
    """The usual final outputs of study ``name``: each table as parquet and markdown, each
    figure, the claims table and the report (for a study's ``targets(config)``)."""
    base = results_dir(name, config)
    return (
        [f"{base}/tables/{t}.{ext}" for t in tables for ext in ("parquet", "md")]
        + [f"{base}/figures/{f}.png" for f in figures]
        + [f"{base}/claims.parquet", f"{base}/claims.md"]
        + [f"reports/{name}.ipynb", f"reports/{name}.html"]
    )


def study_caption(study, kind: str) -> str:
    """The Snakemake-report caption of a study's ``kind`` of output (``claims``, ``notebook``,
    ``table``, ``figure``): ``captions/<kind>.rst`` in its package when it has one, else
    ``workflow/report/<NAME>_<kind>.rst`` (relative to the workflow folder)."""
    own = Path(study.RULES).parent / "captions" / f"{kind}.rst"
    return str(own) if own.is_file() else f"workflow/report/{study.NAME}_{kind}.rst"


def claims_over_frames(function: str, frames: Mapping, section: Mapping, **kw) -> ClaimsJob:
    """A :class:`ClaimsJob` reading ``frames`` (frame name -> parquet path) by ``function``,
    with the section's seeds; ``kw``: its other fields (``title``, ``mem_mb``)."""
    return ClaimsJob(
        inputs=dict(frames), function=function, section=section, seeds=section["seeds"], **kw
    )


def items_over_frames(names, functions: str, frames: Mapping, section: Mapping) -> ItemsJob:
    """An :class:`ItemsJob` whose every item (table or figure ``names``) reads all ``frames``
    (frame name -> parquet path), with the section's seeds."""
    return ItemsJob(
        inputs={n: dict(frames) for n in names},
        functions=functions,
        section=section,
        seeds=section["seeds"],
    )


def standard_report(
    name: str, config: dict, tables, figures, provenance: str, inputs=None, parameters=None
) -> ReportJob:
    """The usual report of study ``name`` (for its ``report_job(config)``): its notebook reads
    the tables, figures and claims table under ``results/<name>/<dataset>/`` and prints the
    provenance record ``provenance`` (relative to that folder); ``inputs`` and ``parameters``
    add what else it reads."""
    base = results_dir(name, config)
    return ReportJob(
        inputs={
            "tables": [f"{base}/tables/{t}.parquet" for t in tables],
            "figures": [f"{base}/figures/{f}.png" for f in figures],
            "claims": f"{base}/claims.parquet",
            "provenance": f"{base}/{provenance}",
            **(inputs or {}),
        },
        parameters={
            "tables_dir": f"{base}/tables",
            "figures_dir": f"{base}/figures",
            "claims_path": f"{base}/claims.parquet",
            **(parameters or {}),
            "provenance_path": f"{base}/{provenance}",
        },
    )


def replication_seeds(config: dict, name: str) -> list[int] | None:
    """The fresh seeds study ``name`` is replicated on (config ``replication``: its ``seeds``
    when ``studies`` lists the study), else None."""
    rep = config.get("replication") or {}
    if name not in (rep.get("studies") or []) or not rep.get("seeds"):
        return None
    return sorted(int(s) for s in rep["seeds"])


def with_seeds(config: dict, name: str, seeds: Sequence[int]) -> dict:
    """A copy of ``config`` whose study ``name`` runs on ``seeds`` (its section's ``seeds``):
    what a study's ``replication_job`` builds its fresh-seed paths and section from."""
    import copy

    out = copy.deepcopy(config)
    out[name] = {**out[name], "seeds": [int(s) for s in seeds]}
    return out


def replication_job(study, config: dict) -> ClaimsJob | None:
    """The claims job of ``study`` on its fresh seed set (its ``replication_job`` hook), or
    None when the config does not replicate it."""
    seeds = replication_seeds(config, study.NAME)
    if seeds is None:
        return None
    return study.replication_job(config, seeds)
