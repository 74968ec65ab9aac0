"""Paper-scale data: read the real downloaded formats and write the prepared layout.

The paper-scale configuration (CIFAR-10/100 as in-distribution data; SVHN, Textures (DTD),
Places365, LSUN-C, LSUN-R and iSUN as OOD test sets, as in the ODIN / Energy / LogitNorm
papers) is described by ``config/paper_sources.yaml``. This module

* loads and validates that file (:func:`load_paper_config`, :func:`load_sources`),
* downloads the archives with checksum verification (:func:`fetch_sources`, which uses
  :func:`softmax_ood.download.download`),
* reads the real formats into ``uint8`` arrays of shape ``(N, 32, 32, 3)``:
  :func:`read_cifar_python` (pickled batches), :func:`read_svhn_mat` (MATLAB ``.mat``),
  :func:`read_image_folder` (any tree of images, e.g. an extracted tarball),
* and writes the same prepared layout as the embedded dataset (:func:`prepare_paper_data`;
  the layout is documented in :mod:`softmax_ood.data`).

Image preprocessing for folder datasets follows torchvision's ``Resize(32)`` +
``CenterCrop(32)`` (the transform the Energy/LogitNorm code applies to Textures and Places365):
the shorter side is scaled to 32 pixels with bilinear (antialiased) PIL resampling, then the
central 32x32 square is cut out. Images that are already 32x32 (LSUN, iSUN) are unchanged.
"""

from __future__ import annotations

import io
import logging
import math
import pickle
import re
import tarfile
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

import numpy as np

from .data import (
    MissingDataError,
    record_file_hashes,
    save_array,
    staged_directory,
    write_json,
)
from .download import DownloadError, download, file_digests, safe_extract

__all__ = [
    "FORMATS",
    "array_sha256",
    "fetch_sources",
    "list_images",
    "load_images",
    "load_paper_config",
    "load_sources",
    "prepare_paper_data",
    "read_cifar_c",
    "read_cifar_python",
    "read_image_folder",
    "read_mnist_idx",
    "read_svhn_mat",
    "source_names",
]

log = logging.getLogger(__name__)

#: Known ``format`` values of a source entry.
FORMATS = {
    "cifar-python": "CIFAR-10/100 'python version' tarball of pickled batches",
    "svhn-mat": "SVHN cropped-digits MATLAB file (X: 32x32x3xN uint8, y: Nx1, digit 0 = 10)",
    "image-folder-tar": "a tar/zip archive of image files (any directory structure)",
    "cifar-c-tar": "CIFAR-10-C tar: CIFAR-10-C/<corruption>.npy (50000, 32, 32, 3) uint8, "
    "10000 rows per severity 1-5, and labels.npy",
    "mnist-idx": "MNIST IDX files (gzip): idx3 uint8 images, idx1 uint8 labels",
    "torch-state-dict": "a PyTorch state_dict file (torch.save; loaded with weights_only=True)",
}
#: Images per severity in each CIFAR-10-C ``<corruption>.npy`` (the CIFAR-10 test set size).
CIFAR_C_PER_SEVERITY = 10000
IMAGE_EXTENSIONS = (
    ".jpg",
    ".jpeg",
    ".png",
    ".bmp",
    ".gif",
    ".ppm",
    ".pgm",
    ".tif",
    ".tiff",
    ".webp",
)
_CIFAR = {
    # which: (folder in the tarball, train files, test files, label key, number of classes)
    "cifar10": (
        "cifar-10-batches-py",
        [f"data_batch_{i}" for i in range(1, 6)],
        ["test_batch"],
        "labels",
        10,
    ),
    "cifar100": ("cifar-100-python", ["train"], ["test"], "fine_labels", 100),
}
#: The four files of an MNIST data set: each ``mnist-idx`` entry names its data set
#: (``dataset``) and which file it is (``part``); the data set's name is their group's name.
MNIST_PARTS = ("train_images", "train_labels", "test_images", "test_labels")
#: Native image side and channels of each in-distribution format (what it is stored at).
ID_FORMATS = {"cifar-python": (32, 3), "mnist-idx": (28, 1)}
_REQUIRED_KEYS = ("name", "url", "filename", "format", "licence", "citation")
_HEX = {"md5": re.compile(r"^[0-9a-f]{32}$"), "sha256": re.compile(r"^[0-9a-f]{64}$")}
GAUSSIAN_VAL = "Gaussian noise N(0.5, 0.25^2) per pixel, clipped to [0, 1]"
#: Keys of a source entry that change neither the downloaded bytes (the checksums define them)
#: nor the prepared data: text, where to fetch from, and the size the download cap is made of.
#: The workflow's jobs do not track them, so editing one reruns nothing.
UNTRACKED_KEYS = ("description", "licence", "citation", "url", "page", "size")


