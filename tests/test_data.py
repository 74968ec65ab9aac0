import json

import numpy as np
import pytest

from softmax_ood.data import (
    MissingDataError,
    block_reduce,
    load_prepared,
    make_embedded_dataset,
    quantise,
)


def test_layout_and_metadata(embedded_data):
    meta = json.loads((embedded_data / "meta.json").read_text())
    assert meta["splits"]["id_train"] + meta["splits"]["id_val"] + meta["splits"]["id_test"] == 1797
    for name in meta["ood_test"]:
        x = np.load(embedded_data / f"ood_{name}_x.npy")
        assert x.shape == (60, 1, 8, 8) and x.dtype == np.float32
        assert 0.0 <= x.min() and x.max() <= 1.0
        # the digits' preprocessing: 17 grey levels
        assert np.allclose(x * 16, np.round(x * 16), atol=1e-5)
        assert meta["sources"][name]["licence"]
    assert meta["ood_val"] == ["gaussian_val"]
    assert "CC0" in meta["sources"]["textures"]["licence"]


def test_splits_are_disjoint_and_stratified(embedded_data):
    y = {s: np.load(embedded_data / f"id_{s}_y.npy") for s in ("train", "val", "test")}
    counts = np.bincount(y["test"], minlength=10)
    assert counts.min() >= 30  # stratified: every class present in test
    x = {s: np.load(embedded_data / f"id_{s}_x.npy").reshape(len(y[s]), -1) for s in y}
    assert x["train"].shape[1] == 64
    # a partition of the 1797 digits: the three splits together hold every (image, label) of
    # scikit-learn's set exactly as often as the set itself does, so no sample is in two splits
    from collections import Counter

    from sklearn.datasets import load_digits

    d = load_digits()
    full = (d.images.reshape(len(d.target), -1) / 16.0).astype(np.float32)

    def rows(xs, ys):
        return Counter((a.tobytes(), int(b)) for a, b in zip(xs, ys, strict=True))

    together = rows(x["train"], y["train"]) + rows(x["val"], y["val"]) + rows(x["test"], y["test"])
    assert together == rows(full, d.target)
    # and no image of test appears in train unless scikit-learn's set repeats it itself
    dup = {k for k, n in rows(full, d.target).items() if n > 1}
    overlap = set(rows(x["test"], y["test"])) & set(rows(x["train"], y["train"]))
    assert overlap <= dup


def test_deterministic_bytes(tmp_path, embedded_data):
    kw = dict(
        image_size=8,
        seed=0,
        val_fraction=0.2,
        test_fraction=0.2,
        ood_size=60,
        ood_test=["textures", "photos", "characters", "gaussian", "uniform"],
        ood_val=["gaussian_val"],
    )
    make_embedded_dataset(tmp_path / "again", **kw)
    for f in sorted(embedded_data.iterdir()):
        assert (tmp_path / "again" / f.name).read_bytes() == f.read_bytes(), f.name


def test_ood_sets_independent_of_each_other(tmp_path):
    kw = dict(image_size=8, seed=0, val_fraction=0.2, test_fraction=0.2, ood_size=20, ood_val=[])
    make_embedded_dataset(tmp_path / "a", ood_test=["uniform"], **kw)
    make_embedded_dataset(tmp_path / "b", ood_test=["textures", "uniform"], **kw)
    assert (tmp_path / "a/ood_uniform_x.npy").read_bytes() == (
        tmp_path / "b/ood_uniform_x.npy"
    ).read_bytes()


def test_unknown_ood_set_is_one_sentence(tmp_path):
    with pytest.raises(ValueError, match=r"unknown embedded OOD set\(s\) \['svhn'\]; expected"):
        make_embedded_dataset(
            tmp_path,
            image_size=8,
            seed=0,
            val_fraction=0.2,
            test_fraction=0.2,
            ood_size=10,
            ood_test=["svhn"],
            ood_val=[],
        )
    assert not any(tmp_path.iterdir())


