"""softmax_ood.fashion: Fashion-MNIST as a core dataset (IDX decode + decoded-array digests,
Debian package or checked download, splits, the 28x28 far-OOD builders) on small synthetic IDX
files in the real format; the download path over loopback HTTP only. The installed package's
full 70,000 images are read only by the slow test."""

from __future__ import annotations

import gzip
import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from fixtures_archives import make_mnist_idx_gz  # noqa: E402

from softmax_ood.config import ConfigError, validate_config  # noqa: E402
from softmax_ood.data import GLYPH_CHARS, MissingDataError, load_prepared  # noqa: E402
from softmax_ood.download import DownloadError  # noqa: E402
from softmax_ood.fashion import (  # noqa: E402
    CUE_CONTROL,
    CUE_REMOVED,
    CUE_SEPARABLE,
    FASHION_OOD_SETS,
    FASHION_VAL_SETS,
    GLYPH_VAL_CHARS,
    MATCHED,
    build_ood,
    build_ood_checked,
    drop_duplicates_and_blanks,
    fashion_entries,
    make_fashion_dataset,
    match_histograms,
    read_fashion,
    remove_cue,
    set_group,
)
from softmax_ood.paper_data import (  # noqa: E402
    MNIST_PARTS,
    array_sha256,
    fetch_sources,
    load_paper_config,
    read_mnist_idx,
)

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "config/paper_sources.yaml"
BUILT = sorted(set(FASHION_OOD_SETS) - {"heldout_classes"})


def _one_sentence(msg: str) -> None:
    assert "\n" not in msg and msg.count(". ") == 0, msg


def _arrays(n_train: int = 120, n_test: int = 40, seed: int = 4) -> dict[str, np.ndarray]:
    """Four uint8 arrays shaped like Fashion-MNIST's (balanced labels, a bright class-dependent
    block filling most of the frame on a noisy dark ground)."""
    rng = np.random.default_rng(seed)
    out = {}
    for split, n in (("train", n_train), ("test", n_test)):
        y = (np.arange(n) % 10).astype(np.uint8)
        rng.shuffle(y)
        x = rng.integers(0, 30, (n, 28, 28), dtype=np.uint8)
        for i, c in enumerate(y):
            x[i, 3 + int(c) : 25, 4:24] = rng.integers(120, 256, dtype=np.uint8)
        out[f"{split}_images"], out[f"{split}_labels"] = x, y
    return out


