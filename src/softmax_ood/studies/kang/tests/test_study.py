"""The Kang study's registration: runs, targets, and the one-sentence config checks."""

from __future__ import annotations

import pytest

from softmax_ood.config import ConfigError
from softmax_ood.runs import Run
from softmax_ood.studies.kang import study

from .conftest import validated


def test_runs_cover_every_seed_and_the_mechanism_reuses_the_main_models(cfg):
    from softmax_ood.studies.registry import replication_seeds

    runs = study.runs(cfg)
    s, ds = cfg["kang"], cfg["data"]["dataset"]
    assert len(runs) == len(set(runs))
    # the study's seeds, and the replication's fresh ones where the config replicates Kang
    seeds = set(cfg["seeds"]) | set(replication_seeds(cfg, "kang") or ())
    assert {r.seed for r in runs} == seeds and len(cfg["seeds"]) >= 5
    for loss in ("ce", "reward-mse", "gaussian-nll"):
        assert Run(ds, s["recipe"], s["arch"], loss, 0) in runs
    m = s["mechanism"]
    for loss in m["losses"]:  # the Fig. 4 chain: the study's own models, no extra training
        assert Run(ds, m["recipe"], m["arch"], loss, 0) in runs
    assert len(runs) == 3 * len(seeds)
    assert cfg["recipes"][s["recipe"]]["checkpoint"] == "best_val_loss"
    assert study.loss_variants(cfg) == {}


def test_targets_are_namespaced(cfg):
    t, ds = study.targets(cfg), cfg["data"]["dataset"]
    assert f"results/kang/{ds}/claims.md" in t and "reports/kang.html" in t
    assert all(p.startswith(("results/kang/", "reports/kang.")) for p in t)
    assert {f"results/kang/{ds}/figures/fig{i}.png" for i in range(2, 8)} <= set(t)


def test_groups_one_discriminator_job_per_shift_type(cfg):
    groups = study.shift_groups(cfg)
    assert groups[: len(cfg["kang"]["corruptions"])] == cfg["kang"]["corruptions"]
    assert {"rotation", "id", "far_ood"} <= set(groups)


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda s: s.update(corruptions=["gaussian_noise", "gausian_blur"]),
            "config error: kang.corruptions is 'gausian_blur'; allowed values: brightness,",
        ),
        (
            lambda s: s.update(severities=[1, 6]),
            "config error: kang.severities has 6; corruption severities are the integers 1-5",
        ),
        (
            lambda s: s.update(severities=[0]),
            "config error: kang.severities has 0; corruption severities are the integers 1-5",
        ),
        (
            lambda s: s.update(rotations=[190]),
            "config error: kang.rotations has 190; rotation angles are in (0, 180]",
        ),
        (
            lambda s: s["featurizer"].update(name="resnet50"),
            "config error: kang.featurizer.name is 'resnet50'; allowed values: pixels,",
        ),
        (
            lambda s: (
                s.update(corruption_source="cifar10c", corruption_dir="data/raw/c"),
                s["discriminator"].update(alpha=None),
            ),
            "config error: kang.corruption_source is 'cifar10c' but kang.discriminator.alpha is not",
        ),
        (
            lambda s: s["featurizer"].update(source="resnet18_imagenet"),
            "config error: kang.featurizer.source is 'resnet18_imagenet' but data.source is not",
        ),
        (
            lambda s: s.update(reward_model="ce"),
            "config error: kang.reward_model is 'ce', whose loss is 'ce'; the reward_model must",
        ),
        (
            lambda s: s.update(far_ood=["lsun"]),
            "config error: kang.far_ood is 'lsun'; allowed values:",
        ),
        (
            lambda s: s["mechanism"].update(arch="wrn-10-1"),
            "config error: kang.mechanism.arch is 'wrn-10-1' (family 'wrn'), not a feed-forward "
            "chain: its Fig. 4 accumulated constants are defined at the classifier only",
        ),
    ],
)
def test_bad_values_stop_with_one_sentence(raw, edit, message):
    edit(raw["kang"])
    with pytest.raises(ConfigError) as err:
        validated(raw)
    text = str(err.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_schema_rejects_unknown_keys(raw):
    raw["kang"]["severity"] = [1]
    with pytest.raises(ConfigError, match="kang"):
        validated(raw)


def test_featurizer_source_gives_the_downloaded_file_and_its_checksum(raw, monkeypatch):
    """Paper scale: the weights file of featurizer.source (config/paper_sources.yaml) becomes
    the featurizer's weights_path and sha256, a rule input and a download."""
    import yaml
    from snakemake.utils import update_config

    from softmax_ood.discriminator import RESNET18_IMAGENET_FILE, RESNET18_IMAGENET_SHA256

    from .conftest import ROOT

    monkeypatch.chdir(ROOT)  # the sources file is named relative to the checkout, as in a run
    update_config(raw, yaml.safe_load((ROOT / "config/paper.yaml").read_text()))
    cfg = validated(raw)
    spec = study.spec(cfg)
    params = spec["featurizer"]["params"]
    assert params == {
        "image_size": 224,
        "batch_size": 64,
        "weights_path": f"data/raw/{RESNET18_IMAGENET_FILE}",
        "sha256": RESNET18_IMAGENET_SHA256,
    }
    assert study.featurizer_inputs(spec) == {"weights": f"data/raw/{RESNET18_IMAGENET_FILE}"}
    assert "resnet18_imagenet" in study.raw_sources(cfg)