# --------------------------------------------------------------------------- config
def _validate_entry(entry: Mapping, where: str) -> dict:
    entry = dict(entry)
    missing = [k for k in _REQUIRED_KEYS if not entry.get(k)]
    if missing:
        raise ValueError(f"{where}: source entry is missing {', '.join(missing)}")
    name = entry["name"]
    if entry["format"] not in FORMATS:
        raise ValueError(
            f"{where}: source {name!r} has unknown format {entry['format']!r}; "
            f"expected one of {sorted(FORMATS)}"
        )
    filename = str(entry["filename"])
    if PurePosixPath(filename).name != filename or filename in (".", "..") or "\\" in filename:
        raise ValueError(
            f"{where}: source {name!r} filename {filename!r} must be a plain file name"
        )
    for algo, pattern in _HEX.items():
        value = entry.get(algo)
        if value is not None and not pattern.match(str(value).lower()):
            raise ValueError(f"{where}: source {name!r} has a malformed {algo} {value!r}")
        entry[algo] = None if value is None else str(value).lower()
    dec = entry.get("decoded_sha256")
    if dec is not None and not _HEX["sha256"].match(str(dec).lower()):
        raise ValueError(f"{where}: source {name!r} has a malformed decoded_sha256 {dec!r}")
    size = entry.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise ValueError(
            f"{where}: source {name!r} size {size!r} must be a whole number of bytes (> 0)"
        )
    inst = entry.get("installed")
    if inst is not None and not PurePosixPath(str(inst)).is_absolute():
        raise ValueError(f"{where}: source {name!r} installed path {inst!r} must be absolute")
    if entry["format"] == "cifar-python" and entry.get("which") not in _CIFAR:
        raise ValueError(f"{where}: cifar-python source {name!r} needs which: cifar10 or cifar100")
    if entry["format"] == "mnist-idx" and (
        not entry.get("dataset") or entry.get("part") not in MNIST_PARTS
    ):
        raise ValueError(
            f"{where}: mnist-idx source {name!r} needs dataset: <name> and part: one of "
            f"{', '.join(MNIST_PARTS)}"
        )
    return entry


def load_paper_config(path: Path | str) -> dict:
    """Load ``config/paper_sources.yaml``; ``sources`` becomes a ``{name: entry}`` dict.

    :raises ValueError: for a malformed entry (unknown format, bad checksum, unsafe filename,
        duplicate name, missing licence/citation, ...).
    """
    from .yamlio import safe_load

    path = Path(path)
    cfg = safe_load(path.read_text())
    if not isinstance(cfg, dict) or not isinstance(cfg.get("sources"), list):
        raise ValueError(f"{path}: expected a mapping with a 'sources' list")
    sources: dict[str, dict] = {}
    for i, raw in enumerate(cfg["sources"]):
        entry = _validate_entry(raw, f"{path} sources[{i}]")
        if entry["name"] in sources:
            raise ValueError(f"{path}: duplicate source name {entry['name']!r}")
        sources[entry["name"]] = entry
    cfg["sources"] = sources
    for key in ("ood_test", "ood_val"):
        cfg[key] = list(cfg.get(key) or [])
    groups = {e.get("dataset") for e in sources.values() if e["format"] == "mnist-idx"}
    for group in groups:
        parts = sorted(e["part"] for e in sources.values() if e.get("dataset") == group)
        if parts != sorted(MNIST_PARTS) or group in sources:
            raise ValueError(
                f"{path}: MNIST data set {group!r} needs exactly one mnist-idx entry per part "
                f"({', '.join(MNIST_PARTS)}) and no source of its own name; has {parts}"
            )
    unknown = [
        n
        for n in [cfg.get("id_dataset"), *cfg["ood_test"]]
        if n and n not in sources and n not in groups
    ]
    if unknown:
        raise ValueError(f"{path}: id_dataset/ood_test name unknown sources {unknown}")
    return cfg


