"""softmax_ood.paper_data: readers for the real formats, the source list, and the end-to-end
download -> verify -> extract -> read -> prepare path (loopback HTTP only)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixtures_archives import (  # noqa: E402
    FileServer,
    make_cifar10_tar_gz,
    make_cifar100_tar_gz,
    make_image_folder_tar_gz,
    make_svhn_mat,
    write_tar,
)

from softmax_ood.data import MissingDataError, load_prepared  # noqa: E402
from softmax_ood.download import DownloadError, safe_extract  # noqa: E402
from softmax_ood.paper_data import (  # noqa: E402
    download_identity,
    fetch_sources,
    fetch_tracked_source,
    list_images,
    load_paper_config,
    prepare_paper_data,
    read_cifar_python,
    read_image_folder,
    read_svhn_mat,
)

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "paper_sources.yaml"


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("archives")
    return {
        "cifar10": make_cifar10_tar_gz(d / "cifar-10-python.tar.gz"),
        "cifar100": make_cifar100_tar_gz(d / "cifar-100-python.tar.gz"),
        "svhn": make_svhn_mat(d / "test_32x32.mat"),
        "textures": make_image_folder_tar_gz(d / "dtd-r1.0.1.tar.gz", root="dtd/images", n=12),
        "lsun_r": make_image_folder_tar_gz(
            d / "LSUN_resize.tar.gz", root="LSUN_resize", n=9, seed=5
        ),
    }


# --------------------------------------------------------------------------- readers
def test_read_cifar10_from_archive_and_folder(archives, tmp_path):
    a = archives["cifar10"]
    for src in (
        a["path"],
        safe_extract(a["path"], tmp_path / "x"),
        tmp_path / "x" / "cifar-10-batches-py",
    ):
        train_x, train_y, test_x, test_y = read_cifar_python(src, "cifar10")
        assert train_x.dtype == np.uint8 and train_x.shape == (100, 32, 32, 3)
        assert test_x.shape == (20, 32, 32, 3)
        assert train_y.dtype == np.int64 and test_y.dtype == np.int64
        np.testing.assert_array_equal(train_x, a["train_x"])
        np.testing.assert_array_equal(train_y, a["train_y"])
        np.testing.assert_array_equal(test_x, a["test_x"])
        np.testing.assert_array_equal(test_y, a["test_y"])


def test_cifar_channel_layout(tmp_path):
    """Row layout is 1024 red, then 1024 green, then 1024 blue values (row-major)."""
    import pickle

    data = np.zeros((1, 3072), dtype=np.uint8)
    data[0, :1024] = 10  # red plane
    data[0, 1024:2048] = 20
    data[0, 2048:] = 30
    data[0, 1] = 99  # red, row 0, column 1
    batch = pickle.dumps({b"data": data, b"labels": [3]}, protocol=2)
    members = [
        (f"cifar-10-batches-py/{n}", batch)
        for n in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    ]
    train_x, train_y, _, _ = read_cifar_python(write_tar(tmp_path / "c.tar.gz", members))
    assert train_x.shape == (5, 32, 32, 3)
    assert tuple(train_x[0, 5, 5]) == (10, 20, 30)
    assert train_x[0, 0, 1, 0] == 99 and train_y[0] == 3


def test_read_cifar100(archives):
    a = archives["cifar100"]
    train_x, train_y, test_x, test_y = read_cifar_python(a["path"], "cifar100")
    assert train_x.shape == (200, 32, 32, 3) and test_x.shape == (100, 32, 32, 3)
    np.testing.assert_array_equal(train_y, a["train_y"])  # fine labels, not coarse
    np.testing.assert_array_equal(test_x, a["test_x"])
    assert train_y.max() == 99
    with pytest.raises(ValueError, match="not a cifar10 python archive"):
        read_cifar_python(a["path"], "cifar10")


def test_cifar_pickle_with_foreign_globals_is_refused(tmp_path):
    import pickle

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    batch = pickle.dumps({b"data": Evil(), b"labels": [0]}, protocol=2)
    members = [
        (f"cifar-10-batches-py/{n}", batch)
        for n in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    ]
    with pytest.raises(
        ValueError, match=r"refusing to unpickle global (__builtin__|builtins)\.print"
    ):
        read_cifar_python(write_tar(tmp_path / "evil.tar.gz", members))


def test_read_svhn_mat(archives):
    a = archives["svhn"]
    x, y = read_svhn_mat(a["path"])
    assert x.dtype == np.uint8 and x.shape == (30, 32, 32, 3)
    np.testing.assert_array_equal(x, a["x"])
    np.testing.assert_array_equal(y, a["y"])
    assert y.dtype == np.int64 and set(y.tolist()) == set(range(10))  # 10 -> 0


def test_read_image_folder(archives, tmp_path):
    a = archives["textures"]
    out = safe_extract(a["path"], tmp_path / "textures")
    files = list_images(out)
    assert [f.relative_to(out).as_posix() for f in files] == a["names"]  # sorted; junk skipped
    x = read_image_folder(out / "dtd" / "images")
    assert x.dtype == np.uint8 and x.shape == (a["n"], 32, 32, 3)
    np.testing.assert_array_equal(read_image_folder(out, limit=5), x[:5])
    # grey images become 3 equal channels
    grey = [i for i, n in enumerate(a["names"]) if int(n[-7:-4]) % 4 == 1][0]
    assert np.array_equal(x[grey, ..., 0], x[grey, ..., 1])


def test_resize_shorter_side_then_center_crop(tmp_path):
    from PIL import Image

    img = np.zeros((32, 96, 3), dtype=np.uint8)  # wide: red | green | red thirds
    img[:, :32, 0] = img[:, 64:, 0] = 255
    img[:, 32:64, 1] = 255
    Image.fromarray(img).save(tmp_path / "wide.png")
    big = np.zeros((128, 64, 3), dtype=np.uint8)  # tall, 2x too large: blue middle half
    big[32:96, :, 2] = 255
    Image.fromarray(big).save(tmp_path / "tall.png")
    x = read_image_folder(tmp_path)  # sorted: tall.png, wide.png
    assert x.shape == (2, 32, 32, 3)
    assert (x[0, 2:-2, :, 2] == 255).all() and (x[0, ..., :2] == 0).all()
    assert (x[1, ..., 1] == 255).all() and (x[1, ..., 0] == 0).all()


def test_missing_inputs_are_clear(tmp_path):
    with pytest.raises(MissingDataError):
        read_svhn_mat(tmp_path / "test_32x32.mat")
    with pytest.raises(MissingDataError):
        read_cifar_python(tmp_path / "nope.tar.gz")
    with pytest.raises(MissingDataError):
        list_images(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no images"):
        read_image_folder(tmp_path / "empty")


# --------------------------------------------------------------------------- config
TORCHVISION_MD5 = {  # pytorch/vision torchvision/datasets/{cifar,svhn,dtd,places365}.py
    "cifar10": "c58f30108f718f92721af3b95e74349a",
    "cifar100": "eb9058c3a382ffc7106e4002c42a8d85",
    "svhn": "eb5a983be6a315427106f1b164d9cef3",
    "textures": "fff73e5086ae6bdbea199a49dfb8a4c1",
    "places365": "e27b17d8d44f4af9a78502beb927f808",
    # torchvision/datasets/mnist.py, MNIST.resources
    "mnist_train_images": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "mnist_train_labels": "d53e105ee54ea40749a09fcbcd1e9432",
    "mnist_test_images": "9fb629c4189551a2d022fa330f9573f3",
    "mnist_test_labels": "ec29112dd5afa0611ce80d1b7f02629c",
}


def test_paper_sources_yaml_is_complete():
    cfg = load_paper_config(CONFIG)
    src = cfg["sources"]
    assert cfg["id_dataset"] == "cifar10"
    assert cfg["ood_test"] == ["svhn", "textures", "places365", "lsun_c", "lsun_r", "isun"]
    assert cfg["ood_val"] == ["gaussian"]
    for name, entry in src.items():
        assert entry["url"].startswith(("http://", "https://")), name
        assert entry["licence"] and entry["citation"], name
    for name, value in TORCHVISION_MD5.items():
        assert src[name]["md5"] == value
    assert src["cifar10"]["url"] == "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    assert src["places365"]["filename"] == "val_256.tar"
    for name in cfg["ood_test"] + [cfg["id_dataset"]]:  # everything used by default is checked
        assert src[name]["md5"] or src[name]["sha256"], name
    assert src["places365_test"]["md5"] is None and src["places365_test"]["sha256"] is None
    # Kang's featurizer weights: torchvision's file and the sha256 the featurizer checks
    from softmax_ood.discriminator import RESNET18_IMAGENET_FILE, RESNET18_IMAGENET_SHA256

    weights = src["resnet18_imagenet"]
    assert weights["filename"] == RESNET18_IMAGENET_FILE
    assert weights["sha256"] == RESNET18_IMAGENET_SHA256
    assert weights["url"] == "https://download.pytorch.org/models/" + RESNET18_IMAGENET_FILE


def test_null_checksum_entry_from_config_is_refused(tmp_path):
    src = load_paper_config(CONFIG)["sources"]
    with pytest.raises(DownloadError, match="allow_unverified=True"):
        fetch_sources(src, tmp_path, ["places365_test"])
    assert list(tmp_path.iterdir()) == []


def test_config_validation(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "sources:\n  - {name: a, url: 'http://x/a', filename: '../a', format: svhn-mat, "
        "licence: l, citation: c, md5: null}\n"
    )
    with pytest.raises(ValueError, match="plain file name"):
        load_paper_config(bad)
    bad.write_text(
        "sources:\n  - {name: a, url: 'http://x/a', filename: a, format: svhn-mat, "
        "licence: l, citation: c, md5: 1234}\n"
    )
    with pytest.raises(ValueError, match="malformed md5"):
        load_paper_config(bad)
    for size in ("-1", "0", "1.5", "'big'", "true"):
        bad.write_text(
            "sources:\n  - {name: a, url: 'http://x/a', filename: a, format: svhn-mat, "
            f"licence: l, citation: c, md5: null, size: {size}}}\n"
        )
        with pytest.raises(ValueError, match="size .* must be a whole number of bytes"):
            load_paper_config(bad)


def test_sources_are_https_but_the_hosts_the_header_names():
    """7 of 19 URLs were http; those left are the hosts the file's header names, with why."""
    from urllib.parse import urlsplit

    header = CONFIG.read_text().split("\nsources:")[0]
    left = {
        urlsplit(e["url"]).hostname
        for e in load_paper_config(CONFIG)["sources"].values()
        if urlsplit(e["url"]).scheme == "http"
    }
    assert left == {"ufldl.stanford.edu", "data.csail.mit.edu"}
    for host in left:
        assert host in header.split("Left on http")[1]


