"""Readers of the real downloaded formats into ``uint8`` arrays (images ``(N, H, W, C)``; MNIST
IDX files as stored, ``(N, 28, 28)`` images and ``(N,)`` labels).

* :func:`read_cifar_python`: the CIFAR-10/100 "python version" (pickled batches, unpickled with
  only numpy's globals allowed);
* :func:`read_svhn_mat`: SVHN's cropped digits (MATLAB ``.mat``);
* :func:`read_image_folder` / :func:`list_images` / :func:`load_images`: any tree of images (an
  extracted tarball), resized as torchvision's ``Resize`` + ``CenterCrop``;
* :func:`read_cifar_c`: one corruption at one severity of an extracted CIFAR-10-C;
* :func:`read_mnist_idx`: an MNIST IDX file, and :func:`array_sha256`, the digest of the decoded
  array a sources entry records (``decoded_sha256``).

Each raises a one-sentence error naming the file: :class:`~softmax_ood.errors.MissingDataError`
for a missing file, :class:`~softmax_ood.errors.DownloadError` for a truncated or corrupt
archive, ``ValueError`` for a file of the wrong shape or content.
"""

from __future__ import annotations

import io
import pickle
import tarfile
import zlib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import numpy as np

from ..errors import DownloadError, MissingDataError

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
