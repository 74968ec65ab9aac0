"""Paper-scale preparation: the downloaded raw files into the prepared layout of
:mod:`softmax_ood.data` (:func:`prepare_paper_data`).

The in-distribution data is a ``cifar-python`` source or an MNIST data set (four ``mnist-idx``
sources), stored at its own size; the validation split is carved from its official training
set (stratified, seeded), the official test set is the ID test split. Each OOD test set is read
by its format's reader (:mod:`softmax_ood.paper_data.readers`), subsampled as its entry says and
brought into the ID format (:func:`_conform`); the OOD validation set is Gaussian noise.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ..data import (
    MissingDataError,
    record_file_hashes,
    save_array,
    staged_directory,
    write_json,
)
from ..download import DownloadError, file_digests, safe_extract
from .readers import (
    _CIFAR,
    _resize_center_crop,
    array_sha256,
    list_images,
    load_images,
    read_cifar_python,
    read_mnist_idx,
    read_svhn_mat,
)
from .sources import _as_sources, _lookup, source_names

log = logging.getLogger(__package__)

#: Native image side and channels of each in-distribution format (what it is stored at).
ID_FORMATS = {"cifar-python": (32, 3), "mnist-idx": (28, 1)}
GAUSSIAN_VAL = "Gaussian noise N(0.5, 0.25^2) per pixel, clipped to [0, 1]"
#: ``meta.json``'s ``preprocessing`` per in-distribution format
PREPROCESSING = {
    "cifar-python": "uint8 RGB / 255 -> float32 (N, 3, 32, 32). Folder images: shorter side "
    "resized to 32 (PIL bilinear), then 32x32 center crop (torchvision Resize(32) + "
    "CenterCrop(32)). ID val: stratified split of the official training set; ID test: the "
    "official test set. Normalisation (x - mean) / std at load time.",
    "mnist-idx": "uint8 grey / 255 -> float32 (N, 1, 28, 28), the MNIST digits unchanged. OOD "
    "images: shorter side resized to 28 (PIL bilinear), 28x28 center crop (torchvision "
    "Resize(28) + CenterCrop(28)), then PIL 'L' luma (ITU-R 601-2, torchvision Grayscale). ID "
    "val: stratified split of the official training set; ID test: the official test set. "
    "Normalisation (x - mean) / std at load time.",
}


def _to_chw(x: np.ndarray) -> np.ndarray:
    """uint8 (N, H, W, C) -> float32 (N, C, H, W) in [0, 1]."""
    out = np.ascontiguousarray(x.transpose(0, 3, 1, 2), dtype=np.float32)
    out /= np.float32(255.0)
    return out


def _stream(seed: int, name: str) -> np.random.Generator:
    """An independent random stream per purpose: adding a set never changes the others."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))


def _subset(n: int, entry: Mapping, seed: int, name: str) -> np.ndarray:
    """Indices kept from a set of ``n`` items: a seeded random ``subsample`` and/or ``limit``."""
    idx = np.arange(n)
    k = entry.get("subsample")
    if k is not None and int(k) < n:
        idx = np.sort(_stream(seed, f"subsample:{name}").choice(n, size=int(k), replace=False))
    if entry.get("limit") is not None:
        idx = idx[: int(entry["limit"])]
    return idx


def _checked_raw(raw_dir: Path, entry: Mapping, verify_checksums: bool) -> Path:
    path = raw_dir / entry["filename"]
    if not path.is_file():
        raise MissingDataError(
            f"raw file {path} for source {entry['name']!r} is missing; download it with "
            f"softmax_ood.paper_data.fetch_sources (url: {entry['url']})"
        )
    expected = {a: entry.get(a) for a in ("md5", "sha256") if entry.get(a)}
    if not expected:
        log.warning("%s has no recorded checksum; using it unverified", path)
    elif verify_checksums:
        got = file_digests(path, tuple(expected))
        for algo, want in expected.items():
            if got[algo] != want:
                raise DownloadError(
                    f"checksum mismatch for {path}: expected {algo} {want}, got {got[algo]}; "
                    "delete it and download it again"
                )
    return path