def load_sources(path: Path | str) -> dict[str, dict]:
    """Just the ``{name: entry}`` sources of :func:`load_paper_config`."""
    return load_paper_config(path)["sources"]


def _as_sources(sources: Mapping) -> dict[str, dict]:
    """Accept a ``{name: entry}`` mapping, a list of entries, or a whole loaded config."""
    if isinstance(sources, Mapping) and isinstance(sources.get("sources"), (Mapping, list)):
        sources = sources["sources"]
    if isinstance(sources, list):
        sources = {e["name"]: e for e in sources}
    out = {}
    for name, entry in sources.items():
        entry = dict(entry)
        entry.setdefault("name", name)
        out[name] = _validate_entry(entry, f"source {name!r}")
    return out


def download_identity(entry: Mapping) -> dict:
    """What a download job tracks of its source entry: the file name and the checksums, which
    define the bytes (a source without a checksum is refused by the workflow)."""
    return {k: entry.get(k) for k in ("filename", "md5", "sha256")}


def tracked_entry(entry: Mapping) -> dict:
    """What of a source entry the workflow's jobs track: everything but
    :data:`UNTRACKED_KEYS` (checksums, file name, format, subset, ...)."""
    return {k: v for k, v in entry.items() if k not in UNTRACKED_KEYS}


def byte_cap(entry: Mapping, size_margin: float | None, max_bytes: int | None) -> int | None:
    """The most bytes a download of ``entry`` may bring: its recorded ``size`` times
    ``size_margin``, else (no size recorded, or no margin) ``max_bytes``; ``None`` = no cap."""
    if entry.get("size") and size_margin is not None:
        return math.ceil(int(entry["size"]) * float(size_margin))
    return None if max_bytes is None else int(max_bytes)


def fetch_sources(
    sources: Mapping,
    raw_dir: Path | str,
    names: Iterable[str] | None = None,
    *,
    allow_unverified: bool = False,
    timeout: float = 60,
    max_seconds: float | None = 3600,
    size_margin: float | None = None,
    max_bytes: int | None = None,
) -> dict[str, Path]:
    """Download each named source to ``raw_dir / entry['filename']`` (checksum-verified).

    Files already present with the right checksum are not downloaded again. An entry whose
    checksums are both ``null`` is refused unless ``allow_unverified=True``. ``timeout``: seconds
    without data; ``max_seconds``: overall limit per file; ``size_margin``, ``max_bytes``: the
    size cap of each file (:func:`byte_cap`; config ``data.download``).

    :returns: ``{name: path}``.
    :raises DownloadError: see :func:`softmax_ood.download.download`.
    """
    sources = _as_sources(sources)
    raw_dir = Path(raw_dir)
    names = list(sources) if names is None else list(names)
    out = {}
    for name in names:
        entry = _lookup(sources, name)
        try:
            out[name] = download(
                entry["url"],
                raw_dir / entry["filename"],
                md5=entry.get("md5"),
                sha256=entry.get("sha256"),
                timeout=timeout,
                max_seconds=max_seconds,
                max_bytes=byte_cap(entry, size_margin, max_bytes),
                source=f"source {name!r}",
                allow_unverified=allow_unverified,
            )
        except DownloadError as err:
            if not entry.get("package"):
                raise
            # a file a Debian package provides: say how to install it (one sentence)
            raise DownloadError(
                f"{entry['filename']} is neither installed ({entry.get('installed')}) nor "
                f"downloadable ({str(err).rstrip('.')}); install it with "
                f"`apt-get install {entry['package']}`"
            ) from None
    return out


