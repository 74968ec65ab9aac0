"""Config validation: core schema, names and parameters read from the code's registries, each
study's own fragment, and the union of the studies' runs."""

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from softmax_ood.codedeps import registry_entries
from softmax_ood.config import ConfigError, all_runs, expanded_losses, validate_config
from softmax_ood.runs import Run
from softmax_ood.studies.registry import registered_studies

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
STUDIES = registered_studies()


def default():
    return yaml.safe_load((ROOT / "config/default.yaml").read_text())


def merged(*names):
    """Config files merged the way Snakemake merges --configfile over the Snakefile's default."""
    cfg = default()
    for name in names:
        update_config(cfg, yaml.safe_load((ROOT / "config" / name).read_text()))
    return cfg


def test_default_validates_and_fills_defaults():
    cfg = validate_config(default(), SCHEMA, STUDIES)
    assert cfg["losses"]["logitnorm"]["tau"] == 0.04
    assert cfg["evaluation"]["ece_bins"] == 15  # default filled in
    assert cfg["device"] == "cpu"


@pytest.mark.parametrize("name", ["smoke.yaml", "paper.yaml", "full.yaml"])
def test_shipped_configs_validate_as_snakemake_merges_them(name):
    cfg = validate_config(merged(name), SCHEMA, STUDIES)
    if name == "paper.yaml":
        assert cfg["data"]["dataset"] == "cifar10" and cfg["data"]["source"] == "paper"
        recipe = cfg["recipes"][cfg["logitnorm"]["recipe"]]
        assert recipe["optimizer"] == "sgd" and recipe["epochs"] == 200 and recipe["lr"] == 0.1
        assert {r.dataset for r in all_runs(cfg, STUDIES)} == {"cifar10"}
        # the paper's five seeds, and the LogitNorm grid again on the replication seeds
        assert {r.seed for r in all_runs(cfg, STUDIES)} == {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
    elif name == "full.yaml":  # the default's data and recipes, the LogitNorm grid widened
        base = validate_config(default(), SCHEMA, STUDIES)
        assert cfg["data"] == base["data"] and cfg["recipes"] == base["recipes"]
        assert set(all_runs(base, STUDIES)) < set(all_runs(cfg, STUDIES))
    else:
        assert cfg["recipes"]["sgd"]["epochs"] == 4 and cfg["recipes"]["adam"]["epochs"] == 2
        assert cfg["recipes"]["sgd"]["optimizer"] == "sgd"  # merged from the default


def _set(cfg, path, value):
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return cfg


@pytest.mark.parametrize(
    "path, value, start, registry",
    [
        (
            ("losses", "logitnorm", "loss"),
            "logitnrom",
            "losses.logitnorm.loss is 'logitnrom'",
            "losses",
        ),
        (("architectures", "cnn", "family"), "vit", "architectures.cnn.family is 'vit'", "models"),
    ],
)
def test_unknown_names_list_the_registry(path, value, start, registry):
    with pytest.raises(ConfigError) as err:
        validate_config(_set(default(), path, value), SCHEMA, STUDIES)
    msg = str(err.value)
    assert msg.startswith(f"config error: {start}; allowed values: ") and "\n" not in msg
    src = ROOT / "src/softmax_ood"
    reg = (
        registry_entries(src / "losses.py", "LOSSES")
        if registry == "losses"
        else registry_entries(src / "models/__init__.py", "MODELS")
    )
    assert msg.endswith(", ".join(sorted(reg)))


def test_unknown_dataset_and_score():
    with pytest.raises(
        ConfigError,
        match=r"^config error: data.dataset is 'imagenet'; allowed values: digits, fashion, cifar10, cifar100, mnist$",
    ):
        validate_config(_set(default(), ("data", "dataset"), "imagenet"), SCHEMA, STUDIES)
    cfg = default()
    cfg["scores"]["mahalanobis"] = {}
    with pytest.raises(
        ConfigError,
        match=r"scores is 'mahalanobis'; allowed values: energy, godin, gradnorm, maxlogit, msp, odin",
    ):
        validate_config(cfg, SCHEMA, STUDIES)


@pytest.mark.parametrize(
    "path, value, match",
    [
        (
            ("architectures", "cnn", "chanels"),
            [8],
            r"architectures.cnn has the unknown key 'chanels' for family 'cnn'; allowed keys: .*channels",
        ),
        (
            ("scores", "odin", "epsilon"),
            0.1,
            r"scores.odin has the unknown key 'epsilon' for score 'odin'; allowed keys: temperature, eps",
        ),
        (
            ("losses", "logitnorm", "temp"),
            0.1,
            r"losses.logitnorm has the unknown key 'temp' for loss 'logitnorm'; allowed keys: tau",
        ),
        (
            ("score_overrides", "logitnorm", "energy", "T"),
            0.1,
            r"score_overrides.logitnorm.energy has the unknown key 'T'",
        ),
        (("recipes", "adam", "lr"), -1, r"recipes.adam.lr"),
        (("device",), "tpu", r"device is 'tpu'; allowed values: cpu, cuda"),
    ],
)
def test_nested_entries_are_checked_against_the_code(path, value, match):
    with pytest.raises(ConfigError, match=match):
        validate_config(_set(default(), path, value), SCHEMA, STUDIES)


@pytest.mark.parametrize(
    "overrides, match",
    [
        ({"nosuch": 1}, r"score_overrides has the unknown key 'nosuch'; allowed keys \(loss fam"),
        ({"nosuch": {"energy": {}}}, r"score_overrides has the unknown key 'nosuch'"),
        ({"logitnorm": {"nosuch": 1}}, r"score_overrides.logitnorm has the unknown key 'nosuch'"),
    ],
)
def test_an_unknown_name_under_score_overrides_is_an_unknown_key(overrides, match):
    """Whatever its value: not "1 is not of type 'object'"."""
    cfg = default()
    cfg["score_overrides"] = overrides
    with pytest.raises(ConfigError, match=match):
        validate_config(cfg, SCHEMA, STUDIES)


def test_required_loss_parameter_has_no_code_default():
    cfg = default()
    del cfg["losses"]["logitnorm"]["tau"]
    with pytest.raises(
        ConfigError, match="losses.logitnorm is missing 'tau', which loss 'logitnorm' requires"
    ):
        validate_config(cfg, SCHEMA, STUDIES)


def test_study_sections_are_checked_by_their_own_fragment():
    cfg = default()
    cfg["logitnorm"]["main_arch"] = "wrn-40-2"
    with pytest.raises(ConfigError, match=r"logitnorm.main_arch is 'wrn-40-2'; allowed values: "):
        validate_config(cfg, SCHEMA, STUDIES)
    cfg = default()
    cfg["logitnorm"]["mian_arch"] = "cnn"
    with pytest.raises(
        ConfigError, match=r"logitnorm: Additional properties are not allowed \('mian_arch'"
    ):
        validate_config(cfg, SCHEMA, STUDIES)
    cfg = default()
    cfg["studies"] = ["logitnrom"]
    with pytest.raises(ConfigError, match=r"studies.0 is 'logitnrom'; allowed values: "):
        validate_config(cfg, SCHEMA, STUDIES)
    cfg = default()
    cfg["recipes"]["adam"]["monitor_set"] = "svhn"
    with pytest.raises(ConfigError, match="recipes.adam.monitor_set is 'svhn'"):
        validate_config(cfg, SCHEMA, STUDIES)


def test_runs_are_the_union_of_the_studies_deduplicated():
    cfg = validate_config(merged("digits.yaml"), SCHEMA, STUDIES)
    runs = all_runs(cfg, STUDIES)
    assert runs == sorted(set(runs)) and all(isinstance(r, Run) for r in runs)
    assert Run("digits", "sgd", "wrn-10-1", "godin", 0) in runs
    # the robustness recipe trains baseline and method on the main architecture only
    assert Run("digits", "adam", "wrn-10-1", "logitnorm", 4) in runs
    assert Run("digits", "adam", "wrn-10-1", "godin", 0) not in runs
    assert "logitnorm-tau0.5" in expanded_losses(cfg, STUDIES)
    # disabling every study leaves nothing to train
    cfg["studies"] = []
    assert all_runs(cfg, STUDIES) == []


def test_validation_does_not_mutate_input():
    cfg = default()
    before = copy.deepcopy(cfg)
    validate_config(cfg, SCHEMA, STUDIES)
    assert cfg == before


def test_the_core_knows_no_study():
    """No core module imports a study package; no core rule or schema names one."""
    import ast

    src = ROOT / "src/softmax_ood"
    core = [p for p in src.rglob("*.py") if "studies" not in p.relative_to(src).parts]
    for path in core:
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
            assert not any("studies" in n for n in names), f"{path} imports {names}"
    words = [*STUDIES, "registry"]
    for path in [*(ROOT / "rules").glob("*.smk"), SCHEMA]:
        text = path.read_text().lower()
        assert not [w for w in words if w in text], path