def _conform(x: np.ndarray, size: int, channels: int) -> np.ndarray:
    """uint8 ``(N, H, W, 3)`` RGB images in the ID set's format ``(N, size, size, channels)``.

    Unchanged when they already have it (CIFAR-sized sets beside CIFAR). Otherwise, per image
    with PIL: torchvision ``Resize(size)`` + ``CenterCrop(size)`` (see :func:`_resize_center_crop`)
    and, for one channel, PIL's ``L`` conversion (ITU-R 601-2 luma, as torchvision
    ``Grayscale``)."""
    if x.shape[1:] == (size, size, channels):
        return x
    from PIL import Image

    out = np.empty((len(x), size, size, channels), dtype=np.uint8)
    for i, img in enumerate(x):
        pil = _resize_center_crop(Image.fromarray(img, "RGB"), size)
        if channels == 1:
            pil = pil.convert("L")
        out[i] = np.asarray(pil, dtype=np.uint8).reshape(size, size, channels)
    return out


def _read_ood(
    raw_dir: Path,
    entry: Mapping,
    size: int,
    seed: int,
    verify_checksums: bool,
    extract_root: Path,
    channels: int = 3,
) -> np.ndarray:
    name, fmt = entry["name"], entry["format"]
    path = _checked_raw(raw_dir, entry, verify_checksums)
    if fmt == "cifar-python":
        x = read_cifar_python(path, entry["which"])[2]  # the test split
        return _conform(x[_subset(len(x), entry, seed, name)], size, channels)
    if fmt == "svhn-mat":
        x = read_svhn_mat(path)[0]
        return _conform(x[_subset(len(x), entry, seed, name)], size, channels)
    # image-folder-tar: extract once (atomically), then read. The folder name carries the
    # archive's checksum, so a re-downloaded, different archive is never read from stale files.
    digest = entry.get("md5") or entry.get("sha256") or file_digests(path, ("md5",))["md5"]
    target = extract_root / f"{name}-{digest[:12]}"
    if not target.exists():
        safe_extract(path, target)
    folder = target / entry["subdir"] if entry.get("subdir") else target
    files = list_images(folder)
    if not files:
        raise ValueError(f"no images found below {folder} (source {name!r})")
    files = [files[i] for i in _subset(len(files), entry, seed, name)]
    return _conform(load_images(files, size), size, channels)


def _source_meta(entry: Mapping) -> dict:
    """What defines a source's data (its description, licence, citation and URL stay in the
    sources file, named by ``sources_file`` in meta.json: editing them reruns nothing)."""
    meta = {
        "source": entry["name"],
        "filename": entry["filename"],
        "md5": entry.get("md5"),
        "sha256": entry.get("sha256"),
    }
    for key in ("subsample", "limit", "subdir"):
        if entry.get(key) is not None:
            meta[key] = entry[key]
    return meta


def prepare_paper_data(
    raw_dir: Path | str, out_dir: Path | str, sources: Mapping, **kwargs
) -> dict:
    """Prepare the paper-scale data in ``out_dir``, staged in a temporary folder renamed into
    place at the end: a corrupt archive met halfway leaves ``out_dir`` as it was (never new ID
    arrays beside an older ``meta.json``). Parameters: :func:`_prepare_paper_data`."""
    with staged_directory(out_dir) as tmp:
        return _prepare_paper_data(raw_dir, tmp, sources, **kwargs)