def fetch_tracked_source(name: str, tracked: Mapping, data: Mapping, raw_dir: Path | str) -> Path:
    """The workflow's download job: fetch source ``name`` into ``raw_dir``. ``tracked`` is what
    the job tracks of its entry (:func:`tracked_entry`: the checksums, the file name); the
    rest of the entry (URL, text, size) is read from the sources file ``data['sources']`` and
    the limits from ``data['download']``, the config's ``data`` section, so that editing them
    downloads nothing again."""
    entry = {**_lookup(load_sources(data["sources"]), name), **tracked}
    limits = data.get("download") or {}
    return fetch_sources(
        {name: entry},
        raw_dir,
        names=[name],
        timeout=float(limits.get("timeout_s", 60)),
        max_seconds=float(limits.get("max_seconds", 3600)),
        size_margin=limits.get("size_margin"),
        max_bytes=limits.get("max_bytes"),
    )[name]


def source_names(sources: Mapping, name: str) -> list[str]:
    """The source entries a data set ``name`` is read from: ``[name]`` for a one-file source, the
    four ``mnist-idx`` entries (in :data:`MNIST_PARTS` order) whose ``dataset`` is ``name``."""
    if name in sources:
        return [name]
    parts = {e.get("part"): n for n, e in sources.items() if e.get("dataset") == name}
    if sorted(parts) != sorted(MNIST_PARTS):
        raise ValueError(f"unknown source {name!r}; expected one of {sorted(sources)}")
    return [parts[p] for p in MNIST_PARTS]


def _lookup(sources: Mapping, name: str) -> dict:
    if name not in sources:
        raise ValueError(f"unknown source {name!r}; expected one of {sorted(sources)}")
    return sources[name]


# --------------------------------------------------------------------------- CIFAR
class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles only dicts/lists/strings/numbers and numpy arrays (what CIFAR batches hold).

    CIFAR batches are pickles; a plain ``pickle.load`` would execute whatever a tampered file
    asks for. Only the globals needed to rebuild numpy arrays are allowed.
    """

    _ALLOWED = {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),
        ("codecs", "encode"),
        ("copy_reg", "_reconstructor"),
        ("copyreg", "_reconstructor"),
        ("__builtin__", "object"),
        ("builtins", "object"),
    }

    def find_class(self, module: str, name: str):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to unpickle global {module}.{name}: CIFAR batches contain only "
                "dicts, lists and numpy arrays"
            )
        if module.startswith("numpy.core.") and hasattr(np, "_core"):
            module = "numpy._core." + module.split(".", 2)[2]  # avoid numpy 2's deprecated alias
        return super().find_class(module, name)


def _unpickle(data: bytes, what: str) -> dict:
    try:
        obj = _ArrayUnpickler(io.BytesIO(data), encoding="latin1").load()
    except Exception as exc:
        raise ValueError(
            f"{what} is not a readable CIFAR batch ({type(exc).__name__}: {exc})"
        ) from exc
    if not isinstance(obj, dict):
        raise ValueError(f"{what} is not a CIFAR batch (expected a dict, got {type(obj).__name__})")
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in obj.items()}


def _cifar_batch(batch: dict, label_key: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    if "data" not in batch or label_key not in batch:
        raise ValueError(f"{what} lacks the keys 'data' and {label_key!r} (has {sorted(batch)})")
    data = np.asarray(batch["data"])
    labels = np.asarray(batch[label_key], dtype=np.int64).reshape(-1)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072:
        raise ValueError(f"{what}: 'data' should be uint8 (N, 3072), got {data.dtype} {data.shape}")
    if len(labels) != len(data):
        raise ValueError(f"{what}: {len(data)} images but {len(labels)} labels")
    # rows are 1024 red, 1024 green, 1024 blue values in row-major order -> (N, 32, 32, 3)
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy(), labels


def read_cifar_python(
    archive_or_dir: Path | str, which: str = "cifar10"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read the CIFAR-10/100 "python version" from the ``.tar.gz`` or its extracted folder.

    :param archive_or_dir: ``cifar-10-python.tar.gz`` / ``cifar-100-python.tar.gz``, the
        extracted ``cifar-10-batches-py`` / ``cifar-100-python`` folder, or its parent.
    :param which: ``"cifar10"`` (``data_batch_1..5`` + ``test_batch``, key ``labels``) or
        ``"cifar100"`` (``train`` + ``test``, key ``fine_labels``).
    :returns: ``(train_x, train_y, test_x, test_y)``; x ``uint8 (N, 32, 32, 3)``, y ``int64``.
    """
    if which not in _CIFAR:
        raise ValueError(f"which must be one of {sorted(_CIFAR)}, got {which!r}")
    folder, train_files, test_files, label_key, num_classes = _CIFAR[which]
    path = Path(archive_or_dir)
    wanted = train_files + test_files
    raw: dict[str, bytes] = {}
    if path.is_dir():
        base = path / folder if (path / folder).is_dir() else path
        for f in wanted:
            if not (base / f).is_file():
                raise MissingDataError(f"{which} file {base / f} is missing")
            raw[f] = (base / f).read_bytes()
    elif path.is_file():
        try:
            with tarfile.open(path, "r:*") as tar:
                for member in tar:
                    p = PurePosixPath(member.name)
                    if (
                        member.isfile()
                        and len(p.parts) >= 2
                        and p.parts[-2] == folder
                        and p.name in wanted
                    ):
                        raw[p.name] = tar.extractfile(member).read()
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise DownloadError(
                f"archive {path} is truncated or corrupt ({type(exc).__name__}: {exc}); "
                "nothing was read"
            ) from exc
        missing = [f for f in wanted if f not in raw]
        if missing:
            raise ValueError(
                f"{path} is not a {which} python archive: {folder}/{missing} not found"
            )
    else:
        raise MissingDataError(f"{which} data {path} does not exist")

    def read(files):
        xs, ys = zip(
            *(
                _cifar_batch(_unpickle(raw[f], f"{path}:{f}"), label_key, f"{path}:{f}")
                for f in files
            ),
            strict=True,
        )
        return np.concatenate(xs), np.concatenate(ys)

    train_x, train_y = read(train_files)
    test_x, test_y = read(test_files)
    for y in (train_y, test_y):
        if len(y) and (y.min() < 0 or y.max() >= num_classes):
            raise ValueError(f"{path}: {which} labels outside 0..{num_classes - 1}")
    return train_x, train_y, test_x, test_y


