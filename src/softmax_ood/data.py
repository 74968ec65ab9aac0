"""Prepared-data layout, the embedded offline dataset, and loading.

Every dataset the workflow uses (embedded default or paper scale) is written to one directory
with the same layout, so training and evaluation never care where the data came from:

``id_{train,val,test}_x.npy``
    float32 ``(N, C, H, W)`` images in ``[0, 1]`` (not normalised).
``id_{train,val,test}_y.npy``
    int64 labels.
``ood_<name>_x.npy``
    one float32 array per OOD *test* set, preprocessed exactly like the ID images.
``oodval_<name>_x.npy``
    OOD *validation* sets (used for tuning only, never reported as test results).
``meta.json``
    sources, licences, split sizes, and the per-channel ``mean``/``std`` of the train split.

All arrays are written with :func:`numpy.save` (deterministic bytes; ``np.savez`` embeds zip
timestamps) through a temporary file and :func:`os.replace`, so a failed run leaves no
half-written file.

The embedded default (:func:`make_embedded_dataset`) is fully offline and real:

* ID: scikit-learn's handwritten digits (UCI optdigits, 1797 images of 8x8, 17 grey levels).
* ID classes: ``id_classes`` of the ten digits (default config: 0-4). The other digits'
  test-split images are the near-OOD set ``heldout_digits`` (held-out classes: same
  preprocessing, same writers, same split; the hardest and most realistic shift here).
* Far OOD: crops of scikit-image's sample images (CC0 textures, public-domain/CC0 photos, printed
  text), brought through the *digits' own preprocessing*: a 32x32 crop is reduced by 4x4 block
  averaging to 8x8 and quantised to the 17 grey levels 0..16, as the optdigits bitmaps were;
  plus Gaussian and uniform noise quantised the same way.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ArtifactError, MissingDataError, rebuild_hint
from .imagesources import (
    CHARACTERS,
    GLYPH_CHARS,
    GLYPH_FONTS,
    LICENCES,
    PHOTOS,
    TEXTURES,
    font_dir,
    grey_image,
)
from .provenance import path_sha256, write_bytes_atomic

__all__ = [
    "EMBEDDED_OOD_SETS",
    "record_file_hashes",
    "staged_directory",
    "MissingDataError",
    "PreparedData",
    "load_prepared",
    "make_embedded_dataset",
    "save_array",
    "write_json",
]

ID_SPLITS = ("train", "val", "test")
LEVELS = 16  # optdigits: each 8x8 pixel counts the "on" pixels of a 4x4 block -> 0..16

EMBEDDED_OOD_SETS = {
    "textures": "32x32 crops of scikit-image's CC0 brick, grass and gravel textures",
    "photos": "32x32 crops of scikit-image's public-domain/CC0 photos",
    "characters": "32x32 crops of scikit-image's printed text ('text', 'page'), inverted to "
    "bright ink on dark ground like the digits",
    "gaussian": "Gaussian noise N(0.5, 0.25^2) per pixel, clipped to [0, 1]",
    "uniform": "uniform noise U[0, 1] per pixel",
    "glyphs": "letters and symbols rendered from the DejaVu fonts shipped with matplotlib, "
    "size-normalised like the optdigits bitmaps (32x32, full height, centred), then the "
    "digits' preprocessing; letters that resemble a digit are left out",
    "textures_ink": "scikit-image CC0 textures (brick, grass, gravel), smoothed, binarised to "
    "digit-like ink inside a digit-shaped ellipse with empty borders, then the digits' "
    "preprocessing",
    "photos_ink": "scikit-image public-domain/CC0 photos, smoothed, binarised to digit-like ink "
    "inside a digit-shaped ellipse with empty borders, then the digits' preprocessing",
    "heldout_digits": "near OOD: the test-split digits of the classes not in id_classes "
    "(same preprocessing, same split as the ID test set)",
    "gaussian_val": "Gaussian noise N(0.5, 0.25^2), an independent draw used only for validation "
    "(the LogitNorm paper tunes on Gaussian noise)",
}


# --------------------------------------------------------------------------- writing helpers
def save_array(path: Path | str, array: np.ndarray) -> None:
    """Write ``array`` to ``path`` with :func:`numpy.save`, atomically (temp file + rename)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    write_bytes_atomic(path, buf.getvalue())