def _write(directory: Path, arrays: dict, entries: dict, *, mtime: int = 0, level: int = 9):
    """The four IDX .gz files under each entry's ``filename``, gzip'd with the given header mtime
    and level (another mtime/level = other bytes, the same decoded arrays: Debian's case)."""
    directory.mkdir(parents=True, exist_ok=True)
    for part, a in arrays.items():
        header = bytes([0, 0, 0x08, a.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in a.shape)
        raw = gzip.compress(header + a.tobytes(), compresslevel=level, mtime=mtime)
        (directory / entries[part]["filename"]).write_bytes(raw)


def _entries(arrays: dict, installed: Path | None = None) -> dict[str, dict]:
    """The real fashion entries with the fixture's decoded digests and md5s of the level-9 files,
    ``installed`` pointing into ``installed`` (or at a path that does not exist)."""
    real = fashion_entries(load_paper_config(SOURCES))
    out = {}
    for part, e in real.items():
        e = dict(e)
        e["decoded_sha256"] = array_sha256(arrays[part])
        base = installed if installed is not None else Path("/nonexistent/fashion-mnist")
        e["installed"] = str(base / Path(e["installed"]).name)
        out[part] = e
    return out


@pytest.fixture
def fixture_set(tmp_path):
    """The fixture arrays, their entries, and their files 'installed' in ``tmp_path/pkg``."""
    arrays = _arrays()
    entries = _entries(arrays, tmp_path / "pkg")
    names = {p: {"filename": Path(e["installed"]).name} for p, e in entries.items()}
    _write(tmp_path / "pkg", arrays, names)
    return arrays, entries


KW = dict(
    seed=3,
    val_fraction=0.25,
    ood_size=12,
    ood_test=["heldout_classes", "digits", "glyphs", "photos", "noise", "shuffled"],
    ood_val=["digits_val", "noise_val"],
    id_classes=[0, 1, 2, 3, 4, 5, 7, 8, 9],
)


# --------------------------------------------------------------------------- sources file
def test_sources_file_records_upstream_md5s_and_decoded_digests():
    entries = fashion_entries(load_paper_config(SOURCES))
    assert sorted(entries) == sorted(MNIST_PARTS)
    for e in entries.values():
        assert e["filename"].startswith("fashion-")  # never MNIST's file names in data/raw
        # https: the repository's copy (the README's S3 website endpoint serves http only)
        assert e["url"] == (
            "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"
            + e["filename"].removeprefix("fashion-")
        )
        assert len(e["md5"]) == 32 and len(e["decoded_sha256"]) == 64
        assert e["package"] == "dataset-fashion-mnist" and e["installed"].startswith("/usr/share/")
    assert entries["train_images"]["md5"] == "8d4fb7e6c68d591d4c3dfef9ec88bf0d"  # torchvision


def test_a_malformed_decoded_digest_is_refused(tmp_path):
    cfg = yaml.safe_load(SOURCES.read_text())
    for e in cfg["sources"]:
        if e["name"] == "fashion_test_labels":
            e["decoded_sha256"] = "abc"
    bad = tmp_path / "s.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError, match="malformed decoded_sha256"):
        load_paper_config(bad)


# --------------------------------------------------------------------------- decode + digest
def test_decoded_digest_does_not_depend_on_the_compression(tmp_path):
    a = _arrays()["test_images"]
    one = make_mnist_idx_gz(tmp_path / "a.gz", a)
    two = tmp_path / "b.gz"
    header = bytes([0, 0, 8, 3]) + b"".join(int(d).to_bytes(4, "big") for d in a.shape)
    two.write_bytes(gzip.compress(header + a.tobytes(), compresslevel=1, mtime=12345))
    assert hashlib.md5(one.read_bytes()).digest() != hashlib.md5(two.read_bytes()).digest()
    assert array_sha256(read_mnist_idx(one)) == array_sha256(read_mnist_idx(two))
    assert array_sha256(a) == hashlib.sha256(a.tobytes()).hexdigest()


def test_read_fashion_prefers_the_package_and_verifies_decoded_digests(tmp_path, fixture_set):
    arrays, entries = fixture_set
    got = read_fashion(entries, tmp_path / "raw")  # nothing downloaded: the package's files
    for part, a in arrays.items():
        np.testing.assert_array_equal(got[part], a)
    entries["test_labels"]["decoded_sha256"] = "0" * 64
    with pytest.raises(ValueError, match="not the published data") as err:
        read_fashion(entries, tmp_path / "raw")
    _one_sentence(str(err.value))


def test_missing_package_and_no_download_is_one_sentence_with_the_install_command(tmp_path):
    arrays = _arrays()
    with pytest.raises(MissingDataError) as err:
        read_fashion(_entries(arrays), tmp_path / "raw")
    assert "apt-get install dataset-fashion-mnist" in str(err.value)
    _one_sentence(str(err.value))


def test_a_failed_download_of_a_packaged_file_names_the_install_command(tmp_path, server):
    entry = dict(_entries(_arrays())["train_labels"])
    entry["url"] = server.url("/missing.gz")  # 404
    with pytest.raises(DownloadError) as err:
        fetch_sources({entry["name"]: entry}, tmp_path / "raw", timeout=5)
    msg = str(err.value)
    assert "apt-get install dataset-fashion-mnist" in msg and "HTTP 404" in msg
    _one_sentence(msg)
    assert not (tmp_path / "raw" / entry["filename"]).exists()


# --------------------------------------------------------------------------- the dataset
def test_fashion_dataset_layout_and_splits(tmp_path, fixture_set):
    arrays, entries = fixture_set
    out = tmp_path / "fashion"
    meta = make_fashion_dataset(
        out, {e["name"]: e for e in entries.values()}, tmp_path / "raw", **KW
    )
    d = load_prepared(out)  # checks every file's recorded sha256
    assert meta["num_classes"] == 9 and meta["heldout_classes"] == [6]
    assert meta["class_names"][6] == "Sneaker"  # relabelled in id_classes order
    n_train = len(arrays["train_labels"])
    kept = arrays["train_labels"] != 6
    assert len(d.y["train"]) + len(d.y["val"]) == kept.sum()
    assert abs(len(d.y["val"]) - KW["val_fraction"] * n_train * 0.9) <= 2
    test_kept = arrays["test_labels"] != 6
    np.testing.assert_array_equal(
        np.load(out / "id_test_x.npy")[:, 0], arrays["test_images"][test_kept] / np.float32(255)
    )
    relabel = {c: i for i, c in enumerate(KW["id_classes"])}
    np.testing.assert_array_equal(
        np.load(out / "id_test_y.npy"), [relabel[c] for c in arrays["test_labels"][test_kept]]
    )
    held = np.load(out / "ood_heldout_classes_x.npy")
    np.testing.assert_array_equal(held[:, 0], arrays["test_images"][~test_kept] / np.float32(255))
    for name in KW["ood_test"] + KW["ood_val"]:
        prefix = "oodval" if name in FASHION_VAL_SETS else "ood"
        x = np.load(out / f"{prefix}_{name}_x.npy")
        assert x.dtype == np.float32 and x.shape[1:] == (1, 28, 28)
        assert 0.0 <= x.min() and x.max() <= 1.0
    assert len(d.ood) == len(KW["ood_test"]) and len(d.ood_val) == len(KW["ood_val"])


def test_downloaded_and_packaged_files_give_byte_identical_data(tmp_path, server):
    """The loopback download path (upstream md5s) and a recompressed 'Debian' copy (other
    bytes, other md5) decode to the same arrays: the prepared folders are byte-identical."""
    arrays = _arrays()
    pkg = tmp_path / "pkg"
    entries = _entries(arrays, pkg)
    # "upstream": level 9, mtime 0, served over loopback with its md5
    upstream = tmp_path / "upstream"
    _write(upstream, arrays, entries)
    down = {}
    for part, e in entries.items():
        e = dict(e, installed=str(tmp_path / "not-installed" / e["filename"]))
        body = (upstream / e["filename"]).read_bytes()
        e["url"] = server.add(f"/fashion/{e['filename']}", body)
        e["md5"] = hashlib.md5(body).hexdigest()
        down[part] = e
    raw = tmp_path / "raw"
    fetch_sources({e["name"]: e for e in down.values()}, raw, timeout=5)
    assert all(server.hits[f"/fashion/{e['filename']}"] == 1 for e in down.values())
    # "Debian": the same arrays recompressed (another level and header mtime)
    _write(
        pkg,
        arrays,
        {p: {"filename": Path(e["installed"]).name} for p, e in entries.items()},
        mtime=99,
        level=6,
    )
    assert (pkg / Path(entries["train_images"]["installed"]).name).read_bytes() != (
        raw / entries["train_images"]["filename"]
    ).read_bytes()
    kw = dict(KW, ood_test=["heldout_classes", "noise"], ood_val=["noise_val"])
    a = make_fashion_dataset(tmp_path / "a", {e["name"]: e for e in down.values()}, raw, **kw)
    b = make_fashion_dataset(
        tmp_path / "b", {e["name"]: e for e in entries.values()}, tmp_path / "none", **kw
    )
    assert a["files"] == b["files"]
    # meta.json differs only where the entries do (the Debian path and the md5 given here)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files:
        if name.endswith(".npy"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(ood_test=["gaussian"]), "unknown Fashion-MNIST OOD set"),
        (dict(ood_test=["digits_val"]), "validation sets"),
        (dict(ood_val=["noise"]), "validation sets"),
        (dict(id_classes=list(range(10))), "needs held-out classes"),
        (dict(image_size=32), "28x28"),
    ],
)
def test_bad_parameters_are_one_sentence(tmp_path, fixture_set, kw, match):
    arrays, entries = fixture_set
    with pytest.raises(ValueError, match=match) as err:
        make_fashion_dataset(
            tmp_path / "x", {e["name"]: e for e in entries.values()}, tmp_path, **{**KW, **kw}
        )
    _one_sentence(str(err.value))
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------- far-OOD builders
@pytest.fixture(scope="module")
def train_x():
    a = _arrays(n_train=200)
    return a["train_images"].astype(np.float64) / 255.0