# --------------------------------------------------------------------------- SVHN
def read_svhn_mat(path: Path | str) -> tuple[np.ndarray, np.ndarray]:
    """Read an SVHN cropped-digits ``.mat`` file (e.g. ``test_32x32.mat``).

    :returns: ``(x, y)`` with x ``uint8 (N, 32, 32, 3)`` and y ``int64`` in 0..9 (SVHN stores
        the digit 0 as label 10; it is mapped to 0 as torchvision does).
    """
    import scipy.io

    path = Path(path)
    if not path.is_file():
        raise MissingDataError(f"SVHN file {path} does not exist")
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:
        raise DownloadError(
            f"SVHN file {path} is truncated or corrupt ({type(exc).__name__}: {exc}); nothing was read"
        ) from exc
    if "X" not in mat or "y" not in mat:
        raise ValueError(f"{path} is not an SVHN cropped-digits file (no 'X' and 'y' variables)")
    x = np.asarray(mat["X"])
    if x.ndim != 4 or x.shape[:3] != (32, 32, 3):
        raise ValueError(f"{path}: 'X' should be 32x32x3xN, got {x.shape}")
    x = np.ascontiguousarray(x.transpose(3, 0, 1, 2)).astype(np.uint8, copy=False)
    y = np.asarray(mat["y"]).astype(np.int64).reshape(-1)
    if len(y) != len(x):
        raise ValueError(f"{path}: {len(x)} images but {len(y)} labels")
    y[y == 10] = 0
    return x, y