def test_every_default_source_has_a_size_for_its_cap():
    cfg = load_paper_config(CONFIG)
    for name, entry in cfg["sources"].items():
        if name not in ("lsun_c", "lsun_r", "isun"):  # no size found: data.download.max_bytes
            assert isinstance(entry.get("size"), int) and entry["size"] > 0, name
    assert cfg["sources"]["cifar10"]["size"] == 170498071


def _one_source(server, body: bytes, **more) -> dict:
    return {
        "name": "blob",
        "url": server.add("/blob.bin", body),
        "filename": "blob.bin",
        "format": "svhn-mat",
        "licence": "l",
        "citation": "c",
        "md5": hashlib.md5(body).hexdigest(),
        **more,
    }


def test_a_download_is_capped_at_its_size_times_the_margin(server, tmp_path):
    body = b"x" * 1000
    entry = _one_source(server, body, size=700)  # 700 x 1.25 = 875 < 1000
    server.unsized.add("/blob.bin")
    with pytest.raises(DownloadError) as err:
        fetch_sources({"blob": entry}, tmp_path, size_margin=1.25, timeout=5)
    msg = str(err.value)
    assert msg.startswith(f"the download of source 'blob' from {entry['url']} was cut off")
    assert "cap of 875 bytes" in msg and "\n" not in msg
    assert list(tmp_path.iterdir()) == []
    # without a size: data.download.max_bytes caps it
    del entry["size"]
    with pytest.raises(DownloadError, match="cap of 999 bytes"):
        fetch_sources({"blob": entry}, tmp_path, size_margin=1.25, max_bytes=999, timeout=5)
    entry["size"] = 800  # 800 x 1.25 = 1000: fits
    fetch_sources({"blob": entry}, tmp_path, size_margin=1.25, max_bytes=999, timeout=5)
    assert (tmp_path / "blob.bin").read_bytes() == body


