"""The paper-scale sources file: load and validate ``config/paper_sources.yaml``, say what of an
entry the workflow tracks, and download the archives with checksum verification.

A source entry names one file (``filename``, its ``url``, ``md5``/``sha256``), its ``format`` (one
of :data:`FORMATS`, read by :mod:`softmax_ood.paper_data.readers`), its licence and citation, and
optionally ``subsample``/``limit``/``subdir`` (what :mod:`softmax_ood.paper_data.prepare` keeps of
it). The four ``mnist-idx`` entries of one ``dataset`` form an MNIST data set of that name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from ..download import DownloadError, download
from .readers import _CIFAR

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
#: The four files of an MNIST data set: each ``mnist-idx`` entry names its data set
#: (``dataset``) and which file it is (``part``); the data set's name is their group's name.
MNIST_PARTS = ("train_images", "train_labels", "test_images", "test_labels")
_REQUIRED_KEYS = ("name", "url", "filename", "format", "licence", "citation")
_HEX = {"md5": re.compile(r"^[0-9a-f]{32}$"), "sha256": re.compile(r"^[0-9a-f]{64}$")}
#: Keys of a source entry that change neither the downloaded bytes (the checksums define them)
#: nor the prepared data: text, where to fetch from, and the size the download cap is made of.
#: The workflow's jobs do not track them, so editing one reruns nothing.
UNTRACKED_KEYS = ("description", "licence", "citation", "url", "page", "size")


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
    from ..yamlio import safe_load

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