# --------------------------------------------------------------------------- image folders
def list_images(directory: Path | str) -> list[Path]:
    """All image files below ``directory`` in sorted (POSIX relative path) order.

    Hidden files and folders (names starting with ``.``, e.g. macOS ``._*`` resource forks
    found in some tarballs) are skipped, as are files without an image extension.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise MissingDataError(f"image folder {directory} does not exist")
    found = []
    for p in directory.rglob("*"):
        rel = p.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.suffix.lower() in IMAGE_EXTENSIONS and p.is_file():
            found.append((rel.as_posix(), p))
    return [p for _, p in sorted(found)]


def _resize_center_crop(img, size: int):
    """torchvision ``Resize(size)`` (shorter side, bilinear) followed by ``CenterCrop(size)``."""
    from PIL import Image

    w, h = img.size
    if (w, h) != (size, size):
        short, long = (w, h) if w <= h else (h, w)
        if short != size:
            new_long = int(size * long / short)
            new = (size, new_long) if w <= h else (new_long, size)
            img = img.resize(new, Image.Resampling.BILINEAR)
        w, h = img.size
        top = int(round((h - size) / 2.0))
        left = int(round((w - size) / 2.0))
        img = img.crop((left, top, left + size, top + size))
    return img


def load_images(paths: Iterable[Path | str], size: int = 32) -> np.ndarray:
    """Load image files as RGB, resize the shorter side to ``size`` and center-crop.

    :returns: ``uint8 (N, size, size, 3)``.
    :raises ValueError: naming the first file that cannot be decoded.
    """
    from PIL import Image, UnidentifiedImageError

    paths = list(paths)
    out = np.empty((len(paths), size, size, 3), dtype=np.uint8)
    for i, p in enumerate(paths):
        try:
            with Image.open(p) as img:
                img.load()
                rgb = img.convert("RGB")
        except (UnidentifiedImageError, OSError, SyntaxError) as exc:
            raise ValueError(f"cannot decode image {p} ({type(exc).__name__}: {exc})") from exc
        out[i] = np.asarray(_resize_center_crop(rgb, size), dtype=np.uint8)
    return out


def read_image_folder(
    directory: Path | str, size: int = 32, limit: int | None = None
) -> np.ndarray:
    """Read every image below ``directory`` (sorted order; first ``limit`` if given).

    :returns: ``uint8 (N, size, size, 3)``, see :func:`load_images`.
    """
    paths = list_images(directory)
    if limit is not None:
        paths = paths[: int(limit)]
    if not paths:
        raise ValueError(f"no images ({', '.join(IMAGE_EXTENSIONS)}) found below {directory}")
    return load_images(paths, size)


# --------------------------------------------------------------------------- prepare
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
    config_ood = (
        list(sources.get("ood_test") or [])
        if isinstance(sources, Mapping) and "sources" in sources
        else None
    )
    srcs = _as_sources(sources)
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
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
    native, channels = ID_FORMATS[id_format]
    if image_size != native:
        raise ValueError(
            f"the paper-scale {id_dataset} data is stored at its own size, {native}x{native}; "
            f"data.image_size is {image_size}"
        )
    for name in ood_test:
        _lookup(srcs, name)
    if id_dataset in ood_test or "gaussian" in ood_test:
        raise ValueError(f"OOD test sets {ood_test} may not include {id_dataset!r} or 'gaussian'")

    from sklearn.model_selection import train_test_split

    if id_format == "cifar-python":
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
    del train_x, test_x, splits

    for name in ood_test:
        entry = srcs[name]
        x = _read_ood(
            raw_dir, entry, image_size, seed, verify_checksums, raw_dir / "extracted", channels
        )
        save_array(out_dir / f"ood_{name}_x.npy", _to_chw(x))
        meta_splits[f"ood_{name}"] = int(len(x))
        meta_sources[name] = _source_meta(entry)
        log.info("OOD test set %s: %d images", name, len(x))

    n_val_ood = int(ood_val_size) if ood_val_size is not None else len(idx_val)
    rng = _stream(seed, "oodval:gaussian")
    noise = np.clip(
        rng.normal(0.5, 0.25, size=(n_val_ood, channels, image_size, image_size)), 0.0, 1.0
    )
    save_array(out_dir / "oodval_gaussian_x.npy", noise.astype(np.float32))
    meta_splits["oodval_gaussian"] = n_val_ood
    meta_sources["gaussian"] = {
        "source": f"generated: {GAUSSIAN_VAL}",
        "licence": "n/a (synthetic)",
    }

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
        "preprocessing": "uint8 RGB / 255 -> float32 (N, 3, 32, 32). Folder images: shorter side "
        "resized to 32 (PIL bilinear), then 32x32 center crop (torchvision Resize(32) + "
        "CenterCrop(32)). ID val: stratified split of the official training set; ID test: the "
        "official test set. Normalisation (x - mean) / std at load time.",
    }
    if id_format == "mnist-idx":
        meta["preprocessing"] = (
            "uint8 grey / 255 -> float32 (N, 1, 28, 28), the MNIST digits unchanged. OOD images: "
            "shorter side resized to 28 (PIL bilinear), 28x28 center crop (torchvision Resize(28) "
            "+ CenterCrop(28)), then PIL 'L' luma (ITU-R 601-2, torchvision Grayscale). ID val: "
            "stratified split of the official training set; ID test: the official test set. "
            "Normalisation (x - mean) / std at load time."
        )
    record_file_hashes(out_dir, meta)
    write_json(out_dir / "meta.json", meta)
    return meta


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


# --------------------------------------------------------------------------- CIFAR-10-C, MNIST
def read_cifar_c(
    root: Path | str, corruption: str, severity: int, *, per_severity: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One corruption at one severity from an extracted CIFAR-10-C archive.

    ``<root>/<corruption>.npy`` holds every severity stacked: rows ``per_severity * (s - 1)`` to
    ``per_severity * s - 1`` are severity ``s`` (Hendrycks & Dietterich's layout); only those
    rows are read (memory-mapped). ``root`` may be the extraction folder or its
    ``CIFAR-10-C/`` subfolder. ``per_severity`` (default: a fifth of ``labels.npy``, 10,000 in
    the published files, :data:`CIFAR_C_PER_SEVERITY`) is the rows per severity.

    :returns: ``(uint8 (N, 32, 32, 3), int64 labels (N,))``.
    :raises MissingDataError: a file is missing (named).
    :raises ValueError: severity outside 1-5 or a file of the wrong shape (one sentence).
    """
    from .data import MissingDataError

    root = Path(root)
    if (root / "CIFAR-10-C").is_dir():
        root = root / "CIFAR-10-C"
    if isinstance(severity, bool) or not isinstance(severity, int) or not 1 <= severity <= 5:
        raise ValueError(f"CIFAR-10-C severity is {severity!r}; severities are the integers 1-5")
    files = {"images": root / f"{corruption}.npy", "labels": root / "labels.npy"}
    for path in files.values():
        if not path.is_file():
            raise MissingDataError(f"CIFAR-10-C file {path} is missing (extract CIFAR-10-C.tar)")
    images = np.load(files["images"], mmap_mode="r", allow_pickle=False)
    labels = np.load(files["labels"], mmap_mode="r", allow_pickle=False)
    if per_severity is None:  # the file's own layout: five equal blocks
        per_severity = labels.shape[0] // 5 if labels.shape[0] % 5 == 0 else CIFAR_C_PER_SEVERITY
    n = 5 * per_severity
    if images.shape[0] != n or images.shape[1:] != (32, 32, 3) or labels.shape[0] != n:
        raise ValueError(
            f"{files['images']} has shape {images.shape} and labels {labels.shape}; CIFAR-10-C "
            f"files hold ({n}, 32, 32, 3) uint8 images and {n} labels"
        )
    rows = slice(per_severity * (severity - 1), per_severity * severity)
    return np.array(images[rows], dtype=np.uint8), np.array(labels[rows], dtype=np.int64)


def array_sha256(a: np.ndarray) -> str:
    """sha256 of a uint8 array's bytes (C order): the decoded-array digest of an IDX file
    (``decoded_sha256`` in the sources file), independent of how the file was compressed."""
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.uint8).tobytes()).hexdigest()


def read_mnist_idx(path: Path | str) -> np.ndarray:
    """An MNIST IDX file (``.gz`` or raw): ``idx3`` -> uint8 ``(N, 28, 28)``, ``idx1`` -> uint8
    ``(N,)``. The magic number and the declared sizes are checked (one-sentence ``ValueError``)."""
    import gzip

    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 8 or raw[:2] != b"\0\0" or raw[2] != 0x08 or raw[3] not in (1, 3):
        raise ValueError(f"{path} is not an MNIST IDX file of unsigned bytes (bad magic number)")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    offset = 4 + 4 * ndim
    size = int(np.prod(dims))
    if len(raw) - offset != size:
        raise ValueError(
            f"{path} declares {dims} ({size} bytes of data) but holds {len(raw) - offset}"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(dims).copy()