@pytest.mark.parametrize("name", BUILT)
def test_builders_shape_range_grid_and_determinism(name, train_x):
    x = build_ood(name, 10, 5, train_x)
    n = {"digits": 1347, "digits_val": 450, "digits_matched": 1347}.get(name, 10)
    assert x.shape == (n, 28, 28)
    assert 0.0 <= x.min() and x.max() <= 1.0 and x.max() > 0.2
    np.testing.assert_allclose(x * 255, np.round(x * 255), atol=1e-9)  # the ID's 1/255 grid
    assert build_ood(name, 10, 5, train_x).tobytes() == x.tobytes()  # same seed, same bytes
    assert build_ood(name, 10, 6, train_x).tobytes() != x.tobytes()  # the seed matters


def test_validation_sets_share_no_image_or_source_with_the_test_sets(train_x):
    assert not set(GLYPH_CHARS) & set(GLYPH_VAL_CHARS)
    test = {im.tobytes() for im in build_ood("digits", 0, 0, train_x)}
    val = {im.tobytes() for im in build_ood("digits_val", 0, 0, train_x)}
    assert len(test) + len(val) >= 1700 and not test & val  # disjoint digits (few duplicates)
    for t, v in (("glyphs", "glyphs_val"), ("photos", "photos_val"), ("noise", "noise_val")):
        a = {im.tobytes() for im in build_ood(t, 20, 0, train_x)}
        b = {im.tobytes() for im in build_ood(v, 20, 0, train_x)}
        assert not a & b, (t, v)