def test_the_download_job_reads_url_and_limits_from_the_files_not_its_params(server, tmp_path):
    """The workflow's job gets the file name and checksums only (what it tracks); the URL, the
    size and the limits come from the sources file and the config's data section."""
    import yaml

    body = b"y" * 1000
    entry = _one_source(server, body, size=100)
    sources = tmp_path / "sources.yaml"
    sources.write_text(yaml.safe_dump({"sources": [entry]}))
    data = {"sources": str(sources), "download": {"timeout_s": 5, "size_margin": 2}}
    with pytest.raises(DownloadError, match=r"source 'blob' from http://127\.0\.0\.1:\d+/blob"):
        fetch_tracked_source("blob", download_identity(entry), data, tmp_path / "raw")
    data["download"]["size_margin"] = 10
    got = fetch_tracked_source("blob", download_identity(entry), data, tmp_path / "raw")
    assert got.read_bytes() == body
    # the tracked checksum wins over the file's
    (tmp_path / "raw2").mkdir()
    with pytest.raises(DownloadError, match="expected md5 0{32}"):
        fetch_tracked_source(
            "blob", {**download_identity(entry), "md5": "0" * 32}, data, tmp_path / "raw2"
        )


# --------------------------------------------------------------------------- end to end
def _sources_for(server: FileServer, archives: dict) -> dict:
    """The real config's entries (formats, filenames, subdirs, licences), with the URLs and
    checksums replaced by the loopback copies of the fake archives."""
    real = load_paper_config(CONFIG)["sources"]
    out = {}
    for name, a in archives.items():
        entry = dict(real[name])
        entry["url"] = server.add(f"/{name}/{entry['filename']}", a["path"].read_bytes())
        assert entry["filename"] == a["path"].name
        entry["md5"] = md5(a["path"])
        entry["sha256"] = None
        if name == "lsun_r":
            entry["subsample"] = 6
        out[name] = entry
    out["svhn"]["limit"] = 25
    return out


