"""Every registered study obeys one contract (parametrised over the registry, like timm's
plug-in tests): the :class:`~softmax_ood.studies.registry.Study` protocol, claims declared as
data with kinds, and, for every claim, one hand-built frame where it must hold and one where it
must not (the study's ``tests/controls.py``), so that no row of a claims table is true by
construction unless it says so (kind ``sanity``)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from softmax_ood.analysis.claims import KINDS, ClaimSpec, family_control
from softmax_ood.config import validate_config
from softmax_ood.studies.registry import (
    OPTIONAL_HOOKS,
    OPTIONAL_SIGNATURES,
    STUDIES,
    Study,
    contract_problems,
    load_study,
    registered_studies,
    resolve,
    study_caption,
)

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(STUDIES)


def _config(*overlays: str) -> dict:
    from snakemake.utils import update_config

    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    for name in overlays:
        update_config(cfg, yaml.safe_load((ROOT / "config" / name).read_text()))
    return validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", registered_studies())


@pytest.fixture(scope="module")
def config():
    return _config()


@pytest.mark.parametrize("name", NAMES)
def test_the_study_has_every_hook_with_its_one_signature(name, config):
    """Every hook of the one study shape, by signature (registry.HOOKS, DATA_HOOKS; no hook is
    optional but PAPER_VALUES and paper_names), and the functions its jobs name, by the
    arguments the shared scripts pass (claims and tables: frames, section; figures: frames,
    section, path)."""
    study = load_study(name)
    assert contract_problems(study, config) == []
    assert isinstance(study, Study), f"{name} lacks a hook of the Study protocol"
    assert study.NAME == name and Path(study.RULES).is_file() and Path(study.SCHEMA).is_file()
    assert study.HEADLINE and all(isinstance(h, str) for h in study.HEADLINE)
    if hasattr(study, "PAPER_VALUES"):
        assert Path(study.PAPER_VALUES).is_file(), f"{name}.PAPER_VALUES names no file"
    assert set(OPTIONAL_HOOKS) >= set(OPTIONAL_SIGNATURES)
    assert not (Path(study.RULES).parent / "INTEGRATION.md").exists()


def _fake_study(**changes) -> ModuleType:
    """A copy of the LogitNorm registration module with ``changes`` (None deletes a hook)."""
    fake = ModuleType("fake_study")
    fake.__dict__.update(
        {k: v for k, v in vars(load_study("logitnorm")).items() if not k.startswith("__")}
    )
    for hook, value in changes.items():
        if value is None:
            delattr(fake, hook)
        else:
            setattr(fake, hook, value)
    return fake


def _figure_mapping_with_a_two_argument_figure():
    from softmax_ood.studies.logitnorm import figures

    return {**figures.FIGURES, "fig1": lambda frames, section: None}


@pytest.mark.parametrize(
    "changes, problem",
    [
        ({}, None),  # the copy itself obeys
        ({"runs": lambda config, seeds: []}, r"fake\.runs has the signature \(config, seeds\)"),
        ({"claim_specs": lambda spec: []}, r"claim_specs has the signature \(spec\)"),
        ({"targets": lambda config=None: []}, r"targets has the signature"),
        ({"departures": None}, r"has no hook departures\(config\)"),
        ({"table_job": None}, r"has no hook table_job\(config\)"),
        ({"raw_sources": None}, r"has no hook raw_sources\(config\)"),
        ({"HEADLINE": None}, r"has no HEADLINE"),
        ({"paper_names": lambda: {}}, r"paper_names has the signature \(\)"),
        ({"check": "not a function"}, r"fake\.check is not callable"),
    ],
)
def test_a_study_with_a_wrong_signature_is_rejected(changes, problem, config):
    fake = _fake_study(NAME="fake", **changes)
    problems = contract_problems(fake, config)
    if problem is None:
        assert problems == []
    else:
        assert any(re.search(problem, p) for p in problems), problems


def test_a_job_naming_a_function_with_a_wrong_signature_is_rejected(config, monkeypatch):
    """The functions a study's jobs name are checked too: a claims function taking one more
    argument, or a figure function without the path it draws to."""
    import dataclasses

    from softmax_ood.studies.logitnorm import claims, study

    monkeypatch.setattr(claims, "wrong_claims", lambda frames, section, extra: None, raising=False)
    wrong = dataclasses.replace(
        study.claims_job(config), function="softmax_ood.studies.logitnorm.claims:wrong_claims"
    )
    problems = contract_problems(_fake_study(claims_job=lambda config: wrong), config)
    assert problems == [
        "logitnorm's claims function softmax_ood.studies.logitnorm.claims:wrong_claims takes "
        "(frames, section, extra), not the 2 (frames, section)"
    ]
    from softmax_ood.studies.logitnorm import figures

    monkeypatch.setattr(
        figures, "WRONG", _figure_mapping_with_a_two_argument_figure(), raising=False
    )
    items = dataclasses.replace(
        study.figure_job(config), functions="softmax_ood.studies.logitnorm.figures:WRONG"
    )
    problems = contract_problems(_fake_study(figure_job=lambda config: items), config)
    assert (
        len(problems) == 1
        and "figures:WRONG[fig1] takes (frames, section), not the 3" in problems[0]
    )


def _paths(inputs) -> list[str]:
    return [p for v in inputs.values() for p in ([v] if isinstance(v, str) else v)]


@pytest.mark.parametrize("name", NAMES)
def test_the_shared_rules_can_make_its_claims_table_and_report(name, config):
    """rules/study.smk instantiates the claims and report rules from claims_job and report_job:
    the function is importable, every frame lies under the study's results folder, the params
    are plain data, and the notebook and the captions the shared rules name exist."""
    study = load_study(name)
    job = study.claims_job(config)
    module, function = job.function.split(":")
    assert callable(getattr(importlib.import_module(module), function)), job.function
    base = f"results/{name}/{config['data']['dataset']}/"
    assert _paths(job.inputs) and all(p.startswith(base) for p in _paths(job.inputs))
    assert yaml.safe_load(yaml.safe_dump(job.params())) == job.params()  # plain data
    report = study.report_job(config)
    assert f"{base}claims.parquet" in _paths(report.inputs)
    assert yaml.safe_load(yaml.safe_dump(dict(report.parameters))) == dict(report.parameters)
    assert (Path(study.RULES).parent / "report.ipynb").is_file()
    assert isinstance(study.CATEGORY, str) and study.CATEGORY
    for kind in ("claims", "notebook"):
        assert (ROOT / study_caption(study, kind)).is_file()
    rules = Path(study.RULES).read_text()  # its own rules keep only its own steps
    assert f"rule {name}_claims:" not in rules and f"rule {name}_report:" not in rules
    for hook, kind, rule in (("table_job", "table", "table"), ("figure_job", "figure", "figure")):
        items = getattr(study, hook)(config)
        if items is None:
            continue  # it makes no such item in the shared rules
        mapping = resolve(items.functions)
        names = set(study.TABLES if kind == "table" else study.FIGURES)
        # a config may ask for fewer (LogitNorm's Fig. 5 needs two or more tau), never others
        assert items.inputs and set(items.inputs) <= names <= set(mapping), f"{name}.{hook}"
        assert all(callable(mapping[n]) for n in names)
        assert all(p.startswith(base) for v in items.inputs.values() for p in v.values())
        assert (ROOT / study_caption(study, kind)).is_file()
        assert f"rule {name}_{rule}:" not in rules


@pytest.mark.parametrize("name", NAMES)
def test_claims_are_data_with_a_kind_and_a_premise_first(name, config):
    specs = load_study(name).claim_specs(config)
    assert specs and all(isinstance(s, ClaimSpec) for s in specs)
    ids = [s.id for s in specs]
    assert len(ids) == len(set(ids)), f"{name}: claim ids repeat"
    assert {s.kind for s in specs} <= set(KINDS)
    assert any(s.kind == "premise" for s in specs), f"{name} declares no premise"
    known = set(ids)
    for s in specs:
        assert set(s.requires) <= known and set(s.all_of) <= known, s.id


@pytest.mark.parametrize(
    "name, overlays",
    [
        *((n, ()) for n in NAMES),
        # the 8x8 digits config changes these two studies' sections (LogitNorm's full tables:
        # Table 3, tau ablation; Kang's CNN and far sets); Ulmer's and Seddik's are the same
        *(
            pytest.param(n, ("digits.yaml",), marks=pytest.mark.slow)
            for n in NAMES
            if n in ("kang", "logitnorm")
        ),
        # the full config changes LogitNorm's section only (its tables at 28x28)
        pytest.param("logitnorm", ("full.yaml",), marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_every_claim_has_a_control_where_it_holds_and_one_where_it_does_not(name, overlays):
    """The per-row rule (family control off): a control frame makes one row hold and the rest
    whatever they are, so the family adjustment over that frame would test the frame, not the
    row; the adjustment has its own control (tests/test_analysis.py) and only ever turns a
    "holds" into a not-holds."""
    config = _config(*overlays)
    controls = importlib.import_module(f"softmax_ood.studies.{name}.tests.controls")
    seen: dict[str, set[bool]] = {}
    with family_control(False):
        cases = list(controls.cases(config))
    for cid, expect, table, *verdict in cases:
        row = table.set_index("claim_id").loc[cid]
        assert bool(row["holds"]) is expect, (
            f"{name} control for {cid}: expected holds={expect}, got {row['verdict']!r} "
            f"({row['detail']})"
        )
        if verdict:  # the case also says how the verdict must begin (issue 25's kinds)
            assert str(row["verdict"]).startswith(verdict[0]), (
                f"{name} control for {cid}: expected a verdict beginning {verdict[0]!r}, got "
                f"{row['verdict']!r} ({row['detail']})"
            )
        seen.setdefault(cid, set()).add(expect)
    ids = [s.id for s in load_study(name).claim_specs(config)]
    lacking = [i for i in ids if seen.get(i) != {True, False}]
    assert not lacking, f"{name}: claims without both control frames: {lacking}"


def _smoke_config(run: Path) -> dict:
    from snakemake.utils import update_config

    cfg = yaml.safe_load((run / "config/default.yaml").read_text())
    update_config(cfg, yaml.safe_load((run / "config/smoke.yaml").read_text()))
    return validate_config(cfg, run / "workflow/schemas/config.schema.yaml", registered_studies())


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_output_of_the_smoke_run_carries_what_a_reader_needs(name, smoke_runs):
    """On the smoke outputs: every figure passed the legibility check when it was drawn (report
    width, no text off the canvas, no overlapping tick labels or titles, data on some axes);
    every table has rows; the report names every claim id of the claims table."""
    import pandas as pd

    from softmax_ood.analysis.figcheck import read_check

    run = smoke_runs[0]
    targets = load_study(name).targets(_smoke_config(run))
    figures = [t for t in targets if t.endswith(".png")]
    assert figures, f"{name} draws no figure"
    for f in figures:
        check = read_check(run / f)
        assert check is not None, f"{f} was not saved through analysis.style.save_figure"
        assert check["problems"] == [], f"{f}: " + "; ".join(check["problems"])
    for t in (t for t in targets if "/tables/" in t and t.endswith(".parquet")):
        assert len(pd.read_parquet(run / t)) > 0, f"{t} has no rows"
    claims = pd.read_parquet(run / next(t for t in targets if t.endswith("claims.parquet")))
    report = (run / next(t for t in targets if t.endswith(".html"))).read_text()
    missing = [c for c in claims["claim_id"] if c not in report]
    assert not missing, f"reports/{name}.html does not name the claims {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_its_headline_names_claims_of_the_default(name, config):
    """The results page opens with each study's HEADLINE: the patterns match claims (kind
    "claim") of the default config, and every premise they rest on is a premise of the study."""
    from softmax_ood.results_section.outputs import headline_ids, premises_of

    study = load_study(name)
    specs = study.claim_specs(config)
    ids = headline_ids(specs, study.HEADLINE)
    assert ids, f"{name}: HEADLINE matches no claim"
    premises = {s.id for s in specs if s.kind == "premise"}
    assert all(set(premises_of(specs, i)) <= premises for i in ids)


# ------------------------------------------------------------------ departures (INTERFACES §2)

CITES = re.compile(r"(paper:|Sec\.|App\.|§|Table)")
CONFIGS = {
    "default.yaml": "default",
    "digits.yaml": "default",
    "full.yaml": "default",
    "paper.yaml": "paper",
    "paper_kang_mnist.yaml": "paper",
}


def _paper_config() -> dict:
    from snakemake.utils import update_config

    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    update_config(cfg, yaml.safe_load((ROOT / "config/paper.yaml").read_text()))
    return validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", registered_studies())


@pytest.mark.parametrize("name", NAMES)
def test_departures_are_rows_with_every_field_and_known_claims(name, config):
    from softmax_ood.analysis.departures import COLUMNS, Departure, departures_frame

    study = load_study(name)
    for cfg in (config, _paper_config()):
        deps = study.departures(cfg)
        assert deps and all(isinstance(d, Departure) for d in deps), name
        ids = {s.id for s in study.claim_specs(cfg)}
        for d in deps:
            for f in ("setting", "paper", "section", "ours", "why"):
                assert getattr(d, f).strip(), f"{name}: departure {d.setting!r} has no {f}"
            assert set(d.claims) <= ids, f"{name}: {d.setting!r} names unknown claims"
        frame = departures_frame(deps)
        assert list(frame.columns) == COLUMNS and len(frame) == len(deps)


def cited_values(path: Path) -> list[tuple[str, object, str]]:
    """(dotted key, YAML value, comment) of every line of a config whose trailing comment cites
    a paper section; a key's path follows the indentation."""
    stack: list[tuple[int, str]] = []
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(\s*)([A-Za-z0-9_\-.]+):(.*)$", line)
        if not m:
            continue
        indent, key, rest = len(m.group(1)), m.group(2), m.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        value, hash_, comment = rest.partition(" #")
        if hash_ and CITES.search(comment) and value.strip():
            out.append((".".join(k for _, k in stack), yaml.safe_load(value), comment.strip()))
    return out