def test_blank_and_repeated_images_are_dropped_in_order():
    rng = np.random.default_rng(0)
    a, b = np.round(rng.random((2, 28, 28)) * 255) / 255
    x = np.stack([a, np.zeros((28, 28)), b, a.copy(), np.full((28, 28), 0.5), b])
    kept, dropped = drop_duplicates_and_blanks(x)
    assert dropped == {"blank": 2, "duplicate": 2}
    assert np.array_equal(kept, np.stack([a, b]))


@pytest.mark.parametrize("name", BUILT)
def test_every_built_set_has_no_blank_or_repeated_image(name, train_x):
    x, _ = build_ood_checked(name, 40, 1, train_x)
    assert drop_duplicates_and_blanks(x)[1] == {"blank": 0, "duplicate": 0}


def test_the_groups_split_the_far_sets():
    assert set(CUE_SEPARABLE).isdisjoint(MATCHED)
    assert {set_group(n) for n in MATCHED} == {"matched"}
    assert {set_group(n) for n in CUE_SEPARABLE} == {"cue-separable"}
    assert set_group("heldout_classes") == "near"
    assert set(MATCHED) <= set(FASHION_OOD_SETS) and set(CUE_SEPARABLE) <= set(FASHION_OOD_SETS)


def test_histogram_matching_gives_each_image_an_id_images_exact_grey_levels(train_x):
    rng = np.random.default_rng(2)
    base = rng.random((12, 28, 28)) * 0.3
    out = match_histograms(base, train_x, np.random.default_rng(3))
    ids = {tuple(np.sort(t.ravel())) for t in train_x}
    assert all(tuple(np.sort(o.ravel())) in ids for o in out)
    # the base's order is kept: the brightest base pixel gets the ID image's peak
    for b, o in zip(base, out, strict=True):
        assert o.ravel()[np.argmax(b)] == o.max()


@pytest.mark.parametrize("name", [m for m in MATCHED if m != "shuffled_matched"])
def test_matched_sets_carry_id_grey_levels_and_peak(name, train_x):
    x = build_ood(name, 10, 0, train_x)[:10]
    ids = {tuple(np.round(np.sort(t.ravel()) * 255)) for t in train_x}
    assert all(tuple(np.round(np.sort(im.ravel()) * 255)) in ids for im in x)


def test_shaped_noise_has_the_id_amplitude_spectrum_not_a_flat_one(train_x):
    from softmax_ood.farsets import _amplitude, _shaped_noise

    amp = _amplitude(train_x)
    f = np.abs(np.fft.fft2(_shaped_noise(4, np.random.default_rng(0), amp)))
    ratio = f[:, amp > 1e-6 * amp.max()] / amp[amp > 1e-6 * amp.max()]
    ratio[:, 0] = ratio[:, 1]  # the DC term is removed by the standardisation
    assert np.allclose(ratio, ratio[:, 1:2], rtol=1e-6)


def test_block_shuffle_keeps_each_images_grey_levels_and_moves_blocks(train_x):
    x = build_ood("shuffled_matched", 8, 2, train_x)
    src = {tuple(np.round(np.sort(t.ravel()) * 255)) for t in train_x}
    assert all(tuple(np.round(np.sort(im.ravel()) * 255)) in src for im in x)
    flat = {t.tobytes() for t in np.round(train_x * 255)}
    assert not any(im.tobytes() in flat for im in np.round(x * 255))