def test_end_to_end_download_prepare(archives, server, tmp_path):
    sources = _sources_for(server, archives)
    raw = tmp_path / "raw"
    paths = fetch_sources(sources, raw, timeout=5)
    assert {p.name for p in paths.values()} == {a["path"].name for a in archives.values()}
    fetch_sources(sources, raw, timeout=5)  # second run: everything already verified
    assert all(v == 1 for v in server.hits.values()), server.hits

    ood = ["svhn", "textures", "lsun_r", "cifar100"]
    out = tmp_path / "prepared"
    meta = prepare_paper_data(
        raw, out, sources, seed=7, val_fraction=0.2, ood_test=ood, ood_val_size=16
    )

    expected_files = {f"id_{s}_{v}.npy" for s in ("train", "val", "test") for v in "xy"}
    expected_files |= {f"ood_{n}_x.npy" for n in ood} | {"oodval_gaussian_x.npy", "meta.json"}
    assert {p.name for p in out.iterdir()} == expected_files  # no temp files left
    extracted = raw / "extracted" / f"textures-{sources['textures']['md5'][:12]}"
    assert (extracted / "dtd" / "images").is_dir()

    a = archives["cifar10"]
    x = {s: np.load(out / f"id_{s}_x.npy") for s in ("train", "val", "test")}
    y = {s: np.load(out / f"id_{s}_y.npy") for s in ("train", "val", "test")}
    assert x["train"].shape == (80, 3, 32, 32) and x["val"].shape == (20, 3, 32, 32)
    assert x["test"].shape == (20, 3, 32, 32)
    for s in x:
        assert x[s].dtype == np.float32 and y[s].dtype == np.int64
        assert 0.0 <= x[s].min() and x[s].max() <= 1.0
    # val carved from the training set (stratified: 2 per class), test is the official test set
    assert np.bincount(y["val"], minlength=10).tolist() == [2] * 10
    np.testing.assert_array_equal(x["test"], a["test_x"].transpose(0, 3, 1, 2) / np.float32(255))
    pooled = np.concatenate([x["train"], x["val"]]).reshape(100, -1)
    orig = (a["train_x"].transpose(0, 3, 1, 2) / np.float32(255)).reshape(100, -1)
    assert sorted(map(bytes, pooled)) == sorted(map(bytes, orig))

    shapes = {n: np.load(out / f"ood_{n}_x.npy").shape for n in ood}
    assert shapes == {
        "svhn": (25, 3, 32, 32),
        "textures": (12, 3, 32, 32),
        "lsun_r": (6, 3, 32, 32),
        "cifar100": (100, 3, 32, 32),
    }
    noise = np.load(out / "oodval_gaussian_x.npy")
    assert noise.shape == (16, 3, 32, 32) and noise.dtype == np.float32
    assert 0.0 <= noise.min() and noise.max() <= 1.0 and abs(noise.mean() - 0.5) < 0.02

    text = (out / "meta.json").read_text()
    assert json.loads(text) == meta
    assert text == json.dumps(meta, sort_keys=True, indent=2) + "\n"
    for key in (
        "id_dataset",
        "num_classes",
        "channels",
        "image_size",
        "mean",
        "std",
        "splits",
        "ood_test",
        "ood_val",
        "sources",
    ):
        assert key in meta
    assert meta["id_dataset"] == "cifar10" and meta["num_classes"] == 10
    assert meta["channels"] == 3 and meta["image_size"] == 32
    assert meta["ood_test"] == ood and meta["ood_val"] == ["gaussian"]
    assert meta["splits"] == {
        "id_train": 80,
        "id_val": 20,
        "id_test": 20,
        "ood_svhn": 25,
        "ood_textures": 12,
        "ood_lsun_r": 6,
        "ood_cifar100": 100,
        "oodval_gaussian": 16,
    }
    np.testing.assert_allclose(meta["mean"], x["train"].mean(axis=(0, 2, 3), dtype=np.float64))
    np.testing.assert_allclose(meta["std"], x["train"].std(axis=(0, 2, 3), dtype=np.float64))
    for name in ["cifar10", *ood]:
        s = meta["sources"][name]
        assert s["source"] == name and s["md5"]
        # the texts and the URL stay in the sources file (editing them prepares nothing again)
        assert not {"licence", "citation", "url", "description"} & set(s)
    assert meta["sources"]["gaussian"]["licence"] == "n/a (synthetic)"

    # the loader used by training/evaluation accepts the layout
    data = load_prepared(out)
    assert tuple(data.x["train"].shape) == (80, 3, 32, 32)
    assert set(data.ood) == set(ood) and set(data.ood_val) == {"gaussian"}

    # deterministic: a second run (re-using the extracted folders) gives identical bytes
    out2 = tmp_path / "prepared2"
    prepare_paper_data(raw, out2, sources, seed=7, val_fraction=0.2, ood_test=ood, ood_val_size=16)
    for f in expected_files:
        assert (out / f).read_bytes() == (out2 / f).read_bytes(), f
    # another seed changes the split but not the official test set
    out3 = tmp_path / "prepared3"
    prepare_paper_data(raw, out3, sources, seed=8, val_fraction=0.2, ood_test=["svhn"])
    assert (out / "id_test_x.npy").read_bytes() == (out3 / "id_test_x.npy").read_bytes()
    assert (out / "id_val_y.npy").read_bytes() != (out3 / "id_val_y.npy").read_bytes() or (
        out / "id_val_x.npy"
    ).read_bytes() != (out3 / "id_val_x.npy").read_bytes()


