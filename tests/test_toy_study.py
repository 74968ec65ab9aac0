"""A new study is its package plus one registry entry: the toy study of ``tests/toy_study``
(registered through ``SOFTMAX_OOD_EXTRA_STUDIES``, no file outside its package edited) obeys
the contract, gets its config section from its schema's defaults and its captions from its
package, and runs through the smoke DAG to the results page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from softmax_ood.config import validate_config
from softmax_ood.studies.registry import (
    EXTRA_STUDIES_ENV,
    contract_problems,
    load_study,
    registered_studies,
    study_caption,
)

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "toy=toy_study.study"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    monkeypatch.setenv(EXTRA_STUDIES_ENV, ENTRY)
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    cfg["studies"] = [*cfg["studies"], "toy"]  # enabled; no toy: section anywhere
    studies = registered_studies()
    return studies, validate_config(cfg, ROOT / "workflow/schemas/config.schema.yaml", studies)


def test_the_toy_study_is_registered_from_outside_the_library_and_obeys_the_contract(toy):
    studies, config = toy
    assert list(studies)[-1] == "toy" and "toy" in config["studies"]
    assert config["toy"] == {
        "seeds": None,
        "n_points": 50,
        "slope": 1.0,
        "noise": 0.1,
        "alpha": 0.05,
    }
    study = load_study("toy")
    assert contract_problems(study, config) == []
    for kind in ("claims", "notebook", "table", "figure"):
        assert Path(study_caption(study, kind)).is_relative_to(ROOT / "tests/toy_study")


def test_a_malformed_extra_study_entry_is_one_sentence(monkeypatch):
    monkeypatch.setenv(EXTRA_STUDIES_ENV, "kang=toy_study.study")
    with pytest.raises(ValueError, match="each entry is name=module, a name not registered"):
        registered_studies()


@pytest.mark.parametrize("slope, holds", [(1.0, True), (-1.0, False)])
def test_the_toy_claim_holds_on_a_rising_line_and_not_on_a_falling_one(toy, slope, holds):
    from toy_study.claims import claims_table
    from toy_study.lines import lines

    section = {"seeds": [0, 1, 2], "n_points": 50, "slope": slope, "noise": 0.1, "alpha": 0.05}
    table = claims_table({"lines": lines(section)}, section).set_index("claim_id")
    assert bool(table.loc["P-fit", "holds"]) and bool(table.loc["slope", "holds"]) is holds


@pytest.mark.slow
def test_the_toy_study_runs_through_the_smoke_dag_to_the_results_page(tmp_path):
    """The smoke config with only the toy enabled (a config overlay written in the copy): its
    frame, table, figure, claims and report, and the results page naming its claims."""
    import pandas as pd
    from e2e import SMOKE, fresh_copy, snakemake

    work = fresh_copy(tmp_path / "repo")
    (work / "toy.yaml").write_text("studies: [toy]\n")
    path = os.pathsep.join(filter(None, [str(work / "tests"), os.environ.get("PYTHONPATH")]))
    env = {"PYTHONPATH": path, EXTRA_STUDIES_ENV: ENTRY}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        proc = snakemake(work, "--cores", "1", *SMOKE, "toy.yaml")
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    base = work / "results/toy/digits"
    seeds = yaml.safe_load((work / "config/smoke.yaml").read_text())["seeds"]
    assert sorted(pd.read_parquet(base / "tables/slopes.parquet")["seed"]) == seeds
    claims = pd.read_parquet(base / "claims.parquet").set_index("claim_id")
    assert bool(claims.loc["slope", "holds"])
    page = (work / "reports/results.html").read_text()
    assert "Toy 2099" in page and "slope" in page and "P-fit" in page
    assert "toy" in set(pd.read_parquet(work / "results/claims_all.parquet")["study"])