@pytest.mark.parametrize("name", sorted(CUE_REMOVED))
def test_a_cue_removal_control_is_its_base_set_with_the_peak_at_one(name, train_x):
    base, cue = CUE_REMOVED[name]
    x, b = build_ood(name, 12, 0, train_x), build_ood(base, 12, 0, train_x)
    assert cue == "peak" and np.all(x.max(axis=(1, 2)) == 1.0)
    assert b.max(axis=(1, 2)).min() < 1.0  # the base is dimmed
    np.testing.assert_allclose(x, remove_cue(b, "peak"))
    # the same image up to a linear stretch (the grid's rounding aside)
    k = b.max(axis=(1, 2), keepdims=True)
    assert np.abs(x - b / k).max() <= 0.5 / 255 + 1e-12
    assert set_group(name) == "control"


def test_every_cue_separable_far_set_names_its_cue_and_a_variant_without_it():
    far = set(CUE_SEPARABLE) - {"glyphs_boxed"}
    assert set(CUE_CONTROL) == far
    assert all(v in FASHION_OOD_SETS and cue for cue, v in CUE_CONTROL.values())
    with pytest.raises(ValueError, match="no remover"):
        remove_cue(np.zeros((1, 28, 28)), "shape")


def test_shuffled_keeps_each_ring_of_grey_levels(train_x):
    from softmax_ood.farsets import _RINGS

    x = build_ood("shuffled", 8, 2, train_x)
    # each shuffled image holds, ring by ring, the sorted grey levels of one training image
    src = np.round(train_x.reshape(len(train_x), -1) * 255)
    for img in np.round(x.reshape(8, -1) * 255):
        match = [
            i
            for i in range(len(src))
            if all(np.array_equal(np.sort(img[r]), np.sort(src[i, r])) for r in _RINGS)
        ]
        assert match
    assert not any(np.array_equal(img, s) for img in np.round(x.reshape(8, -1) * 255) for s in src)


def test_floor_table_flags_the_framing_trap_and_not_frame_filling_glyphs(tmp_path, fixture_set):
    from softmax_ood.analysis.floor_report import floor_table

    """On the fixture's frame-filling blocks the MNIST-framed glyphs are separated by border
    mass alone; the table has one row per set."""
    arrays, entries = fixture_set
    out = tmp_path / "f"
    kw = dict(KW, ood_size=60, ood_test=["glyphs_boxed", "noise"], ood_val=["noise_val"])
    make_fashion_dataset(out, {e["name"]: e for e in entries.values()}, tmp_path, **kw)
    t = floor_table(out).set_index("set")
    assert list(t.index) == ["glyphs_boxed", "noise", "noise_val"]
    assert t.loc["glyphs_boxed", "fpr95_border_mass"] < 5.0
    assert t.loc["noise_val", "kind"] == "val"


def test_battery_table_reads_the_selection_half_and_names_groups_and_drops(tmp_path, fixture_set):
    """Issue 41: the battery's per-set table (offline, from the images) on the selection half:
    one row per test set with its group, what the dedupe dropped and both families' best."""
    from softmax_ood.analysis.battery import HELD_OUT, TUNING
    from softmax_ood.studies.logitnorm.floor import battery_table

    arrays, entries = fixture_set
    out = tmp_path / "b"
    kw = dict(KW, ood_size=60, ood_test=["noise", "noise_matched"], ood_val=["noise_val"])
    make_fashion_dataset(out, {e["name"]: e for e in entries.values()}, tmp_path, **kw)
    t = battery_table(out, selection_fraction=0.5, seed=0).set_index("set")
    assert list(t.index) == ["noise", "noise_matched"]
    assert list(t["group"]) == ["cue-separable", "matched"]
    assert list(t["selection"]) == [30, 30] and list(t["images"]) == [60, 60]
    assert set(t["tuning_detector"]) <= set(TUNING) and set(t["heldout_detector"]) <= set(HELD_OUT)
    assert (t["dropped"] == "blank 0, duplicate 0").all()
    # pixel-wise noise has no spatial correlation: the tuning family solves it
    assert t.loc["noise", "tuning_fpr95"] < 5.0


# --------------------------------------------------------------------------- config
def _cfg(**data):
    from test_config import SCHEMA, STUDIES, merged

    cfg = merged()  # the default is Fashion-MNIST
    cfg["data"].update(data)
    return lambda: validate_config(cfg, SCHEMA, STUDIES)


def test_fashion_config_validates():
    cfg = _cfg()()
    assert cfg["data"]["dataset"] == "fashion" and cfg["data"]["image_size"] == 28


