"""Registration: the config section validates, cross-references fail with one sentence, the
study needs no core run, one (dataset, seed) job gives the documented frames, deterministically."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from softmax_ood.errors import ConfigError
from softmax_ood.studies.ulmer import study
from softmax_ood.studies.ulmer.experiment import run_seed

HERE = Path(__file__).resolve().parents[1]


def _default_section() -> dict:
    """The ``ulmer:`` section of config/default.yaml, or (before it is applied) the snippet in
    INTEGRATION.md."""
    default = HERE.parents[3] / "config" / "default.yaml"
    cfg = yaml.safe_load(default.read_text()) if default.is_file() else {}
    if "ulmer" in cfg:
        return cfg["ulmer"]
    text = (HERE / "INTEGRATION.md").read_text()
    block = re.search(r"```yaml\n# config/default\.yaml.*?\n(ulmer:\n.*?)```", text, re.S)
    return yaml.safe_load(block.group(1))["ulmer"]


@pytest.fixture(scope="module")
def config():
    return {"seeds": [0, 1, 2, 3, 4], "ulmer": _default_section()}


def test_default_section_validates_and_checks(config):
    schema = yaml.safe_load(study.SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema).validate(config["ulmer"])
    study.check(config)
    assert study.runs(config) == [] and study.loss_variants(config) == {}
    assert config["ulmer"]["scaling"]["max_exponent"] >= 4
    assert len(study.spec(config)["seeds"]) >= 5
    targets = study.targets(config)
    assert "reports/ulmer.html" in targets and "results/ulmer/claims.md" in targets


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("grid", "seed"), 9, "ulmer.grid.seed is 9, which is not one of the study's seeds"),
        (("kinds",), ["single", "svm"], "ulmer.kinds is 'svm'; allowed values"),
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
    s["train"].update(epochs=3)
    s["scaling"].update(n_alphas=3, n_points=4)
    s["grid"].update(n=4)
    return s


def test_run_seed_frames_and_determinism(config):
    spec = _tiny(config["ulmer"])
    a = run_seed("synthetic", spec, 1, grid=True)
    b = run_seed("synthetic", spec, 1, grid=True)
    assert set(a) == {"fit", "scaling", "grid", "train_points"}
    for name in a:
        pd_a, pd_b = a[name], b[name]
        assert pd_a.equals(pd_b), name
    assert len(a["fit"]) == len(spec["kinds"])
    assert a["scaling"]["alpha"].max() == pytest.approx(10.0 ** spec["scaling"]["max_exponent"])
    assert len(a["grid"]) == 4 * 4 * 4 * len(spec["kinds"])  # n^2 points x 4 metrics x models
    bc = run_seed("breast_cancer", spec, 0, grid=False)
    assert set(bc) == {"fit", "scaling"}
    assert bc["fit"]["feature"].iloc[0] == "worst perimeter"  # most monotonic on the train rows


def test_run_spec_gives_each_job_only_what_it_reads(config):
    bc = study.run_spec(config, "breast_cancer")
    syn = study.run_spec(config, "synthetic")
    assert list(bc["datasets"]) == ["breast_cancer"] and "grid" not in bc
    assert list(syn["datasets"]) == ["synthetic"] and set(syn["grid"]) == {"extent", "n"}