def test_prepare_reports_missing_and_corrupted_raw_files(archives, server, tmp_path):
    sources = _sources_for(server, archives)
    raw = tmp_path / "raw"
    with pytest.raises(MissingDataError, match="cifar-10-python.tar.gz"):
        prepare_paper_data(
            raw, tmp_path / "out", sources, seed=0, val_fraction=0.2, ood_test=["svhn"]
        )
    fetch_sources(sources, raw, ["cifar10", "svhn"], timeout=5)
    (raw / "test_32x32.mat").write_bytes(b"replaced by something else")
    with pytest.raises(DownloadError, match="checksum mismatch"):
        prepare_paper_data(
            raw, tmp_path / "out", sources, seed=0, val_fraction=0.2, ood_test=["svhn"]
        )


# --------------------------------------------------------------------------- Kang: CIFAR-10-C, MNIST
def test_cifar10c_download_extract_and_read_by_severity(tmp_path, server):
    from fixtures_archives import make_cifar10c_tar

    from softmax_ood.download import download
    from softmax_ood.paper_data import read_cifar_c

    (tmp_path / "src").mkdir()
    made = make_cifar10c_tar(tmp_path / "src" / "CIFAR-10-C.tar")
    server.files["/files/CIFAR-10-C.tar"] = made["path"].read_bytes()
    raw = tmp_path / "raw"
    archive = download(
        server.url("/files/CIFAR-10-C.tar"), raw / "CIFAR-10-C.tar", md5=md5(made["path"])
    )
    root = safe_extract(archive, raw / "cifar10c")
    k = made["per_severity"]
    for s in (1, 3, 5):
        x, y = read_cifar_c(root, "contrast", s, per_severity=k)
        assert x.shape == (k, 32, 32, 3) and x.dtype == np.uint8
        assert np.array_equal(x, made["arrays"]["contrast"][k * (s - 1) : k * s])
        assert (x[:, 0, 0, 0] == 10 * s + 1).all()
        assert np.array_equal(y, made["labels"][:k])
    with pytest.raises(ValueError, match="severities are the integers 1-5"):
        read_cifar_c(root, "contrast", 6, per_severity=k)
    with pytest.raises(MissingDataError, match="fog.npy is missing"):
        read_cifar_c(root, "fog", 1, per_severity=k)
    # by default the rows per severity are the file's own (a fifth of labels.npy)
    x, y = read_cifar_c(root, "contrast", 2)
    assert np.array_equal(x, made["arrays"]["contrast"][k : 2 * k])
    with pytest.raises(ValueError, match="CIFAR-10-C files hold"):
        read_cifar_c(root, "contrast", 1, per_severity=10000)  # the published count: no fit