def _prepare_paper_data(
    raw_dir: Path | str,
    out_dir: Path | str,
    sources: Mapping,
    *,
    seed: int,
    val_fraction: float,
    id_dataset: str = "cifar10",
    ood_test: Iterable[str] | None = None,
    ood_val_size: int | None = None,
    image_size: int = 32,
    verify_checksums: bool = True,
    sources_file: str | None = None,
) -> dict:
    """Turn downloaded raw files into the prepared layout of :mod:`softmax_ood.data`.

    Writes ``id_{train,val,test}_{x,y}.npy`` (x float32 ``(N, C, S, S)`` in [0, 1], y int64),
    one ``ood_<name>_x.npy`` per OOD test set, ``oodval_gaussian_x.npy`` and ``meta.json``.
    The validation split is carved from the official *training* set (stratified, seeded); the
    official test set is the ID test split.

    :param raw_dir: folder holding each source's ``filename`` (see :func:`fetch_sources`);
        image-folder archives are extracted once into ``raw_dir/extracted/<name>-<checksum>``.
    :param sources: ``{name: entry}`` (or the whole config from :func:`load_paper_config`).
    :param id_dataset: the in-distribution data: a ``cifar-python`` source (stored 3 x 32 x 32)
        or an MNIST data set, the four ``mnist-idx`` sources of that ``dataset`` (stored
        1 x 28 x 28, the digits' own size: every model family and the featurizers take any size).
        OOD sets are converted to the ID format (:func:`_conform`).
    :param ood_test: OOD test set names; default: the config's ``ood_test`` list if ``sources``
        is a whole config, else every source with ``role: ood``.
    :param ood_val_size: size of the Gaussian OOD validation set (default: the ID val size).
    :param verify_checksums: re-check the recorded checksums of the raw files before use.
    :param sources_file: the sources file the entries came from, named in ``meta.json`` (where
        each source's description, licence, citation and URL are).
    :returns: the metadata written to ``meta.json``.
    """
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction={val_fraction} must be in (0, 1)")
    srcs = _as_sources(sources)
    ood_test, id_names, id_format = _selection(sources, srcs, id_dataset, ood_test, image_size)
    channels = ID_FORMATS[id_format][1]
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    num_classes, meta_sources, meta_splits, mean, std = _write_id_splits(
        raw_dir, out_dir, srcs, id_dataset, id_names, seed, val_fraction, verify_checksums
    )
    for name in ood_test:
        entry = srcs[name]
        x = _read_ood(
            raw_dir, entry, image_size, seed, verify_checksums, raw_dir / "extracted", channels
        )
        save_array(out_dir / f"ood_{name}_x.npy", _to_chw(x))
        meta_splits[f"ood_{name}"] = int(len(x))
        meta_sources[name] = _source_meta(entry)
        log.info("OOD test set %s: %d images", name, len(x))
    n_val_ood = int(ood_val_size) if ood_val_size is not None else meta_splits["id_val"]
    meta_splits["oodval_gaussian"] = n_val_ood
    meta_sources["gaussian"] = _write_gaussian_val(out_dir, seed, n_val_ood, channels, image_size)
    meta = {
        "id_dataset": id_dataset,
        "num_classes": int(num_classes),
        "channels": int(channels),
        "image_size": int(image_size),
        "mean": mean,
        "std": std,
        "seed": int(seed),
        "val_fraction": float(val_fraction),
        "splits": meta_splits,
        "ood_test": ood_test,
        "ood_val": ["gaussian"],
        "sources": meta_sources,
        "sources_file": sources_file,
        "preprocessing": PREPROCESSING[id_format],
    }
    record_file_hashes(out_dir, meta)
    write_json(out_dir / "meta.json", meta)
    return meta


def _selection(
    sources: Mapping,
    srcs: dict[str, dict],
    id_dataset: str,
    ood_test: Iterable[str] | None,
    image_size: int,
) -> tuple[list[str], list[str], str]:
    """What :func:`_prepare_paper_data` prepares, checked: ``(ood_test, id_names, id_format)``,
    the OOD test set names (the default of ``ood_test`` resolved), the source entries of the ID
    data (:func:`source_names`) and their format (a key of :data:`ID_FORMATS`, whose size
    ``image_size`` must be)."""
    config_ood = (
        list(sources.get("ood_test") or [])
        if isinstance(sources, Mapping) and "sources" in sources
        else None
    )
    if ood_test is None:
        ood_test = (
            config_ood if config_ood else [n for n, e in srcs.items() if e.get("role") == "ood"]
        )
    ood_test = list(ood_test)
    if not ood_test:
        raise ValueError("no OOD test sets selected")
    id_names = source_names(srcs, id_dataset)
    id_format = srcs[id_names[0]]["format"]
    if id_format not in ID_FORMATS:
        raise ValueError(
            f"in-distribution source {id_dataset!r} must have format "
            f"{' or '.join(sorted(ID_FORMATS))}, not {id_format}"
        )
    native = ID_FORMATS[id_format][0]
    if image_size != native:
        raise ValueError(
            f"the paper-scale {id_dataset} data is stored at its own size, {native}x{native}; "
            f"data.image_size is {image_size}"
        )
    for name in ood_test:
        _lookup(srcs, name)
    if id_dataset in ood_test or "gaussian" in ood_test:
        raise ValueError(f"OOD test sets {ood_test} may not include {id_dataset!r} or 'gaussian'")
    return ood_test, id_names, id_format


