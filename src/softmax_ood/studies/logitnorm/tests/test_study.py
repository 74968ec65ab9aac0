"""The LogitNorm study's registration: its runs, loss variants, targets and config checks."""

from pathlib import Path

import pytest
import yaml

from softmax_ood.config import ConfigError, validate_config
from softmax_ood.runs import Run
from softmax_ood.studies.logitnorm import study
from softmax_ood.studies.registry import registered_studies

ROOT = Path(__file__).resolve().parents[5]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
STUDIES = registered_studies()


@pytest.fixture()
def cfg():
    return validate_config(
        yaml.safe_load((ROOT / "config/default.yaml").read_text()), SCHEMA, STUDIES
    )


@pytest.fixture()
def digits_cfg():
    """The 8x8 digits config: the study's full tables (Table 3, LogitPenalty, GODIN, tau)."""
    from snakemake.utils import update_config

    raw = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    update_config(raw, yaml.safe_load((ROOT / "config/digits.yaml").read_text()))
    return validate_config(raw, SCHEMA, STUDIES)


def test_the_default_runs_the_headline_cells_on_fashion(cfg):
    runs, s = study.runs(cfg), cfg["logitnorm"]
    assert sorted({(r.dataset, r.arch, r.loss) for r in runs}) == [
        ("fashion", s["main_arch"], "ce"),
        ("fashion", s["main_arch"], "logitnorm"),
    ]
    assert {r.seed for r in runs} == set(cfg["seeds"]) and len(cfg["seeds"]) >= 5


def test_the_full_config_runs_every_table_at_28x28_on_both_seed_sets():
    """config/full.yaml (issue 45): Table 3's three families, LogitPenalty and GODIN on the
    main model and the paper's tau grid, all on Fashion-MNIST under the headline recipe, on
    the five seeds and the five replication seeds; the default's recipe and data kept."""
    from snakemake.utils import update_config

    from softmax_ood.studies.logitnorm.departures import PAPER_VALUES

    raw = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    update_config(raw, yaml.safe_load((ROOT / "config/full.yaml").read_text()))
    full = validate_config(raw, SCHEMA, STUDIES)
    default = validate_config(
        yaml.safe_load((ROOT / "config/default.yaml").read_text()), SCHEMA, STUDIES
    )
    s = full["logitnorm"]
    assert full["data"] == default["data"] and s["recipe"] == default["logitnorm"]["recipe"]
    assert {full["architectures"][a]["family"] for a in s["arch_table"]} == {
        "wrn",
        "resnet",
        "densenet",
    }
    assert {s["penalty"], s["godin"]} <= set(s["main_losses"])
    assert s["tau_ablation"] == PAPER_VALUES["logitnorm.tau_ablation"]
    runs = study.runs(full)
    cells = {(r.dataset, r.recipe, r.arch, r.loss) for r in runs}
    assert len(cells) == 4 + 2 * 2 + 6  # main losses, two more archs, six more taus
    assert {r.dataset for r in runs} == {"fashion"} and {r.recipe for r in runs} == {s["recipe"]}
    assert {r.seed for r in runs} == set(full["seeds"]) | set(full["replication"]["seeds"])
    assert len(runs) == len(cells) * 10


def test_runs_cover_the_study_without_duplicates(digits_cfg):
    cfg = digits_cfg
    runs = study.runs(cfg)
    assert len(runs) == len(set(runs))
    s = cfg["logitnorm"]
    assert {r.seed for r in runs} == set(cfg["seeds"])
    assert Run("digits", s["recipe"], s["main_arch"], "godin", 0) in runs
    assert study.tau_variant(cfg, 0.04) == "logitnorm"
    assert study.tau_variant(cfg, 0.5) == "logitnorm-tau0.5"
    for arch in s["arch_table"]:
        for loss in ("ce", "logitnorm"):
            assert Run("digits", s["recipe"], arch, loss, 0) in runs
    assert study.loss_variants(cfg)["logitnorm-tau0.5"] == {"loss": "logitnorm", "tau": 0.5}


def test_targets_are_namespaced(cfg):
    t = study.targets(cfg)
    assert "results/logitnorm/fashion/tables/table1.parquet" in t
    assert all(p.startswith(("results/logitnorm/", "reports/logitnorm.")) for p in t)


def test_method_must_be_a_logitnorm_loss(cfg):
    raw = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    raw["logitnorm"]["method"] = "ce"
    with pytest.raises(
        ConfigError, match="logitnorm.method is 'ce', which is not a LogitNorm loss"
    ):
        validate_config(raw, SCHEMA, STUDIES)


def test_figs_2_and_3_read_one_seeds_baseline_and_method_models(cfg):
    """The softmax frame's two models: the study's first seed unless
    softmax_outputs.model_seed names another of its seeds; a seed it does not train is a
    config error; the setting stays out of the tables' and claims' spec."""
    s = cfg["logitnorm"]
    first = [
        Run("fashion", s["recipe"], s["main_arch"], k, cfg["seeds"][0]) for k in ("ce", "logitnorm")
    ]
    assert study.softmax_runs(cfg) == first and set(first) <= set(study.runs(cfg))
    assert study.softmax_section(cfg)["model_seed"] == cfg["seeds"][0]
    assert "softmax_outputs" not in study.spec(cfg)
    assert "results/logitnorm/fashion/figures/fig3.png" in study.targets(cfg)
    raw = yaml.safe_load((ROOT / "config/default.yaml").read_text())
    raw["logitnorm"]["softmax_outputs"]["model_seed"] = cfg["seeds"][2]
    assert {r.seed for r in study.softmax_runs(validate_config(raw, SCHEMA, STUDIES))} == {
        cfg["seeds"][2]
    }
    raw["logitnorm"]["softmax_outputs"]["model_seed"] = 99
    with pytest.raises(ConfigError, match="softmax_outputs.model_seed is 99"):
        validate_config(raw, SCHEMA, STUDIES)