def test_load_prepared_normalises_with_train_statistics(embedded_data):
    d = load_prepared(embedded_data)
    assert abs(float(d.x["train"].mean())) < 1e-4
    assert abs(float(d.x["train"].std()) - 1) < 1e-2
    assert set(d.ood) == {"textures", "photos", "characters", "gaussian", "uniform"}
    assert d.x["test"].shape[1:] == (1, 8, 8)


def test_missing_file_names_the_rule(tmp_path, embedded_data):
    import shutil

    copy = tmp_path / "digits"
    shutil.copytree(embedded_data, copy)
    (copy / "ood_textures_x.npy").unlink()
    with pytest.raises(MissingDataError, match="made by the Snakemake rule 'prepare_data'"):
        load_prepared(copy)


def test_quantise_and_block_reduce():
    img = np.arange(16, dtype=float).reshape(4, 4) / 15
    assert block_reduce(img, 2).shape == (2, 2)
    assert np.isclose(block_reduce(img, 4)[0, 0], img.mean())
    q = quantise(np.array([0.0, 0.04, 0.5, 1.2, -1]))
    assert np.allclose(q, [0, 0.0625, 0.5, 1.0, 0.0])


def test_held_out_classes_are_the_near_ood_set(tmp_path):
    from sklearn.datasets import load_digits

    from softmax_ood.data import load_prepared, make_embedded_dataset

    kw = dict(image_size=8, seed=0, val_fraction=0.2, test_fraction=0.2, ood_size=20)
    out = tmp_path / "d"
    meta = make_embedded_dataset(
        out, ood_test=["heldout_digits", "gaussian"], ood_val=[], id_classes=[0, 1, 2, 3, 4], **kw
    )
    assert meta["num_classes"] == 5 and meta["heldout_classes"] == [5, 6, 7, 8, 9]
    data = load_prepared(out)
    assert set(data.y["train"].tolist()) == set(range(5))
    # the split is made on all ten digits first: ID test + held-out test = the 10-class test split
    full = make_embedded_dataset(tmp_path / "full", ood_test=["gaussian"], ood_val=[], **kw)
    n_test = full["splits"]["id_test"]
    assert meta["splits"]["id_test"] + meta["splits"]["ood_heldout_digits"] == n_test
    # every held-out image is a digit 5-9 image (matched by its pixels)
    digits = load_digits()
    images = (digits.images / 16.0).astype("float32")
    by_pixels = {}
    for img, label in zip(images, digits.target, strict=True):
        by_pixels.setdefault(img.tobytes(), set()).add(int(label))
    held = np.load(out / "ood_heldout_digits_x.npy")
    labels = set().union(*(by_pixels[h[0].tobytes()] for h in held))
    assert labels == {5, 6, 7, 8, 9}
    # asking for the set with every class in-distribution is one sentence
    with pytest.raises(ValueError, match="needs held-out classes"):
        make_embedded_dataset(tmp_path / "x", ood_test=["heldout_digits"], ood_val=[], **kw)


def test_a_failure_halfway_leaves_the_previous_data_untouched(tmp_path, monkeypatch):
    """Data are built in a temporary folder renamed at the end: a failure after the ID arrays
    are written never leaves new arrays beside an older meta.json."""
    import softmax_ood.data as data_mod
    from softmax_ood.data import load_prepared, make_embedded_dataset

    kw = dict(image_size=8, seed=0, val_fraction=0.2, test_fraction=0.2, ood_size=20, ood_val=[])
    out = tmp_path / "digits"
    make_embedded_dataset(out, ood_test=["gaussian", "uniform"], **kw)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    real = data_mod._embedded_ood

    def broken(name, n, rng):
        if name == "uniform":
            raise RuntimeError("archive corrupt halfway")
        return real(name, n, rng)

    monkeypatch.setattr(data_mod, "_embedded_ood", broken)
    with pytest.raises(RuntimeError, match="halfway"):
        make_embedded_dataset(out, ood_test=["gaussian", "uniform"], **{**kw, "seed": 1})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digits"]  # no temporary left
    load_prepared(out)
