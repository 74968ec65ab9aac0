"""Registration: the config section validates, cross-references fail with one sentence, the
study needs no core run, one (dataset, seed) job gives the documented frames, deterministically."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
import pytest
import yaml

from softmax_ood.errors import ConfigError
from softmax_ood.studies.ulmer import study
from softmax_ood.studies.ulmer.experiment import run_seed

HERE = Path(__file__).resolve().parents[1]


def _default_config() -> dict:
    """The ``data`` and ``ulmer:`` sections of config/default.yaml."""
    cfg = yaml.safe_load((HERE.parents[3] / "config" / "default.yaml").read_text())
    return {"data": cfg["data"], "ulmer": cfg["ulmer"]}


@pytest.fixture(scope="module")
def config():
    return {"seeds": [0, 1, 2, 3, 4], **_default_config()}


def test_default_section_validates_and_checks(config):
    schema = yaml.safe_load(study.SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema).validate(config["ulmer"])
    study.check(config)
    assert study.runs(config) == [] and study.loss_variants(config) == {}
    assert config["ulmer"]["scaling"]["max_exponent"] >= 4
    assert len(study.spec(config)["seeds"]) >= 5
    targets = study.targets(config)
    base = f"results/ulmer/{config['data']['dataset']}"
    assert "reports/ulmer.html" in targets and f"{base}/claims.md" in targets
    assert all(t.startswith(f"{base}/") or t.startswith("reports/") for t in targets)
    assert f"{base}/tables/kstability_breast_cancer.md" in targets


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("grid", "seed"), 9, "ulmer.grid.seed is 9, which is not one of the study's seeds"),
        (("kinds",), ["single", "svm"], "ulmer.kinds is 'svm'; allowed values"),
        (("model", "mcmc", "n_samples"), 1, "ulmer.model.mcmc.n_samples is 1; the chain's"),
        (("scaling", "min_exponent"), 1, "ulmer.scaling.min_exponent is 1; it must be 0"),
    ],
)
def test_config_errors_are_one_sentence(config, path, value, message):
    bad = copy.deepcopy(config)
    node = bad["ulmer"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as err:
        study.check(bad)
    text = str(err.value)
    assert text.startswith("config error: ") and message in text and "\n" not in text


def _tiny(section: dict) -> dict:
    s = copy.deepcopy(section)
    s["datasets"]["synthetic"].update(n_train_per_class=20, n_test_per_class=5)
    s["model"].update(hidden=[8], k_samples=2, n_members=2)
    s["model"]["mcmc"].update(burn_in=20, thin=2, n_samples=2)
    s["train"].update(epochs=3)
    s["scaling"].update(n_alphas=3, n_points=4)
    s["grid"].update(n=4)
    s["directions"].update(n_random=2)
    return s


def test_run_seed_frames_and_determinism(config):
    spec = _tiny(config["ulmer"])
    a = run_seed("synthetic", spec, 1, grid=True)
    b = run_seed("synthetic", spec, 1, grid=True)
    assert set(a) == {"fit", "scaling", "directions", "datasize", "grid", "train_points"}
    assert set(a["datasize"]["fraction"]) == {0.25, 1.0}  # §6: a quarter vs all rows
    for name in a:
        pd_a, pd_b = a[name], b[name]
        assert pd_a.equals(pd_b), name
    n_models = len(spec["kinds"]) + 1  # and the control
    assert len(a["fit"]) == n_models and "control" in set(a["fit"]["kind"])
    assert (a["fit"]["train_loss"] > 0).all() and (a["fit"]["ocs_loss"] > 0).all()
    assert a["scaling"]["alpha"].max() == pytest.approx(10.0 ** spec["scaling"]["max_exponent"])
    assert len(a["grid"]) == 4 * 4 * 4 * n_models  # n^2 points x 4 metrics x models
    d = a["directions"]
    # 2 axes + 2 random directions; stochastic kinds at K and 2K, deterministic ones at K only
    assert sorted(d["direction"].unique()) == ["r0", "r1", "x1", "x2"]
    assert d[d["kind"] == "bbb"]["k"].tolist()[:2] == [2, 4]
    assert d[d["kind"] == "ensemble"]["k"].unique().tolist() == [2, 4]
    assert d[d["kind"] == "mcmc"]["k"].unique().tolist() == [2, 4]  # the chain's first 2 of 4
    assert set(d[d["kind"] == "single"]["k_role"]) == {"K"}
    # the blobs' x1 axis is parallel to the class-1/class-2 boundary (20 points per class here)
    cos = d.drop_duplicates("direction").set_index("direction")["min_cos"]
    assert cos["x1"] < 0.15 < cos["x2"]
    assert d[d["direction"] == "x2"][
        "paper_direction"
    ].all()  # x1 is degenerate: the config scales x2
    bc = run_seed("breast_cancer", spec, 0, grid=False)
    assert set(bc) == {"fit", "scaling", "directions", "datasize"}
    assert bc["directions"]["direction"].nunique() == 30 + 2
    assert bc["fit"]["feature"].iloc[0] == "worst perimeter"  # most monotonic on the train rows


def test_run_spec_gives_each_job_only_what_it_reads(config):
    bc = study.run_spec(config, "breast_cancer")
    syn = study.run_spec(config, "synthetic")
    assert list(bc["datasets"]) == ["breast_cancer"] and "grid" not in bc
    assert list(syn["datasets"]) == ["synthetic"] and set(syn["grid"]) == {"extent", "n"}


def test_the_default_blobs_label_x1_degenerate(config):
    from softmax_ood.studies.ulmer.experiment import load_dataset
    from softmax_ood.studies.ulmer.scaling import direction_set

    s = config["ulmer"]
    split = load_dataset("synthetic", s["datasets"]["synthetic"])
    dirs = direction_set(
        split.x_train, split.y_train, split.feature_names, n_random=3, seed=0, degenerate_cos=0.05
    )
    assert [(d.name, d.type, d.degenerate) for d in dirs[:2]] == [
        ("x1", "axis", True),
        ("x2", "axis", False),
    ]
    assert [d.name for d in dirs[2:]] == ["r0", "r1", "r2"]
    assert all(abs(float(d.vector @ d.vector) - 1.0) < 1e-12 for d in dirs)


def test_the_report_gets_the_departures_with_every_touched_claim():
    """The report's departures table comes from the config (a report parameter, plain data);
    the MC dropout row lists every MC dropout row, the breast-cancer row every breast-cancer
    row, and the random directions are a departure of their own."""
    import yaml

    from softmax_ood.studies.ulmer import study as ulmer_study

    root = ulmer_study.HERE.parents[3]
    cfg = yaml.safe_load((root / "config" / "default.yaml").read_text())
    cfg = {"seeds": [0, 1, 2, 3, 4], "data": cfg["data"], "ulmer": cfg["ulmer"]}
    rows = ulmer_study.report_job(cfg).parameters["departures"]
    assert yaml.safe_load(yaml.safe_dump(rows)) == rows
    by = {r["setting"]: r["claims"].split(", ") for r in rows}
    ids = [s.id for s in ulmer_study.claim_specs(cfg)]
    assert set(by["ulmer.kinds"]) == {
        i for i in ids if i.endswith("-mc_dropout") or "-mc_dropout-" in i
    }
    assert "M-synthetic-mc_dropout-predictive_entropy" in by["ulmer.kinds"]
    assert {"P-synthetic-mc_dropout", "L-breast_cancer-mc_dropout"} <= set(by["ulmer.kinds"])
    bc = set(by["ulmer.datasets.breast_cancer"])
    assert bc == {i for i in ids if "-breast_cancer" in i}
    assert {"D-breast_cancer", "P-breast_cancer-bbb", "L-breast_cancer-ensemble"} <= bc
    assert "C-synthetic-bbb" in by["ulmer.directions.n_random"]
