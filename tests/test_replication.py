"""Replication (config ``replication``; :func:`softmax_ood.analysis.claims.claims_with_replication`):
a study's claims judged again on a second, disjoint seed set, and the ``replicates`` column.
Engine units, a control where a chance pass is caught, the config's checks, and the dry runs."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config

from softmax_ood.analysis.claims import (
    NOT_REPLICATED,
    ClaimSpec,
    Measurement,
    Replication,
    claims_with_replication,
    evaluate_claims,
    one_sided_t,
    render_claims_markdown,
    replication_column,
    restrict_to_seeds,
    verdict_class,
)
from softmax_ood.config import ConfigError, validate_config
from softmax_ood.studies.registry import registered_studies, replication_job

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
sys.path.insert(0, str(ROOT / "tests"))

PRIMARY, FRESH = [0, 1, 2, 3, 4], [5, 6, 7, 8, 9]


def _table(verdicts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"claim_id": list(verdicts), "verdict": list(verdicts.values())})


def test_verdict_words_ignore_numbers_and_notes_but_not_a_significant_opposite():
    assert verdict_class("too few seeds to tell (power 0.41)") == "too few seeds to tell"
    assert verdict_class("holds (not after Holm over the headline claims: p = 0.2)") == "holds"
    assert verdict_class("holds — rests on the borderline premise P1 (p = 0.03)") == "holds"
    assert verdict_class("cannot test: premise P1 does not hold; measured 1.5") == (
        "cannot test: premise P1 does not hold"
    )
    assert verdict_class("does not hold (the opposite is significant, p = 0.01)") != (
        verdict_class("does not hold")
    )


def test_replicates_says_yes_or_what_the_fresh_seeds_gave():
    primary = _table({"A": "holds", "B": "holds", "C": "too few seeds to tell (power 0.3)"})
    fresh = _table(
        {
            "A": "holds",
            "B": "does not hold (the opposite is significant, p = 0.01)",
            "C": "too few seeds to tell (power 0.5)",
        }
    )
    out = replication_column(primary, fresh)
    assert list(out["replicates"]) == [
        "yes",
        "no: does not hold (the opposite is significant, p = 0.01)",
        "yes",
    ]
    assert list(out["verdict"]) == list(primary["verdict"])  # the primary verdict stays


def test_rows_not_re_run_and_studies_not_replicated_say_so():
    primary = _table({"P3": "holds", "C3-logits": "holds", "C1": "holds", "C9": "holds"})
    fresh = _table({"P3": "holds", "C3-logits": "holds", "C1": "holds"})
    out = replication_column(primary, fresh, ("P3", "C3*"))
    assert list(out["replicates"]) == [NOT_REPLICATED, NOT_REPLICATED, "yes", NOT_REPLICATED]
    assert set(replication_column(primary, None)["replicates"]) == {NOT_REPLICATED}


def test_frames_are_restricted_to_the_fresh_seeds_keeping_unseeded_rows():
    frames = {
        "runs": pd.DataFrame({"seed": [0, 5, 6, None], "x": [1.0, 2.0, 3.0, 4.0]}),
        "note": pd.DataFrame({"x": [7.0]}),
    }
    out = restrict_to_seeds(frames, FRESH)
    assert list(out["runs"]["x"]) == [2.0, 3.0, 4.0]
    assert out["note"].equals(frames["note"])
    with pytest.raises(ValueError, match=r"^The runs frame has no rows for the seeds \[7\]"):
        restrict_to_seeds(frames, [7])


# -- the control: a chance pass on one seed set, caught by the fresh seeds ---------------------
def _one_claim(frames: dict, section: dict) -> pd.DataFrame:
    """A claim "x > 0" over the seeds of the ``runs`` frame (one-sided t-test)."""
    x = frames["runs"].sort_values("seed")["x"].to_numpy(dtype=float)
    spec = ClaimSpec("C", "x is positive", "mean x", 0.0, ">", kind="claim", effect=1.0)
    m = Measurement(float(x.mean()), samples=tuple(x), n=len(x))
    return evaluate_claims("control", [spec], {"C": m}, alpha=section["alpha"])


def _null_draws():
    """Per-seed values from a null (mean 0): the first block of five seeds whose one-sided
    t-test passes by chance at p < 0.05, then the next five (fresh seeds of the same null)."""
    rng = np.random.default_rng(2026)
    while True:
        block = rng.normal(0.0, 1.0, 5)
        if one_sided_t(block, 0.0, ">") < 0.05:
            return block, rng.normal(0.0, 1.0, 5)


def test_control_a_chance_pass_is_caught_by_replication():
    chance, fresh = _null_draws()
    runs = pd.DataFrame({"seed": PRIMARY + FRESH, "x": [*chance, *fresh]})
    primary_frames = {"runs": runs[runs["seed"].isin(PRIMARY)]}
    section = {"alpha": 0.05}
    alone = claims_with_replication(_one_claim, primary_frames, section)
    assert alone.loc[0, "verdict"] == "holds"  # the chance pass, as one seed set sees it
    assert alone.loc[0, "replicates"] == NOT_REPLICATED
    # the replication's frame holds every seed; it is judged on the fresh ones only
    out = claims_with_replication(
        _one_claim, primary_frames, section, Replication({"runs": runs}, section, FRESH)
    )
    assert out.loc[0, "verdict"] == "holds"
    assert out.loc[0, "replicates"].startswith("no: ")
    assert out.loc[0, "n"] == 5


def test_each_seed_set_has_its_own_family_adjustment():
    """Two claims: on the primary seeds both pass after Benjamini–Hochberg; on the fresh seeds
    the first is null, and the second passes alone but not after its own family's adjustment
    (twice its p, as the smaller of two), which its replicates cell says."""
    strong = [3.0, 3.1, 2.9, 3.2, 3.05]

    def two(frames, section):
        r = frames["runs"].sort_values("seed")
        specs = [ClaimSpec(c, c, "x", 0.0, ">", kind="claim") for c in ("A", "B")]
        ms = {c: Measurement(float(r[c].mean()), samples=tuple(r[c]), n=len(r)) for c in "AB"}
        return evaluate_claims("control", specs, ms, alpha=0.05)

    weak = [0.6, -0.2, 1.1, 0.3, 0.9]  # p between 0.025 and 0.05: fails BH over two claims
    p = one_sided_t(np.array(weak), 0.0, ">")
    assert 0.025 < p < 0.05
    primary = pd.DataFrame({"seed": PRIMARY, "A": strong, "B": strong})
    fresh = pd.DataFrame({"seed": FRESH, "A": [0.5, -0.4, 0.1, -0.3, 0.2], "B": weak})
    out = claims_with_replication(
        two, {"runs": primary}, {}, Replication({"runs": fresh}, {}, FRESH)
    )
    assert list(out["verdict"]) == ["holds", "holds"]
    assert (
        out.loc[1, "replicates"].startswith("no: ")
        and "after the family" in (out.loc[1, "replicates"])
    )


def test_the_markdown_shows_the_replicates_column():
    chance, fresh = _null_draws()
    runs = pd.DataFrame({"seed": PRIMARY + FRESH, "x": [*chance, *fresh]})
    out = claims_with_replication(
        _one_claim,
        {"runs": runs[runs["seed"] < 5]},
        {"alpha": 0.05},
        Replication({"runs": runs}, {"alpha": 0.05}, FRESH),
    )
    md = render_claims_markdown(out)
    assert "| replicates |" in md and "| no: " in md


# -- the config -------------------------------------------------------------------------------
def _config(**replication):
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    cfg = copy.deepcopy(cfg)
    update_config(cfg, {"replication": replication})
    return cfg


@pytest.fixture(scope="module")
def studies():
    return registered_studies()


def test_the_default_replicates_the_cheap_studies_and_not_logitnorm(studies):
    cfg = validate_config(_config(), SCHEMA, studies)
    jobs = {n: replication_job(studies[n], cfg) for n in cfg["studies"]}
    assert jobs["logitnorm"] is None and jobs["crosspaper"] is None
    assert jobs["ulmer"] is not None and jobs["seddik"] is not None
    assert jobs["ulmer"].seeds == FRESH and "note-*" in jobs["ulmer"].not_replicated
    fresh = [p for paths in jobs["ulmer"].inputs.values() for p in paths]
    assert all(
        "/seed5/" in p or "/seed6/" in p or "/seed7/" in p or "/seed8/" in p or "/seed9/" in p
        for p in fresh
    )
    assert jobs["ulmer"].section["seeds"] == FRESH


def test_replication_seeds_must_be_fresh(studies):
    with pytest.raises(
        ConfigError, match=r"^config error: replication\.seeds \[4, 5\] share \[4\]"
    ):
        validate_config(_config(seeds=[4, 5]), SCHEMA, studies)
    cfg = _config(seeds=[6, 7])
    cfg["seddik"]["validation"]["seeds"] = [0, 1, 6]
    with pytest.raises(ConfigError, match=r"seddik\.validation\.seeds"):
        validate_config(cfg, SCHEMA, studies)


def test_a_study_that_cannot_replicate_is_one_sentence(studies):
    with pytest.raises(
        ConfigError,
        match=r"^config error: replication\.studies lists 'crosspaper', "
        r"which cannot replicate",
    ):
        validate_config(_config(studies=["crosspaper"]), SCHEMA, studies)
    with pytest.raises(ConfigError, match=r"replication\.seeds is empty"):
        validate_config(_config(seeds=[], studies=["ulmer"]), SCHEMA, studies)


# -- the workflow: the default schedules the replication jobs, none for LogitNorm -------------
@pytest.mark.slow
def test_the_default_dry_run_schedules_replication_jobs(tmp_path_factory):
    from e2e import fresh_copy
    from test_scheduling import _dry

    work = fresh_copy(tmp_path_factory.mktemp("repl") / "repo")
    on = _dry(work)
    off = _dry(work, "--config", "replication={studies: []}")
    # Ulmer: five fresh seeds per data set; Seddik: Figs. 2, 4 and the validation again
    assert on["ulmer_run"] - off["ulmer_run"] == 5
    assert on["ulmer_run_grid"] - off["ulmer_run_grid"] == 5
    assert on.get("seddik_replication_frame") == 3 and "seddik_replication_frame" not in off
    # Kang: its three networks on the five fresh seeds, each evaluated over the shift grid, and
    # CE's FGSM frame on each; aggregated on their own
    assert on["train_seed"] - off["train_seed"] == 15
    assert on["kang_evaluate"] - off["kang_evaluate"] == 15
    assert on["kang_adversarial"] - off["kang_adversarial"] == 5
    assert on.get("kang_aggregate_replication") == 1 and "kang_aggregate_replication" not in off
    # LogitNorm's grid (and the networks Seddik's Fig. 5 and cross-paper read) is not replicated
    assert on["evaluate_seed"] == off["evaluate_seed"]


def test_the_headline_table_shows_whether_each_claim_replicates():
    from softmax_ood.results_section.latex import headline_tex
    from softmax_ood.results_section.outputs import StudyOutputs, collect_claims
    from softmax_ood.results_section.page import headline_html

    chance, fresh = _null_draws()
    runs = pd.DataFrame({"seed": PRIMARY + FRESH, "x": [*chance, *fresh]})
    section = {"alpha": 0.05}
    caught = claims_with_replication(
        _one_claim,
        {"runs": runs[runs["seed"] < 5]},
        section,
        Replication({"runs": runs}, section, FRESH),
    )
    alone = claims_with_replication(_one_claim, {"runs": runs[runs["seed"] < 5]}, section)
    claims = collect_claims({"a": caught, "b": alone})
    studies = [
        StudyOutputs("a", "Paper A", headline=["C"]),
        StudyOutputs("b", "Paper B", headline=["C"]),
    ]
    html = headline_html(studies, claims)
    assert '<th data-col="replicates">replicates</th>' in html
    assert caught.loc[0, "replicates"] in html and NOT_REPLICATED in html
    tex = headline_tex(studies, claims).replace(r"\allowbreak{}", "")
    assert "replicates: no: " in tex and f"replicates: {NOT_REPLICATED}" in tex


def test_paper_scale_replicates_logitnorm_on_its_own_grid(studies):
    cfg = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    update_config(cfg, yaml.safe_load((ROOT / "config/paper.yaml").read_text()))
    cfg = validate_config(cfg, SCHEMA, studies)
    ln = studies["logitnorm"]
    job = replication_job(ln, cfg)
    assert job is not None and job.seeds == FRESH
    assert all("/replication/" in p for p in job.inputs.values())
    fresh = {r for r in ln.runs(cfg) if r.seed in FRESH}
    assert {(r.arch, r.loss) for r in fresh} == {(r.arch, r.loss) for r in ln.study_runs(cfg)}
    assert not {r.seed for r in ln.study_runs(cfg)} & set(FRESH)