@pytest.mark.parametrize(
    "data, match",
    [
        (dict(image_size=8), "Fashion-MNIST is stored at its own size"),
        (dict(ood_test=["heldout_digits"]), "does not provide"),
        (dict(ood_val=["gaussian_val"]), "does not provide"),
        (dict(id_classes=list(range(10))), "keeps all ten classes"),
    ],
)
def test_fashion_config_errors_are_one_sentence(data, match):
    with pytest.raises(ConfigError, match=match) as err:
        _cfg(**data)()
    _one_sentence(str(err.value))


def test_digits_config_refuses_fashion_sets():
    from test_config import SCHEMA, STUDIES, merged

    cfg = merged("digits.yaml")
    cfg["data"]["ood_test"] = ["noise"]
    cfg["studies"] = []
    with pytest.raises(ConfigError, match="does not provide"):
        validate_config(cfg, SCHEMA, STUDIES)


# --------------------------------------------------------------------------- the real package
@pytest.mark.slow
def test_installed_package_decodes_to_the_recorded_arrays():
    entries = fashion_entries(load_paper_config(SOURCES))
    if not all(Path(e["installed"]).is_file() for e in entries.values()):
        pytest.skip(
            "Debian's dataset-fashion-mnist is not installed (apt-get install dataset-fashion-mnist)"
        )
    got = read_fashion(entries, "/nonexistent")  # raises unless every decoded digest matches
    assert got["train_images"].shape == (60000, 28, 28) and got["test_labels"].shape == (10000,)
    assert np.bincount(got["train_labels"]).tolist() == [6000] * 10


# --------------------------------------------------------------------------- the workflow
@pytest.mark.slow
def test_workflow_downloads_what_the_package_does_not_provide(tmp_path, server):
    """Without the package: `snakemake data/fashion` runs download_source for the four files
    (loopback, md5-checked) and prepares from them; with no package and no server, the job fails
    with one sentence naming the install command and leaves no data."""
    from e2e import fresh_copy, snakemake

    arrays = _arrays()
    entries = _entries(arrays, tmp_path / "not-installed")
    upstream = tmp_path / "upstream"
    _write(upstream, arrays, entries)
    cfg = yaml.safe_load(SOURCES.read_text())
    by_name = {e["name"]: e for e in entries.values()}
    for e in cfg["sources"]:
        if e["name"] in by_name:
            body = (upstream / e["filename"]).read_bytes()
            e.update(
                url=server.add(f"/f/{e['filename']}", body),
                md5=hashlib.md5(body).hexdigest(),
                decoded_sha256=by_name[e["name"]]["decoded_sha256"],
                installed=by_name[e["name"]]["installed"],
            )
    work = fresh_copy(tmp_path / "repo")
    (work / "sources.yaml").write_text(yaml.safe_dump(cfg))
    (work / "over.yaml").write_text(
        "data:\n  sources: sources.yaml\n  ood_size: 10\n  ood_test: [heldout_classes, glyphs, textures]\n"
        "  ood_val: [noise_val]\nstudies: []\n"
    )
    args = [
        "--cores",
        "1",
        "--configfile",
        "over.yaml",
        "--",
        "data/fashion",
    ]
    proc = snakemake(work, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in (work / "data/raw").glob("fashion-*")) == sorted(
        e["filename"] for e in entries.values()
    )
    test_kept = arrays["test_labels"] != 6
    np.testing.assert_array_equal(
        np.load(work / "data/fashion/id_test_x.npy")[:, 0],
        arrays["test_images"][test_kept] / np.float32(255),
    )
    # no package, no network: one sentence with the install command, nothing prepared
    server.close()
    for p in [work / "data/fashion", *(work / "data/raw").glob("fashion-*")]:
        p.unlink() if p.is_file() else __import__("shutil").rmtree(p)
    proc = snakemake(work, *args)
    assert proc.returncode != 0
    assert "install it with `apt-get install dataset-fashion-mnist`" in proc.stderr, proc.stderr[
        -3000:
    ]
    assert not (work / "data/fashion").exists()


def test_smoke_and_digits_overlays_stay_on_the_digits():
    from test_config import SCHEMA, STUDIES, merged

    for name in ("smoke.yaml", "digits.yaml"):
        cfg = validate_config(merged(name), SCHEMA, STUDIES)
        assert cfg["data"]["dataset"] == "digits" and cfg["data"]["image_size"] == 8
