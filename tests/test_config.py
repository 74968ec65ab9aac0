import copy
from pathlib import Path

import pytest
import yaml

from softmax_ood.config import ConfigError, logitnorm_runs, tau_variant, validate_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


def default():
    return yaml.safe_load((ROOT / "config/default.yaml").read_text())


def test_default_and_paper_configs_validate():
    cfg = validate_config(default(), SCHEMA)
    assert cfg["losses"]["logitnorm"]["tau"] == 0.04
    assert cfg["evaluation"]["ece_bins"] == 15  # default filled in


@pytest.mark.parametrize(
    "path, value, expected",
    [
        (
            ("losses", "logitnorm", "loss"),
            "logitnrom",
            "config error: losses.logitnorm.loss is 'logitnrom'; allowed values: ce, logitnorm, "
            "logitpenalty, godin",
        ),
        (
            ("architectures", "cnn", "family"),
            "vit",
            "config error: architectures.cnn.family is 'vit'; allowed values: mlp, cnn, resnet, "
            "wrn, densenet",
        ),
        (
            ("data", "dataset"),
            "imagenet",
            "config error: data.dataset is 'imagenet'; allowed values: digits, cifar10, cifar100",
        ),
    ],
)
def test_unknown_names_give_one_sentence(path, value, expected):
    cfg = default()
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, SCHEMA)
    assert str(err.value) == expected
    assert "\n" not in str(err.value)


def test_unknown_score_name():
    cfg = default()
    cfg["scores"]["mahalanobis"] = {}
    with pytest.raises(
        ConfigError,
        match=r"scores has the unknown name 'mahalanobis'; allowed "
        r"names: msp, odin, energy, gradnorm, maxlogit",
    ):
        validate_config(cfg, SCHEMA)


def test_cross_references_are_checked():
    cfg = default()
    cfg["logitnorm"]["main_arch"] = "wrn-40-2"
    with pytest.raises(ConfigError, match=r"logitnorm.main_arch is 'wrn-40-2'; allowed values: "):
        validate_config(cfg, SCHEMA)
    cfg = default()
    del cfg["losses"]["logitnorm"]["tau"]
    with pytest.raises(ConfigError, match="without tau"):
        validate_config(cfg, SCHEMA)
    cfg = default()
    cfg["data"]["ood_test"] = ["textures", "svhn"]
    cfg["logitnorm"]["monitor_set"] = "photos"
    with pytest.raises(ConfigError, match="logitnorm.monitor_set is 'photos'"):
        validate_config(cfg, SCHEMA)


def test_runs_cover_the_study_without_duplicates():
    cfg = validate_config(default(), SCHEMA)
    runs = logitnorm_runs(cfg)
    assert len(runs) == len(set(runs))
    s = cfg["logitnorm"]
    assert {r[2] for r in runs} == set(cfg["seeds"])
    assert (s["main_arch"], "godin", 0) in runs
    assert tau_variant(cfg, 0.04) == "logitnorm"
    assert tau_variant(cfg, 0.5) == "logitnorm-tau0.5"
    for arch in s["arch_table"]:
        assert (arch, "ce", 0) in runs and (arch, "logitnorm", 0) in runs


def test_validation_does_not_mutate_input():
    cfg = default()
    before = copy.deepcopy(cfg)
    validate_config(cfg, SCHEMA)
    assert cfg == before