def write_json(path: Path | str, obj) -> None:
    """Write ``obj`` as canonical JSON (sorted keys, indent 2, trailing newline), atomically."""
    text = json.dumps(obj, sort_keys=True, indent=2, allow_nan=False) + "\n"
    write_bytes_atomic(path, text.encode())


@contextmanager
def staged_directory(out_dir: Path | str) -> Iterator[Path]:
    """Build a dataset folder in a temporary sibling and rename it into place at the end.

    A failure halfway (a corrupt archive, Ctrl-C) deletes the temporary folder and leaves
    ``out_dir`` as it was: never new arrays beside an older ``meta.json``."""
    final = Path(out_dir)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
        old = final.parent / f".{final.name}.old-{os.getpid()}"
        if final.exists():
            os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- preprocessing
def quantise(x: np.ndarray, levels: int = LEVELS) -> np.ndarray:
    """Round ``x`` in [0, 1] to ``levels + 1`` grey levels, as the optdigits bitmaps are."""
    return np.round(np.clip(x, 0.0, 1.0) * levels) / levels


def block_reduce(img: np.ndarray, factor: int) -> np.ndarray:
    """Mean over non-overlapping ``factor`` x ``factor`` blocks (optdigits' 4x4 counting)."""
    h, w = img.shape
    return img.reshape(h // factor, factor, w // factor, factor).mean(axis=(1, 3))


def resize_images(x: np.ndarray, size: int) -> np.ndarray:
    """Resize a stack ``(N, H, W)`` to ``(N, size, size)`` with bilinear interpolation."""
    if x.shape[-1] == size:
        return x
    from skimage.transform import resize

    out = np.stack([resize(im, (size, size), order=1, anti_aliasing=True) for im in x])
    return out.astype(x.dtype)


def _crops(
    images: list[np.ndarray],
    n: int,
    rng: np.random.Generator,
    *,
    crop: int = 32,
    invert: bool = False,
    min_std: float = 0.0,
) -> np.ndarray:
    """``n`` random ``crop``-sized patches, each randomly flipped / rotated by 90 degrees, reduced
    by 4x4 block averaging to 8x8 and quantised to 17 levels (the digits' preprocessing)."""
    out = np.empty((n, crop // 4, crop // 4), dtype=np.float64)
    k = 0
    tries = 0
    while k < n:
        tries += 1
        if tries > 50 * n:
            raise RuntimeError(f"could not cut {n} informative crops (min_std={min_std})")
        img = images[k % len(images)]
        r = rng.integers(0, img.shape[0] - crop + 1)
        c = rng.integers(0, img.shape[1] - crop + 1)
        patch = img[r : r + crop, c : c + crop]
        if invert:
            patch = 1.0 - patch
        patch = np.rot90(patch, k=int(rng.integers(4)))
        if rng.integers(2):
            patch = patch[:, ::-1]
        if patch.std() < min_std:
            continue
        out[k] = quantise(block_reduce(np.ascontiguousarray(patch), 4))
        k += 1
    return out


def _size_normalise(bits: np.ndarray, size: int = 32) -> np.ndarray:
    """A binary glyph cropped to its ink box, scaled to the full ``size`` height (the width
    follows the aspect ratio, at most ``size``) and centred, as the optdigits bitmaps are."""
    from skimage.transform import resize

    rows, cols = np.nonzero(bits)
    box = bits[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1].astype(np.float64)
    h, w = box.shape
    scale = min(size / h, size / w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = resize(box, (nh, nw), order=1, anti_aliasing=True) > 0.5
    out = np.zeros((size, size), dtype=bool)
    r0, c0 = (size - nh) // 2, (size - nw) // 2
    out[r0 : r0 + nh, c0 : c0 + nw] = small
    return out


def _glyphs(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` glyphs (a random character in a random DejaVu face, slightly rotated), binarised,
    size-normalised to 32x32 as the optdigits bitmaps are, then the digits' 4x4 block mean and
    17 grey levels."""
    from PIL import Image, ImageDraw, ImageFont

    fonts = [ImageFont.truetype(str(font_dir() / f), 96) for f in GLYPH_FONTS]
    out = np.empty((n, 8, 8), dtype=np.float64)
    k = 0
    while k < n:
        ch = GLYPH_CHARS[int(rng.integers(len(GLYPH_CHARS)))]
        face = int(rng.integers(len(fonts)))
        font = fonts[face]
        img = Image.new("L", (192, 192), 0)
        ImageDraw.Draw(img).text((40, 30), ch, fill=255, font=font)
        img = img.rotate(float(rng.uniform(-12, 12)), resample=Image.BILINEAR)
        bits = np.asarray(img) > 127
        if bits.sum() < 20:
            continue
        glyph = _size_normalise(bits)
        out[k] = quantise(block_reduce(glyph.astype(np.float64), 4))
        k += 1
    return out


def _ink_crops(images: list[np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` crops binarised to digit-like ink: a random square crop (48-128 pixels) is resized
    to 32x32 and smoothed (sigma 2.5 pixels, so ink comes in strokes and blobs, not salt), then its
    brightest share ``U(0.38, 0.55)`` of the pixels inside a digit-shaped rounded box (a
    superellipse of full height, width 20-30 of 32) becomes ink; everything outside it stays empty. Then the digits'
    4x4 block mean and 17 grey levels."""
    from scipy.ndimage import gaussian_filter
    from skimage.transform import resize

    rr, cc = np.mgrid[0:32, 0:32] + 0.5
    out = np.empty((n, 8, 8), dtype=np.float64)
    for k in range(n):
        img = images[k % len(images)]
        c = int(rng.integers(48, min(128, *img.shape) + 1))
        r0 = int(rng.integers(0, img.shape[0] - c + 1))
        c0 = int(rng.integers(0, img.shape[1] - c + 1))
        patch = resize(img[r0 : r0 + c, c0 : c0 + c], (32, 32), order=1, anti_aliasing=True)
        patch = np.rot90(gaussian_filter(patch, 2.5), k=int(rng.integers(4)))
        if rng.integers(2):
            patch = 1.0 - patch
        half_w = float(rng.uniform(10, 15))
        mask = ((rr - 16) / 16) ** 4 + ((cc - 16) / half_w) ** 4 <= 1.0
        level = np.quantile(patch[mask], 1.0 - float(rng.uniform(0.38, 0.55)))
        ink = (patch > level) & mask
        out[k] = quantise(block_reduce(ink.astype(np.float64), 4))
    return out


def _embedded_ood(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if name == "textures":
        return _crops([grey_image(s) for s in TEXTURES], n, rng)
    if name == "photos":
        return _crops([grey_image(s) for s in PHOTOS], n, rng)
    if name == "characters":
        return _crops([grey_image(s) for s in CHARACTERS], n, rng, invert=True, min_std=0.12)
    if name == "glyphs":
        return _glyphs(n, rng)
    if name == "textures_ink":
        return _ink_crops([grey_image(s) for s in TEXTURES], n, rng)
    if name == "photos_ink":
        return _ink_crops([grey_image(s) for s in PHOTOS], n, rng)
    if name in ("gaussian", "gaussian_val"):
        return quantise(rng.normal(0.5, 0.25, size=(n, 8, 8)))
    if name == "uniform":
        return quantise(rng.uniform(0.0, 1.0, size=(n, 8, 8)))
    raise ValueError(
        f"unknown embedded OOD set {name!r}; expected one of {sorted(EMBEDDED_OOD_SETS)}"
    )


def _sources(name: str) -> dict:
    if name == "heldout_digits":
        return {
            "source": "scikit-learn load_digits: " + EMBEDDED_OOD_SETS[name],
            "licence": "CC BY 4.0 (UCI Machine Learning Repository)",
        }
    if name == "glyphs":
        return {
            "source": "DejaVu fonts shipped with matplotlib "
            f"({', '.join(GLYPH_FONTS)}); characters {GLYPH_CHARS!r}; {EMBEDDED_OOD_SETS[name]}",
            "licence": "Bitstream Vera Fonts licence (free use, modification and redistribution); "
            "DejaVu changes in the public domain (matplotlib's mpl-data/fonts/ttf/LICENSE_DEJAVU)",
        }
    images = {
        "textures": TEXTURES,
        "photos": PHOTOS,
        "characters": CHARACTERS,
        "textures_ink": TEXTURES,
        "photos_ink": PHOTOS,
    }.get(name)
    if images is None:
        return {"source": f"generated: {EMBEDDED_OOD_SETS[name]}", "licence": "n/a (synthetic)"}
    return {
        "source": f"scikit-image sample data: {', '.join(images)}; {EMBEDDED_OOD_SETS[name]}",
        "licence": "; ".join(f"{s}: {LICENCES[s]}" for s in images),
    }


def make_embedded_dataset(out_dir: Path | str, **kwargs) -> dict:
    """Build the offline default dataset (digits vs. scikit-image crops and noise) in
    ``out_dir``, staged in a temporary folder renamed into place at the end (see
    :func:`_build_embedded` for the parameters)."""
    with staged_directory(out_dir) as tmp:
        return _build_embedded(tmp, **kwargs)


def _build_embedded(
    out_dir: Path | str,
    *,
    image_size: int,
    seed: int,
    val_fraction: float,
    test_fraction: float,
    ood_size: int,
    ood_test: list[str],
    ood_val: list[str],
    id_classes: list[int] | None = None,
) -> dict:
    """Build the offline default dataset (digits vs. scikit-image crops and noise) in ``out_dir``.

    :param image_size: side length of the stored images (8 is the digits' native size).
    :param seed: seeds the stratified ID split and every OOD draw.
    :param id_classes: the digits that are in-distribution (labels renumbered 0..k-1 in this
        order; default all ten). The split is made on all ten digits, stratified, before the
        classes are separated, so the held-out digits' test images (``heldout_digits``) come
        from the same split as the ID test set.
    :param val_fraction: fraction of all digits held out for validation (temperature fitting,
        checkpoint choice); ``test_fraction`` likewise for the test split.
    :param ood_size: images per OOD set.
    :returns: the metadata written to ``meta.json``.
    :raises ValueError: for an unknown OOD set name or bad fractions.
    """
    import sklearn
    from sklearn.datasets import load_digits

    id_classes, heldout = _checked_request(
        ood_test, ood_val, val_fraction, test_fraction, id_classes
    )
    out_dir = Path(out_dir)
    digits = load_digits()
    x = digits.images.astype(np.float64) / LEVELS  # (1797, 8, 8) in [0, 1]
    y = digits.target.astype(np.int64)
    meta_splits, mean, std, heldout_test = _write_id_splits(
        out_dir, x, y, id_classes, seed, val_fraction, test_fraction, image_size
    )
    sources = {
        "digits": {
            "source": "scikit-learn load_digits (UCI ML hand-written digits, optdigits test set)",
            "licence": "CC BY 4.0 (UCI Machine Learning Repository), distributed with "
            f"scikit-learn {sklearn.__version__} (BSD-3-Clause)",
        }
    }
    sets = [(n, "ood") for n in ood_test] + [(n, "oodval") for n in ood_val]
    for name, prefix, images in _ood_sets(sets, ood_size, seed, x[heldout_test]):
        save_array(out_dir / f"{prefix}_{name}_x.npy", _stored(images, image_size))
        meta_splits[f"{prefix}_{name}"] = int(len(images))
        sources[name] = _sources(name)

    meta = {
        "id_dataset": "digits",
        "num_classes": len(id_classes),
        "id_classes": id_classes,
        "heldout_classes": heldout,
        "channels": 1,
        "image_size": int(image_size),
        "mean": mean,
        "std": std,
        "seed": int(seed),
        "splits": meta_splits,
        "ood_test": list(ood_test),
        "ood_val": list(ood_val),
        "sources": sources,
        "preprocessing": "ID: digits / 16. OOD crops: 32x32 -> 4x4 block mean -> 8x8 -> "
        "17 grey levels; noise quantised to the same levels; then bilinear resize to "
        f"{image_size}x{image_size}. Normalisation (x - mean) / std at load time.",
    }
    record_file_hashes(out_dir, meta)
    write_json(out_dir / "meta.json", meta)
    return meta


def _checked_request(
    ood_test: list[str],
    ood_val: list[str],
    val_fraction: float,
    test_fraction: float,
    id_classes: list[int] | None,
) -> tuple[list[int], list[int]]:
    """The arguments of :func:`_build_embedded` checked (raising its ``ValueError``): the ID
    digits (default all ten) and the held-out ones, ``(id_classes, heldout)``."""
    unknown = sorted((set(ood_test) | set(ood_val)) - set(EMBEDDED_OOD_SETS))
    if unknown:
        raise ValueError(
            f"unknown embedded OOD set(s) {unknown}; expected any of {sorted(EMBEDDED_OOD_SETS)}"
        )
    if not (0 < val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ValueError(
            f"val_fraction={val_fraction} and test_fraction={test_fraction} must be in (0, 1) "
            "and sum to less than 1"
        )
    id_classes = list(range(10)) if id_classes is None else [int(c) for c in id_classes]
    if len(set(id_classes)) != len(id_classes) or not set(id_classes) <= set(range(10)):
        raise ValueError(f"id_classes={id_classes} must be distinct digits 0-9")
    if len(id_classes) < 2:
        raise ValueError(f"id_classes={id_classes} must name at least two digits")
    heldout = sorted(set(range(10)) - set(id_classes))
    if "heldout_digits" in ood_test and not heldout:
        raise ValueError(
            "the OOD set heldout_digits needs held-out classes, but id_classes lists all ten digits"
        )
    if "heldout_digits" in ood_val:
        raise ValueError("heldout_digits is a test set (the held-out classes' test split)")
    return id_classes, heldout


def _write_id_splits(
    out_dir: Path,
    x: np.ndarray,
    y: np.ndarray,
    id_classes: list[int],
    seed: int,
    val_fraction: float,
    test_fraction: float,
    image_size: int,
) -> tuple[dict, list[float], list[float], np.ndarray]:
    """Write the digits' stratified, seeded train/val/test split, made on all ten digits, of
    the ID digits (relabelled 0..k-1). Returns ``(meta_splits, mean, std, heldout_test)``: each
    split's size, the train split's mean and standard deviation, the held-out digits' test
    indices."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    idx_trval, idx_test = train_test_split(
        idx, test_size=test_fraction, stratify=y, random_state=seed
    )
    idx_train, idx_val = train_test_split(
        idx_trval,
        test_size=val_fraction / (1 - test_fraction),
        stratify=y[idx_trval],
        random_state=seed,
    )
    splits = {"train": np.sort(idx_train), "val": np.sort(idx_val), "test": np.sort(idx_test)}
    relabel = np.full(10, -1, dtype=np.int64)
    relabel[id_classes] = np.arange(len(id_classes))
    heldout_test = splits["test"][relabel[y[splits["test"]]] < 0]
    splits = {s: ids[relabel[y[ids]] >= 0] for s, ids in splits.items()}
    meta_splits = {}
    for split, ids in splits.items():
        save_array(out_dir / f"id_{split}_x.npy", _stored(x[ids], image_size))
        save_array(out_dir / f"id_{split}_y.npy", relabel[y[ids]])
        meta_splits[f"id_{split}"] = int(len(ids))
    train_x = _stored(x[splits["train"]], image_size)
    mean = [float(train_x.mean(dtype=np.float64))]
    std = [float(train_x.std(dtype=np.float64))]
    return meta_splits, mean, std, heldout_test


def _stored(imgs: np.ndarray, image_size: int) -> np.ndarray:
    """Images ``(N, H, W)`` as stored: resized to ``image_size``, float32 ``(N, 1, S, S)``."""
    return resize_images(imgs, image_size)[:, None].astype(np.float32)


def _ood_sets(sets: list[tuple[str, str]], n: int, seed: int, heldout_images: np.ndarray):
    """``(name, prefix, images)`` of each ``(name, prefix)`` of ``sets``: ``heldout_digits`` is
    every held-out test image, any other set ``n`` draws of :func:`_embedded_ood` from its own
    stream of ``seed`` (one independent stream per set name: adding a set never changes the
    others)."""
    names = sorted(EMBEDDED_OOD_SETS)
    streams = dict(zip(names, np.random.SeedSequence(seed).spawn(len(names)), strict=True))
    for name, prefix in sets:
        rng = np.random.default_rng(streams[name])
        if name == "heldout_digits":
            yield name, prefix, heldout_images  # every held-out test image (not ood_size draws)
        else:
            yield name, prefix, _embedded_ood(name, n, rng)


def record_file_hashes(out_dir: Path | str, meta: dict) -> dict:
    """Put the sha256 of every array file in ``out_dir`` into ``meta["files"]`` (the loader
    checks them, so a truncated or swapped file is caught instead of silently used)."""
    out_dir = Path(out_dir)
    meta["files"] = {p.name: path_sha256(p) for p in sorted(out_dir.glob("*.npy"))}
    return meta


# --------------------------------------------------------------------------- loading
@dataclass
class PreparedData:
    """Normalised tensors of one prepared dataset (see the module docstring for the layout)."""

    meta: dict
    x: dict  # split name ("train", "val", "test") -> Tensor (N, C, H, W), normalised
    y: dict  # split name -> LongTensor (N,)
    ood: dict  # OOD test set name -> Tensor
    ood_val: dict  # OOD validation set name -> Tensor

    @property
    def std(self) -> list[float]:
        return list(self.meta["std"])


def _load(path: Path, rule: str, recorded: dict | None = None) -> np.ndarray:
    if not path.exists():
        raise MissingDataError(
            f"data file {path} is missing; it is made by the Snakemake rule '{rule}' "
            f"(run: snakemake --cores 1 {path.parent})"
        )
    if recorded is not None:
        want = recorded.get(path.name)
        if want is None or path_sha256(path) != want:
            what = "is not listed" if want is None else "does not match the sha256 recorded"
            raise ArtifactError(
                f"data file {path} {what} in {path.parent / 'meta.json'}; "
                + rebuild_hint(path.parent, rule)
            )
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        raise ArtifactError(
            f"data file {path} cannot be read ({type(err).__name__}); "
            + rebuild_hint(path.parent, rule)
        ) from None


def load_prepared(data_dir: Path | str, *, rule: str = "prepare_data") -> PreparedData:
    """Load a prepared dataset as normalised float32 torch tensors.

    :raises MissingDataError: naming the file and the rule that makes it.
    :raises ArtifactError: a file whose sha256 differs from ``meta.json``'s record, or that
        cannot be read.
    """
    import torch

    data_dir = Path(data_dir)
    meta_path = data_dir / "meta.json"
    if not meta_path.exists():
        raise MissingDataError(
            f"data file {meta_path} is missing; it is made by the Snakemake rule '{rule}' "
            f"(run: snakemake --cores 1 {data_dir})"
        )
    meta = json.loads(meta_path.read_text())
    mean = torch.tensor(meta["mean"], dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.tensor(meta["std"], dtype=torch.float32).view(1, -1, 1, 1)

    def norm(a: np.ndarray):
        return (torch.from_numpy(np.asarray(a, dtype=np.float32)) - mean) / std

    files = meta.get("files")  # sha256 per array, recorded by the producer (checked here)

    def load(name: str) -> np.ndarray:
        return _load(data_dir / name, rule, files)

    x = {s: norm(load(f"id_{s}_x.npy")) for s in ID_SPLITS}
    y = {s: torch.from_numpy(load(f"id_{s}_y.npy")).long() for s in ID_SPLITS}
    ood = {n: norm(load(f"ood_{n}_x.npy")) for n in meta["ood_test"]}
    ood_val = {n: norm(load(f"oodval_{n}_x.npy")) for n in meta["ood_val"]}
    return PreparedData(meta=meta, x=x, y=y, ood=ood, ood_val=ood_val)