def _write_id_splits(
    raw_dir: Path,
    out_dir: Path,
    srcs: dict[str, dict],
    id_dataset: str,
    id_names: list[str],
    seed: int,
    val_fraction: float,
    verify_checksums: bool,
) -> tuple[int, dict, dict, list[float], list[float]]:
    """Read the in-distribution data and write its three splits: the official training set
    split into train and a stratified, seeded ``val_fraction``, the official test set.

    :returns: ``(num_classes, meta_sources, meta_splits, mean, std)``: the ID sources' entries
        for ``meta.json`` (:func:`_source_meta`), each split's size (``id_<split>``), and the
        per-channel mean and standard deviation of the train split."""
    from sklearn.model_selection import train_test_split

    if srcs[id_names[0]]["format"] == "cifar-python":
        id_entry = srcs[id_dataset]
        which = id_entry["which"]
        num_classes = _CIFAR[which][4]
        train_x, train_y, test_x, test_y = read_cifar_python(
            _checked_raw(raw_dir, id_entry, verify_checksums), which
        )
        meta_sources = {id_dataset: _source_meta(id_entry)}
    else:
        train_x, train_y, test_x, test_y = _read_mnist(srcs, id_names, raw_dir, verify_checksums)
        num_classes = 10
        meta_sources = {n: _source_meta(srcs[n]) for n in id_names}
    idx_train, idx_val = train_test_split(
        np.arange(len(train_y)), test_size=val_fraction, stratify=train_y, random_state=seed
    )
    idx_train, idx_val = np.sort(idx_train), np.sort(idx_val)
    splits = {
        "train": (train_x[idx_train], train_y[idx_train]),
        "val": (train_x[idx_val], train_y[idx_val]),
        "test": (test_x, test_y),
    }
    meta_splits = {}
    mean = std = None
    for split, (x, y) in splits.items():
        xf = _to_chw(x)
        save_array(out_dir / f"id_{split}_x.npy", xf)
        save_array(out_dir / f"id_{split}_y.npy", y.astype(np.int64))
        meta_splits[f"id_{split}"] = int(len(y))
        if split == "train":
            mean = [float(v) for v in xf.mean(axis=(0, 2, 3), dtype=np.float64)]
            std = [float(v) for v in xf.std(axis=(0, 2, 3), dtype=np.float64)]
    return num_classes, meta_sources, meta_splits, mean, std


def _write_gaussian_val(out_dir: Path, seed: int, n: int, channels: int, image_size: int) -> dict:
    """Write the OOD validation set ``oodval_gaussian_x.npy``: ``n`` images of
    :data:`GAUSSIAN_VAL` in the ID format, from the seed's own stream for it; returns its
    ``meta.json`` sources entry."""
    rng = _stream(seed, "oodval:gaussian")
    noise = np.clip(rng.normal(0.5, 0.25, size=(n, channels, image_size, image_size)), 0.0, 1.0)
    save_array(out_dir / "oodval_gaussian_x.npy", noise.astype(np.float32))
    return {"source": f"generated: {GAUSSIAN_VAL}", "licence": "n/a (synthetic)"}


def _read_mnist(
    srcs: Mapping, names: list[str], raw_dir: Path, verify_checksums: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four MNIST IDX files (``names`` in :data:`MNIST_PARTS` order) as
    ``(train_x, train_y, test_x, test_y)``; x uint8 ``(N, 28, 28, 1)``, y int64."""
    arrays = [read_mnist_idx(_checked_raw(raw_dir, srcs[n], verify_checksums)) for n in names]
    for n, a in zip(names, arrays, strict=True):
        want = srcs[n].get("decoded_sha256")
        if want and verify_checksums:
            if array_sha256(a) != want:
                raise DownloadError(
                    f"{raw_dir / srcs[n]['filename']} decodes to an array whose sha256 is "
                    f"{array_sha256(a)}, not the {want} recorded for {n}; delete it and download "
                    "it again"
                )
    train_x, train_y, test_x, test_y = arrays
    for (x, y), split in (((train_x, train_y), "train"), ((test_x, test_y), "test")):
        if x.ndim != 3 or x.shape[1:] != (28, 28) or y.ndim != 1 or len(x) != len(y):
            raise ValueError(
                f"MNIST {split} files hold images {x.shape} and labels {y.shape}; expected "
                "(N, 28, 28) images and N labels"
            )
        if len(y) and y.max() > 9:
            raise ValueError(f"MNIST {split} labels outside 0..9")
    return (
        train_x[..., None],
        train_y.astype(np.int64),
        test_x[..., None],
        test_y.astype(np.int64),
    )
