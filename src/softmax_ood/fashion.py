"""Fashion-MNIST as a core dataset (``data.dataset: fashion``).

ID data: Zalando's Fashion-MNIST (60,000 train + 10,000 test images of 28x28, 10 classes), the
four IDX files of ``config/paper_sources.yaml`` (entries ``fashion_*``, ``dataset: fashion``).
They are read from Debian's package ``dataset-fashion-mnist`` where it is installed (the entry's
``installed`` path), elsewhere from ``data/raw/`` where the workflow's ``download_source`` rule
put the upstream files (checked against their published md5). Debian recompressed the ``.gz``
files, so their bytes differ from upstream's; what is verified for both sources is the sha256 of
the DECODED uint8 array (``decoded_sha256``), so ``data/fashion`` is byte-identical whichever
source it was read from (:func:`read_fashion`).

Splits (:func:`make_fashion_dataset`): ``id_val`` is a stratified, seeded ``val_fraction`` of the
official training set, ``id_train`` the rest, ``id_test`` the official test set. ``id_classes``
(default config: every class but Shirt, 6) are in-distribution, relabelled 0..k-1 in that order;
the held-out classes' official test images are the near-OOD set ``heldout_classes`` (as the
digits' ``heldout_digits``), their training images are not used.

The far-OOD sets (:data:`FASHION_OOD_SETS`: cue-separable and cue-matched) are built by
:mod:`softmax_ood.farsets`; their names can be imported from here as well.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .data import (
    record_file_hashes,
    save_array,
    staged_directory,
    write_json,
)
from .errors import MissingDataError
from .farsets import (
    _PHOTOS_TEST,
    _PHOTOS_VAL,
    CUE_CONTROL,
    CUE_REMOVED,
    CUE_SEPARABLE,
    FASHION_OOD_SETS,
    FASHION_VAL_SETS,
    GLYPH_VAL_CHARS,
    MATCHED,
    SIZE,
    build_ood,
    build_ood_checked,
    drop_duplicates_and_blanks,
    match_histograms,
    remove_cue,
    set_group,
)
from .imagesources import LICENCES, TEXTURES
from .paper_data import array_sha256, read_mnist_idx

__all__ = [
    "CUE_CONTROL",
    "CUE_REMOVED",
    "CUE_SEPARABLE",
    "FASHION_CLASSES",
    "MATCHED",
    "FASHION_OOD_SETS",
    "FASHION_VAL_SETS",
    "GLYPH_VAL_CHARS",
    "PACKAGE",
    "SIZE",
    "array_sha256",
    "build_ood",
    "build_ood_checked",
    "drop_duplicates_and_blanks",
    "fashion_entries",
    "match_histograms",
    "remove_cue",
    "set_group",
    "fashion_paths",
    "make_fashion_dataset",
    "read_fashion",
]

log = logging.getLogger(__name__)

PACKAGE = "dataset-fashion-mnist"
INSTALL = f"apt-get install {PACKAGE}"
FASHION_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


# --------------------------------------------------------------------------- reading
def fashion_paths(entries: Mapping[str, Mapping], raw_dir: Path | str) -> dict[str, Path]:
    """Where each of the four files is read from: the Debian package's file (the entry's
    ``installed``) where it exists, else ``raw_dir/<filename>`` (the checked download).
    ``entries``: part (:data:`softmax_ood.paper_data.MNIST_PARTS`) -> source entry."""
    out = {}
    for part, e in entries.items():
        inst = e.get("installed")
        out[part] = Path(inst) if inst and Path(inst).is_file() else Path(raw_dir) / e["filename"]
    return out


def read_fashion(entries: Mapping[str, Mapping], raw_dir: Path | str) -> dict[str, np.ndarray]:
    """The four arrays (part -> uint8), each verified against its entry's ``decoded_sha256``.

    :raises MissingDataError: one sentence with the install command when neither the package's
        file nor a download is there.
    :raises ValueError: a decoded array whose sha256 differs from the recorded one.
    """
    out = {}
    for part, path in fashion_paths(entries, raw_dir).items():
        e = entries[part]
        if not path.is_file():
            raise MissingDataError(
                f"Fashion-MNIST's {e['filename']} is neither installed ({e.get('installed')}) "
                f"nor downloaded ({path}); install Debian's package with `{INSTALL}` or let "
                f"the workflow download it from {e['url']}"
            )
        arr = read_mnist_idx(path)
        got, want = array_sha256(arr), e.get("decoded_sha256")
        if not want:
            log.warning("%s has no decoded_sha256 in the sources file; used unverified", path)
        elif got != want:
            raise ValueError(
                f"{path} decodes to an array whose sha256 is {got}, not the {want} recorded for "
                f"Fashion-MNIST's {part} in the sources file; the file is not the published data"
            )
        log.info("Fashion-MNIST %s: %s %s (decoded sha256 verified)", part, path, arr.shape)
        out[part] = arr
    return out


# --------------------------------------------------------------------------- the dataset
def _sources_meta(name: str) -> dict:
    from .data import _sources as digits_sources

    # a matched set or a control has its base set's sources
    base = CUE_REMOVED.get(name, (name.removesuffix("_matched"),))[0]
    desc = FASHION_OOD_SETS[name]
    if base in ("digits", "digits_val"):
        return {
            "source": f"scikit-learn load_digits: {desc}",
            "licence": "CC BY 4.0 (UCI Machine Learning Repository)",
        }
    if base.startswith("glyphs"):
        return {**digits_sources("glyphs"), "source": desc}
    images = {"photos": _PHOTOS_TEST, "photos_val": _PHOTOS_VAL, "textures": TEXTURES}.get(base)
    if images is None:
        licence = "n/a (synthetic)"
        if name in MATCHED:
            licence += "; grey levels from Fashion-MNIST (MIT)"
        return {"source": f"generated: {desc}", "licence": licence}
    return {
        "source": f"scikit-image sample data: {desc}",
        "licence": "; ".join(f"{s}: {LICENCES[s]}" for s in images),
    }


def make_fashion_dataset(
    out_dir: Path | str, sources: Mapping, raw_dir: Path | str, **kwargs
) -> dict:
    """Build ``data/fashion`` in ``out_dir``, staged in a temporary folder renamed into place at
    the end (parameters: :func:`_build_fashion`)."""
    with staged_directory(out_dir) as tmp:
        return _build_fashion(tmp, sources, raw_dir, **kwargs)


def fashion_entries(sources: Mapping) -> dict[str, dict]:
    """part -> source entry of the four ``fashion`` IDX files of a sources file (or its
    ``{name: entry}`` dict)."""
    from .paper_data.sources import _as_sources, source_names

    srcs = _as_sources(sources)
    return {srcs[n]["part"]: srcs[n] for n in source_names(srcs, "fashion")}


def _build_fashion(
    out_dir: Path | str,
    sources: Mapping,
    raw_dir: Path | str,
    *,
    seed: int,
    val_fraction: float,
    ood_size: int,
    ood_test: list[str],
    ood_val: list[str],
    id_classes: list[int] | None = None,
    image_size: int = SIZE,
    sources_file: str | None = None,
) -> dict:
    """Write the prepared layout of :mod:`softmax_ood.data` for Fashion-MNIST.

    :param sources: the sources file (loaded) or its ``{name: entry}`` dict; the four
        ``fashion`` entries give the files, the Debian path and the decoded digests.
    :param raw_dir: where downloaded files are (used for a file the package does not provide).
    :param sources_file: the sources file the entries came from, named in ``meta.json``.
    :param id_classes: the in-distribution classes (relabelled 0..k-1 in this order; default all
        ten); the others' official test images are ``heldout_classes``.
    :param ood_size: images per generated OOD set (the digit sets have their fixed share of the
        1,797 digits, ``heldout_classes`` every held-out test image).
    :returns: the metadata written to ``meta.json``.
    :raises ValueError: unknown set names, a validation set among the test sets or vice versa,
        ``heldout_classes`` without held-out classes, an image size other than 28.
    """
    import sklearn

    id_classes, heldout = _checked_request(image_size, ood_test, ood_val, val_fraction, id_classes)
    out_dir = Path(out_dir)
    entries = fashion_entries(sources)
    meta_splits, train_f, heldout_x = _write_id_splits(
        out_dir, read_fashion(entries, raw_dir), id_classes, seed, val_fraction
    )
    mean = [float(train_f.mean(dtype=np.float64))]
    std = [float(train_f.std(dtype=np.float64))]
    sources_meta = {"fashion": _id_source(entries)}
    sets = [(n, "ood") for n in ood_test] + [(n, "oodval") for n in ood_val]
    f64 = train_f[:, 0].astype(np.float64)
    for name, prefix in sets:
        images, sources_meta[name] = _ood_set(name, ood_size, seed, f64, heldout_x, heldout)
        save_array(out_dir / f"{prefix}_{name}_x.npy", images[:, None].astype(np.float32))
        meta_splits[f"{prefix}_{name}"] = int(len(images))
        log.info("%s set %s: %d images", prefix, name, len(images))
    meta = {
        "id_dataset": "fashion",
        "num_classes": len(id_classes),
        "id_classes": id_classes,
        "class_names": [FASHION_CLASSES[c] for c in id_classes],
        "heldout_classes": heldout,
        "channels": 1,
        "image_size": SIZE,
        "mean": mean,
        "std": std,
        "seed": int(seed),
        "val_fraction": float(val_fraction),
        "splits": meta_splits,
        "ood_test": list(ood_test),
        "ood_val": list(ood_val),
        "sources": sources_meta,
        "sources_file": sources_file,
        "preprocessing": "ID: uint8 / 255 -> float32 (N, 1, 28, 28), unchanged. ID val: "
        "stratified, seeded split of the official training set; ID test: the official test set "
        "(both without the held-out classes). OOD sets: built at 28x28 in [0, 1] on the 1/255 "
        f"grid (see sources; scikit-learn {sklearn.__version__}). Normalisation (x - mean) / "
        "std at load time.",
    }
    record_file_hashes(out_dir, meta)
    write_json(out_dir / "meta.json", meta)
    return meta


def _checked_request(
    image_size: int,
    ood_test: list[str],
    ood_val: list[str],
    val_fraction: float,
    id_classes: list[int] | None,
) -> tuple[list[int], list[int]]:
    """The arguments of :func:`_build_fashion` checked (raising its ``ValueError``): the ID
    classes (default all ten) and the held-out ones, ``(id_classes, heldout)``."""
    if image_size != SIZE:
        raise ValueError(
            f"Fashion-MNIST is stored at its own size, 28x28; data.image_size is {image_size}"
        )
    unknown = sorted((set(ood_test) | set(ood_val)) - set(FASHION_OOD_SETS))
    if unknown:
        raise ValueError(
            f"unknown Fashion-MNIST OOD set(s) {unknown}; expected any of {sorted(FASHION_OOD_SETS)}"
        )
    wrong_test = [n for n in ood_test if n in FASHION_VAL_SETS]
    wrong_val = [n for n in ood_val if n not in FASHION_VAL_SETS]
    if wrong_test or wrong_val:
        raise ValueError(
            f"data.ood_test may not list the validation sets {wrong_test} and data.ood_val may "
            f"list only {list(FASHION_VAL_SETS)} (not {wrong_val}): their images are kept "
            "disjoint from the test sets'"
        )
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction={val_fraction} must be in (0, 1)")
    id_classes = list(range(10)) if id_classes is None else [int(c) for c in id_classes]
    if (
        len(set(id_classes)) != len(id_classes)
        or not set(id_classes) <= set(range(10))
        or len(id_classes) < 2
    ):
        raise ValueError(f"id_classes={id_classes} must be at least two distinct classes 0-9")
    heldout = sorted(set(range(10)) - set(id_classes))
    if "heldout_classes" in ood_test and not heldout:
        raise ValueError(
            "the OOD set heldout_classes needs held-out classes, but id_classes lists all ten"
        )
    return id_classes, heldout


def _id_source(entries: Mapping[str, Mapping]) -> dict:
    """``meta.json``'s sources entry of the ID data: what it is and, per part, the file's name,
    checksums and Debian path (``entries``: part -> source entry, :func:`fashion_entries`)."""
    return {
        "source": "Fashion-MNIST (Zalando Research): 60,000 train + 10,000 test 28x28 grey "
        f"images, 10 classes; Debian package {PACKAGE} or the upstream files, verified by "
        "the sha256 of the decoded arrays",
        # licence, citation and URLs: the fashion entries of the sources file (sources_file)
        "files": {
            part: {k: e.get(k) for k in ("filename", "md5", "decoded_sha256", "installed")}
            for part, e in entries.items()
        },
    }


def _chw(x: np.ndarray) -> np.ndarray:
    """uint8 ``(N, 28, 28)`` -> float32 ``(N, 1, 28, 28)`` in [0, 1]."""
    return (np.asarray(x, dtype=np.float32) / np.float32(255.0))[:, None]


def _write_id_splits(
    out_dir: Path,
    a: Mapping[str, np.ndarray],
    id_classes: list[int],
    seed: int,
    val_fraction: float,
) -> tuple[dict, np.ndarray, np.ndarray]:
    """Write the ID splits of the four arrays ``a`` (:func:`read_fashion`): train and val from
    the official training set, test the official test set, each without the held-out classes
    and relabelled (``id_classes`` -> 0..k-1).

    :returns: ``(meta_splits, train_f, heldout_x)``: each split's size (``id_<split>``), the
        train split as written (float32 ``(N, 1, 28, 28)``) and the held-out classes' official
        test images (uint8)."""
    from sklearn.model_selection import train_test_split

    train_x, train_y = a["train_images"], a["train_labels"].astype(np.int64)
    test_x, test_y = a["test_images"], a["test_labels"].astype(np.int64)
    relabel = np.full(10, -1, dtype=np.int64)
    relabel[id_classes] = np.arange(len(id_classes))

    # the validation split is carved from the whole official training set, stratified over all
    # ten classes (the held-out classes' share is then dropped), as the digits' split is
    idx_train, idx_val = train_test_split(
        np.arange(len(train_y)), test_size=val_fraction, stratify=train_y, random_state=seed
    )
    splits = {"train": np.sort(idx_train), "val": np.sort(idx_val)}
    splits = {s: i[relabel[train_y[i]] >= 0] for s, i in splits.items()}
    arrays = {s: (train_x[i], train_y[i]) for s, i in splits.items()}
    keep = relabel[test_y] >= 0
    arrays["test"] = (test_x[keep], test_y[keep])

    meta_splits = {}
    for split, (x, y) in arrays.items():
        save_array(out_dir / f"id_{split}_x.npy", _chw(x))
        save_array(out_dir / f"id_{split}_y.npy", relabel[y])
        meta_splits[f"id_{split}"] = int(len(y))
    return meta_splits, _chw(arrays["train"][0]), test_x[~keep]


def _ood_set(
    name: str, n: int, seed: int, train_x: np.ndarray, heldout_x: np.ndarray, heldout: list[int]
) -> tuple[np.ndarray, dict]:
    """The OOD set ``name`` (float64 ``(m, 28, 28)`` in [0, 1]) and its ``meta.json`` sources
    entry: ``heldout_classes`` is every held-out test image ``heldout_x`` (classes
    ``heldout``), any other set is built (:func:`build_ood_checked`, ``n`` images from the ID
    training images ``train_x``)."""
    if name == "heldout_classes":
        images = heldout_x.astype(np.float64) / 255.0
        return images, {
            "source": FASHION_OOD_SETS[name]
            + ": "
            + ", ".join(FASHION_CLASSES[c] for c in heldout),
            "licence": "Fashion-MNIST's (the fashion entries of the sources file)",
        }
    images, dropped = build_ood_checked(name, n, seed, train_x)
    return images, {
        **_sources_meta(name),
        "group": set_group(name),
        "dropped": dropped,  # blank / repeated images left out
    }