def test_cifar10c_wrong_checksum_keeps_nothing(tmp_path, server):
    from fixtures_archives import make_cifar10c_tar

    from softmax_ood.download import download

    (tmp_path / "src").mkdir()
    made = make_cifar10c_tar(tmp_path / "src" / "CIFAR-10-C.tar")
    server.files["/CIFAR-10-C.tar"] = made["path"].read_bytes()
    with pytest.raises(DownloadError):
        download(server.url("/CIFAR-10-C.tar"), tmp_path / "raw" / "CIFAR-10-C.tar", md5="0" * 32)
    assert not (tmp_path / "raw" / "CIFAR-10-C.tar").exists()


def test_mnist_idx_roundtrip_over_loopback(tmp_path, server):
    from fixtures_archives import make_mnist_idx_gz

    from softmax_ood.download import download
    from softmax_ood.paper_data import read_mnist_idx

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (7, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 7, dtype=np.uint8)
    src = {"t10k-images-idx3-ubyte.gz": images, "t10k-labels-idx1-ubyte.gz": labels}
    for name, arr in src.items():
        made = make_mnist_idx_gz(tmp_path / name, arr)
        server.files[f"/mnist/{name}"] = made.read_bytes()
        got = download(server.url(f"/mnist/{name}"), tmp_path / "raw" / name, md5=md5(made))
        assert np.array_equal(read_mnist_idx(got), arr)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x00\x00\x09\x03" + b"\x00" * 12)
    with pytest.raises(ValueError, match="bad magic number"):
        read_mnist_idx(bad)