def test_cited_values_scanner_reads_keys_values_and_comments(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(
        "a:\n  b:\n    c: [1, 2]   # App. B.2\n    d: 3   # not stated\n  e: x  # paper: y\n"
    )
    assert cited_values(f) == [("a.b.c", [1, 2], "App. B.2"), ("a.e", "x", "paper: y")]


def test_every_config_value_citing_a_paper_is_the_papers_or_a_declared_departure():
    """Every config value whose comment cites the paper ("paper:", "Sec.", "App.", "§",
    "Table") either equals the value a study records as the paper's (its ``PAPER_VALUES``,
    key or "<file>:<key>") or is one of its declared departures for that config's scale."""
    modules = {n: importlib.import_module(f"softmax_ood.studies.{n}.departures") for n in NAMES}
    problems = []
    for fname, scale in CONFIGS.items():
        for key, value, comment in cited_values(ROOT / "config" / fname):
            recorded = [
                m.PAPER_VALUES[k]
                for m in modules.values()
                for k in (f"{fname}:{key}", key)
                if k in m.PAPER_VALUES
            ][:1]
            declared = any(
                d.setting == key and d.applies_to(scale)
                for m in modules.values()
                for d in m.DEPARTURES
            )
            if recorded and recorded[0] == value:
                continue
            if declared:
                continue
            problems.append(
                f"{fname}: {key} = {value!r} ({comment})"
                + (f" differs from the paper's {recorded[0]!r}" if recorded else "")
            )
    assert not problems, "undeclared departures:\n" + "\n".join(problems)


def test_the_cited_values_check_fails_on_a_changed_paper_value(tmp_path, monkeypatch):
    """The check can fail: Kang's App. B.2 milestones changed to LogitNorm's 80/140 are caught."""
    import test_study_contract as me  # this module, so the check reads the patched folder

    cfg = tmp_path / "config"
    cfg.mkdir()
    for f in CONFIGS:
        text = (ROOT / "config" / f).read_text()
        if f == "paper.yaml":
            text = text.replace(
                "milestones: [100, 150]       # App. B.2", "milestones: [80, 140]        # App. B.2"
            )
        (cfg / f).write_text(text)
    monkeypatch.setattr(me, "ROOT", tmp_path)
    with pytest.raises(AssertionError, match=r"recipes.kang-paper-sgd.milestones = \[80, 140\]"):
        me.test_every_config_value_citing_a_paper_is_the_papers_or_a_declared_departure()


#: registered studies with no paper of their own (no PAPER_ITEMS, no coverage rows)
PAPERLESS = {"crosspaper": "it compares the four papers; each paper's items are its own study's"}


@pytest.fixture(scope="module")
def place_configs(config):
    """Each place's validated configs (analysis.coverage.PLACE_CONFIGS) whose overlays exist."""
    from softmax_ood.analysis.coverage import PLACE_CONFIGS

    out = {}
    for place, overlays in PLACE_CONFIGS.items():
        there = [o for o in overlays if all((ROOT / "config" / f).is_file() for f in o)]
        out[place] = [config if not o else _config(*o) for o in there]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_item_of_its_paper_has_a_coverage_row_with_known_claims(name, place_configs):
    """Issue 45: each paper's results items (every figure, table, theorem and quantitative
    claim, read once into its PAPER_ITEMS) has a row saying where it runs (default, digits,
    full, paper scale, unit test, not yet run, not run, not possible offline) and why; every
    claim id a row names is a claim of the study in a config of one of its places (the
    default's for a row that runs in the default), every table, figure and test it names
    exists."""
    from softmax_ood.analysis.coverage import claim_problems, coverage_problems, coverage_rows

    study = load_study(name)
    if name in PAPERLESS:
        assert not coverage_rows(study), f"{name} has no paper: {PAPERLESS[name]}"
        return
    rows = coverage_rows(study)
    assert rows, f"{name} declares no coverage (PAPER_ITEMS and coverage(config))"
    assert coverage_problems(study) == []
    assert claim_problems(study, place_configs) == []


def _covered_fake(tmp_path, items_extra: str = "", rows: str | None = None) -> ModuleType:
    """The Seddik registration with its paper items (plus ``items_extra``) and coverage rows
    (``rows`` replaces them) in ``tmp_path``."""
    from softmax_ood.analysis.coverage import read_coverage

    study = load_study("seddik")
    items = tmp_path / "paper_items.csv"
    items.write_text(Path(study.PAPER_ITEMS).read_text() + items_extra)
    cov = tmp_path / "coverage.csv"
    cov.write_text(rows if rows is not None else (Path(study.HERE) / "coverage.csv").read_text())
    fake = ModuleType("fake_covered")
    fake.__dict__.update({k: v for k, v in vars(study).items() if not k.startswith("__")})
    fake.PAPER_ITEMS = items

    def coverage(config):
        return read_coverage(cov)

    fake.coverage = coverage
    return fake


def test_a_paper_item_without_a_row_or_a_row_naming_nothing_known_is_caught(
    tmp_path, config, place_configs
):
    from softmax_ood.analysis.coverage import claim_problems

    assert contract_problems(_covered_fake(tmp_path), config) == []
    fake = _covered_fake(tmp_path, items_extra="Fig 9,§9,a figure nobody declared\n")
    assert contract_problems(fake, config) == ["seddik's paper item 'Fig 9' has no coverage row"]
    head = "item,where,why,covered_by\n"
    own = (Path(load_study("seddik").HERE) / "coverage.csv").read_text().split("\n", 1)[1]
    cases = {
        "Fig 2,somewhere,x,C1\n": "runs in 'somewhere'",
        "Fig 2,paper scale + default,x,C1\n": "out of order",
        "Fig 2,default,,C1\n": "says no why",
        "Fig 2,default,x,\n": "names no claim or output",
        "Fig 2,not run,x,C1\n": "is 'not run' but names what covers it",
        "Fig 2,default + not run,x,C1\n": "mixes 'not run'",
        "Fig 2,default,x,figure:fig99\n": "names figure 'fig99', which seddik does not make",
        "Fig 2,default,x,test:tests/test_nothing_here.py\n": "names test",
        "Fig 2,default,x,C1\n": "appears twice",
        "Fig 99,default,x,C1\n": "names no item of its PAPER_ITEMS",
    }
    for row, problem in cases.items():
        problems = contract_problems(_covered_fake(tmp_path, rows=head + own + row), config)
        assert any(problem in p for p in problems), (row, problems)
    assert claim_problems(_covered_fake(tmp_path), place_configs) == []
    swapped = own.replace("P1 C1 C1-train", "P1 C9-* C1-train", 1)
    problems = claim_problems(_covered_fake(tmp_path, rows=head + swapped), place_configs)
    assert problems == [
        "seddik's coverage row 'Fig 2' names 'C9-*', which matches no claim of seddik in default"
    ]
    nowhere = own.replace("Fig 2,default,", "Fig 2,full,", 1)
    problems = claim_problems(
        _covered_fake(tmp_path, rows=head + nowhere), {**place_configs, "full": []}
    )
    assert problems == ["seddik's coverage row 'Fig 2' runs in 'full', which has no config here"]
