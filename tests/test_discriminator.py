"""OOD-score discriminator: chance level for ID data, ~1 for clearly different data, balanced
splits, determinism; the featurizer registry and the checksum-verified ResNet-18 entry."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from softmax_ood.discriminator import (
    FEATURIZERS,
    RESNET18_IMAGENET_FILE,
    RESNET18_IMAGENET_SHA256,
    OODScore,
    build_featurizer,
    ood_score,
    sha256_file,
)


def _gauss(n, d=16, shift=0.0, seed=0):
    return np.random.default_rng(seed).normal(shift, 1.0, size=(n, d))


def test_fresh_id_samples_score_chance():
    s = ood_score(_gauss(400, seed=1), _gauss(400, seed=2), n_repeats=6, seed=0)
    assert abs(s.mean - 0.5) < 0.03
    assert all(abs(v - 0.5) < 0.08 for v in s.per_repeat)


def test_clearly_different_data_scores_near_one():
    s = ood_score(_gauss(300, seed=1), _gauss(300, shift=3.0, seed=2), n_repeats=5, seed=0)
    assert s.mean > 0.97
    mild = ood_score(_gauss(300, seed=1), _gauss(300, shift=0.3, seed=2), n_repeats=5, seed=0)
    assert 0.55 < mild.mean < s.mean  # graded, not saturated


def test_deterministic_and_seed_dependent():
    a, b = _gauss(200, seed=1), _gauss(200, shift=0.2, seed=2)
    s1 = ood_score(a, b, n_repeats=4, seed=3)
    assert s1 == ood_score(a, b, n_repeats=4, seed=3)
    assert s1.per_repeat != ood_score(a, b, n_repeats=4, seed=4).per_repeat


def test_summary_statistics_and_dict():
    s = ood_score(_gauss(100, seed=1), _gauss(100, shift=0.5, seed=2), n_repeats=6, seed=0)
    assert isinstance(s, OODScore) and len(s.per_repeat) == 6
    assert s.mean == pytest.approx(np.mean(s.per_repeat))
    assert s.std == pytest.approx(np.std(s.per_repeat, ddof=1))
    assert s.as_dict()["per_repeat"] == list(s.per_repeat)
    one = ood_score(_gauss(50, seed=1), _gauss(50, seed=2), n_repeats=1, seed=0)
    assert one.std == 0.0


def test_balanced_split_sizes():
    s = ood_score(_gauss(500, seed=1), _gauss(101, seed=2), n_repeats=1, seed=0)
    assert (s.n_heldout, s.n_fit_per_class) == (51, 50)  # ceil(0.5 * 101) held out
    s = ood_score(_gauss(30, seed=1), _gauss(101, seed=2), n_repeats=1, seed=0)
    assert s.n_fit_per_class == 30  # as many evaluation samples as ID ones: 50/50
    s = ood_score(_gauss(500, seed=1), _gauss(100, seed=2), n_repeats=1, seed=0,
                  heldout_fraction=0.2)  # fmt: skip
    assert (s.n_heldout, s.n_fit_per_class) == (20, 80)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_repeats": 0, "seed": 0}, "n_repeats"),
        ({"n_repeats": 1, "seed": -1}, "seed"),
        ({"n_repeats": 1, "seed": 0, "heldout_fraction": 1.0}, "heldout_fraction"),
        ({"n_repeats": 1, "seed": 0, "C": 0.0}, "C must"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ood_score(_gauss(20), _gauss(20), **kwargs)
    with pytest.raises(ValueError, match="widths differ"):
        ood_score(_gauss(20, d=3), _gauss(20, d=4), n_repeats=1, seed=0)


def test_featurizer_registry_and_shapes():
    assert set(FEATURIZERS) == {"random_conv", "pixels", "resnet18_imagenet"}
    rng = np.random.default_rng(0)
    grey = rng.random((5, 1, 8, 8)).astype(np.float32)
    colour = rng.random((3, 3, 32, 32)).astype(np.float32)
    rc = build_featurizer("random_conv")
    f1, f2 = rc(grey), rc(colour)
    assert f1.shape == (5, 768) and f2.shape == (3, 768) and f1.dtype == np.float32
    assert np.array_equal(f1, build_featurizer("random_conv", {"seed": 0})(grey))
    assert not np.array_equal(f1, build_featurizer("random_conv", {"seed": 1})(grey))
    # batch size does not change the features
    assert np.allclose(f1, build_featurizer("random_conv", {"batch_size": 2})(grey), atol=1e-6)
    assert build_featurizer("pixels")(grey).shape == (5, 64)
    with pytest.raises(ValueError, match="unknown featurizer 'vgg'"):
        build_featurizer("vgg")
    with pytest.raises(ValueError, match="unknown parameter"):
        build_featurizer("pixels", {"seed": 0})
    with pytest.raises(ValueError, match="weights_path"):
        build_featurizer("resnet18_imagenet")


def test_random_conv_sees_digit_shifts():
    from sklearn.datasets import load_digits

    from softmax_ood.corruptions import corrupt

    x = (load_digits().images[:, None] / 16.0).astype(np.float32)
    # a random split: consecutive optdigits blocks come from different writers, and the
    # discriminator does tell x[:300] from x[300:600] (score ~0.69)
    perm = np.random.default_rng(0).permutation(len(x))
    ident, fresh = x[perm[:300]], x[perm[300:600]]
    f = build_featurizer("random_conv")
    same = ood_score(f(ident), f(fresh), n_repeats=3, seed=0)
    noisy = ood_score(f(ident), f(corrupt(fresh, "gaussian_noise", 5, 0)), n_repeats=3, seed=0)
    assert abs(same.mean - 0.5) < 0.06 and noisy.mean > 0.85


def test_resnet18_missing_file_names_file_and_checksum(tmp_path):
    path = tmp_path / RESNET18_IMAGENET_FILE
    with pytest.raises(FileNotFoundError) as err:
        build_featurizer("resnet18_imagenet", {"weights_path": path})
    msg = str(err.value)
    assert str(path) in msg and RESNET18_IMAGENET_SHA256 in msg and RESNET18_IMAGENET_FILE in msg


def test_resnet18_wrong_checksum_is_refused(tmp_path):
    path = tmp_path / RESNET18_IMAGENET_FILE
    path.write_bytes(b"not the weights")
    assert sha256_file(path) == hashlib.sha256(b"not the weights").hexdigest()
    with pytest.raises(ValueError, match="expected " + RESNET18_IMAGENET_SHA256):
        build_featurizer("resnet18_imagenet", {"weights_path": str(path)})
    assert RESNET18_IMAGENET_SHA256.startswith(RESNET18_IMAGENET_FILE.split("-")[1][:8])


def test_resnet18_stand_in_state_dict_with_its_own_checksum(tmp_path):
    """A randomly initialised torchvision ResNet-18 state_dict (the loopback tests' stand-in for
    the ImageNet file) loads when its own sha256 is named; 512-d features."""
    import torch
    from torchvision.models import resnet18

    torch.manual_seed(0)
    path = tmp_path / RESNET18_IMAGENET_FILE
    torch.save(resnet18(weights=None).state_dict(), path)
    f = build_featurizer(
        "resnet18_imagenet",
        {"weights_path": str(path), "sha256": sha256_file(path), "image_size": 32},
    )
    x = np.random.default_rng(0).random((3, 3, 32, 32), dtype=np.float32)
    assert f(x).shape == (3, 512)
    with pytest.raises(ValueError, match="expected " + RESNET18_IMAGENET_SHA256):
        build_featurizer("resnet18_imagenet", {"weights_path": str(path)})