def test_mnist_is_an_id_set_of_four_sources(archives, server, tmp_path):
    """data.dataset: mnist = the four mnist-idx entries: downloaded with their md5s, prepared as
    1 x 28 x 28 with the CIFAR path's conventions (stratified val from the official training set,
    the official test set in its order, OOD sets and Gaussian val noise in the ID format)."""
    from fixtures_archives import MNIST_FILES, make_mnist_set

    from softmax_ood.paper_data import source_names

    real = load_paper_config(CONFIG)["sources"]
    names = source_names(real, "mnist")
    assert names == [f"mnist_{p}" for p in MNIST_FILES]
    assert [real[n]["filename"] for n in names] == list(MNIST_FILES.values())
    made = make_mnist_set(tmp_path / "made", n_train=100, n_test=30)
    sources = _sources_for(server, {k: archives[k] for k in ("svhn", "textures")})
    for name in names:
        part = real[name]["part"]
        entry = dict(real[name])
        entry["url"] = server.add(f"/mnist/{entry['filename']}", made[part]["path"].read_bytes())
        entry["md5"] = md5(made[part]["path"])
        sources[name] = entry
    raw = tmp_path / "raw"
    fetch_sources(sources, raw, timeout=5)
    out = tmp_path / "prepared"
    meta = prepare_paper_data(
        raw,
        out,
        sources,
        seed=3,
        val_fraction=0.2,
        id_dataset="mnist",
        ood_test=["svhn", "textures"],
        image_size=28,
    )
    assert meta["channels"] == 1 and meta["image_size"] == 28 and meta["num_classes"] == 10
    assert set(meta["sources"]) == {*names, "svhn", "textures", "gaussian"}
    prepared = load_prepared(out)
    x = {s: np.load(out / f"id_{s}_x.npy") for s in ("train", "val", "test")}
    y = {s: np.load(out / f"id_{s}_y.npy") for s in ("train", "val", "test")}
    assert x["train"].shape == (80, 1, 28, 28) and x["val"].shape == (20, 1, 28, 28)
    assert np.bincount(y["val"], minlength=10).tolist() == [2] * 10
    np.testing.assert_array_equal(x["test"][:, 0], made["test_images"]["array"] / np.float32(255))
    np.testing.assert_array_equal(y["test"], made["test_labels"]["array"])
    for name in ("svhn", "textures"):
        o = np.load(out / f"ood_{name}_x.npy")
        assert o.shape[1:] == (1, 28, 28) and o.dtype == np.float32
    assert np.load(out / "oodval_gaussian_x.npy").shape == (20, 1, 28, 28)
    assert len(meta["mean"]) == 1 and prepared is not None
    # svhn's luma at 28 px = PIL's Resize + CenterCrop + convert("L") of the 32 px images
    from PIL import Image

    sv = read_svhn_mat(raw / "test_32x32.mat")[0][:25]
    want = [
        np.asarray(Image.fromarray(a).resize((28, 28), Image.Resampling.BILINEAR).convert("L"))
        for a in sv
    ]
    np.testing.assert_array_equal(
        np.load(out / "ood_svhn_x.npy")[:, 0], np.stack(want) / np.float32(255)
    )
    with pytest.raises(ValueError, match="stored at its own size, 28x28"):
        prepare_paper_data(
            raw,
            tmp_path / "p32",
            sources,
            seed=3,
            val_fraction=0.2,
            id_dataset="mnist",
            ood_test=["svhn"],
            image_size=32,
        )
