"""Provenance records: which code, config, data and seed made each result.

Every table the workflow writes carries a provenance record, both inside the parquet file
(schema metadata key ``softmax_ood.provenance``) and in a ``<name>.prov.json`` sidecar:

* ``git``: commit of the working tree and whether it had uncommitted changes,
* ``config_sha256``: hash of the validated config (canonical JSON),
* ``inputs``: sha256 of every input file (directories: of their sorted file list and contents),
* ``seeds`` and ``versions`` (python, torch, numpy, pandas, scikit-learn, ...),
* ``numerics``: ``pinned`` (with the pinned values) or ``native`` (:mod:`softmax_ood.numerics`).

Every workflow job also records what it wrote: at its successful end
(:func:`softmax_ood.cli.run_job`) the sha256 of every file output under ``results/`` and
``reports/`` goes into one *outputs record* per job, ``<first output's stem>.outputs.json``
beside that output (:func:`write_outputs_record`): ``{"rule", "script", "outputs": {path:
sha256}, "record_sha256"}``, the last the sha256 of the rest, so a changed byte in the record
itself shows too (:func:`outputs_record_problem`). It is written after the job's last output (a report's HTML included), so the
parse-time stale check (:mod:`softmax_ood.stale`) and the audit compare every output on disk
with what its job wrote. A separate file, not a key in the ``.prov.json`` sidecars: those are
embedded in the parquet files they describe and printed by reports, which cannot carry their
own hashes.

Nothing time-dependent is recorded, so two runs of the same commit give identical bytes.
This module imports neither torch nor pandas at import time (the Snakefile uses it).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

from . import numerics

_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK  # what open() would give; mkstemp makes 0600

__all__ = [
    "PROVENANCE_KEY",
    "canonical_json",
    "config_sha256",
    "git_info",
    "path_sha256",
    "provenance_record",
    "set_job",
    "metadata_path",
    "snakemake_metadata",
    "read_parquet_provenance",
    "versions",
    "write_bytes_atomic",
    "outputs_record_problem",
    "outputs_records",
    "record_path",
    "refusal",
    "write_outputs_record",
    "write_parquet",
]

OUTPUTS_SUFFIX = ".outputs.json"
RECORD_DIGEST_KEY = "record_sha256"  # an outputs record's own content hash
_RECORD_KEYS = {"outputs", "rule", "script"}
#: files whose bytes are wall times, not reproducible by nature (the Seddik solver's timing):
#: no outputs record holds their hash, and the golden digests leave them out
WALL_TIME_GLOBS = ("reports/*_timing_*.json",)
# the folders whose job outputs are recorded (data/ has its own records: meta.json's files)
RECORDED_TREES = ("results/", "reports/")
#: the only folders (of the workflow folder) a path read from a record may lie in, every
#: symlink resolved: what the workflow makes. Records can come from elsewhere (``share pull``,
#: a colleague's copy): a path they name is data to check, never an order to read or re-date
#: a file outside these (:func:`record_path`)
RECORD_TREES = ("results", "data", "reports")

PROVENANCE_KEY = b"softmax_ood.provenance"
PACKAGES = (
    "torch",
    "numpy",
    "pandas",
    "pyarrow",
    "scikit-learn",
    "scikit-image",
    "scipy",
    "matplotlib",
    "seaborn",
    "snakemake",
)


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True, default=str)


def config_sha256(config: dict) -> str:
    """sha256 of the config as canonical JSON (key order and formatting do not matter)."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def path_sha256(path: Path | str, cache=None) -> str:
    """sha256 of a file, or of a directory's sorted (relative path, file sha256) listing;
    ``cache`` (a :class:`softmax_ood.startcache.JsonCache`): file hashes kept between
    Snakemake starts, keyed by each file's stat identity."""
    path = Path(path)
    one = _file_sha256 if cache is None else (lambda f: cache.by_stat(f, _file_sha256))
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"{f.relative_to(path).as_posix()}\0{one(f)}\n".encode())
        return h.hexdigest()
    return one(path)


# DVC pointer files are data, not code: a commit that only adds or updates them (sharing trained
# models, softmax_ood.share) does not change what a provenance record names
_CODE = [":(top)", ":(top,exclude,glob)**/*.dvc"]


def git_info(cwd: Path | str = ".") -> dict:
    """``{"commit": sha or "unknown", "dirty": bool or None}`` for the working tree at ``cwd``:
    the last commit that changed code (anything but DVC pointer files ``*.dvc``), and whether
    the code differs from it."""
    try:
        commit = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", *_CODE],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not commit:  # no commit touches code (only pointers): the head itself
            commit = subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
            ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", *_CODE],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {"commit": commit, "dirty": bool(status.strip())}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown", "dirty": None}


def versions() -> dict:
    """Versions of python and the packages that change results (read from metadata, no imports)."""
    out = {"python": platform.python_version()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


# The workflow job this process runs (rule name, script path relative to the checkout), set
# once by softmax_ood.cli.run_job; every record made in the job names them, so no script
# types its own name.
_JOB: dict[str, str] = {}


def set_job(rule: str, script: str) -> None:
    """Record the current workflow job's ``rule`` and ``script`` for every provenance record."""
    _JOB.clear()
    _JOB.update(rule=rule, script=script)


def provenance_record(
    *,
    inputs: dict | list,
    config: dict | None = None,
    seeds=None,
    extra: dict | None = None,
    cwd: Path | str = ".",
) -> dict:
    """Build the provenance record for a result made from ``inputs`` (paths). Inside a workflow
    job (:func:`softmax_ood.cli.run_job`) it also names the job's rule and script."""
    if not isinstance(inputs, dict):
        inputs = {str(p): p for p in inputs}
    return {
        "git": git_info(cwd),
        "config_sha256": config_sha256(config) if config is not None else None,
        "inputs": {
            k: {"path": str(p), "sha256": path_sha256(p)} for k, p in sorted(inputs.items())
        },
        "seeds": sorted(seeds) if seeds is not None else None,
        "versions": versions(),
        "numerics": numerics.record(),
        **_JOB,
        **(extra or {}),
    }


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(path)) from err
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except OSError as err:  # a full disk names no file: name the one being written
        Path(tmp).unlink(missing_ok=True)
        raise OSError(err.errno, err.strerror, str(path)) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_parquet(df, path: Path | str, provenance: dict | None = None) -> None:
    """Write ``df`` as parquet (atomically) with ``provenance`` in the schema metadata and in a
    ``.prov.json`` sidecar. Deterministic: no index, fixed compression, no timestamps."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    if provenance is not None:
        meta = dict(table.schema.metadata or {})
        meta[PROVENANCE_KEY] = canonical_json(provenance).encode()
        table = table.replace_schema_metadata(meta)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", write_statistics=False)
    write_bytes_atomic(path, buf.getvalue())
    if provenance is not None:
        write_provenance(Path(path).with_suffix(".prov.json"), provenance)


def write_provenance(path: Path | str, provenance: dict) -> None:
    """A provenance sidecar (``*.prov.json``): sorted keys, indent 2, written atomically."""
    write_bytes_atomic(path, (json.dumps(provenance, sort_keys=True, indent=2) + "\n").encode())


def read_parquet_provenance(path: Path | str) -> dict:
    """The provenance record stored in a parquet file's schema metadata."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    if PROVENANCE_KEY not in meta:
        raise ValueError(f"{path} carries no provenance record")
    return json.loads(meta[PROVENANCE_KEY])


def outputs_record_path(outputs) -> Path | None:
    """Where a job with ``outputs`` (paths relative to the workflow folder) keeps its outputs
    record: ``<stem>.outputs.json`` beside its first file output under ``results/`` or
    ``reports/`` (None: nothing recorded there)."""
    for out in outputs:
        p = Path(out)
        if p.as_posix().startswith(RECORDED_TREES) and not p.is_dir():
            return p.with_name(p.name.split(".", 1)[0] + OUTPUTS_SUFFIX)
    return None


def write_outputs_record(outputs, rule: str | None = None, script: str | None = None):
    """Record the sha256 of every file in ``outputs`` under ``results/`` or ``reports/`` (the
    job's declared outputs, after it wrote them all), and of each parquet output's
    ``.prov.json`` sidecar, in :func:`outputs_record_path`. Returns the record's path (None:
    no such output)."""
    record = outputs_record_path(outputs)
    if record is None:
        return None
    from fnmatch import fnmatchcase

    # a parquet output's provenance sidecar is written by the same job (write_parquet), also
    # where the rule does not declare it
    sidecars = [Path(o).with_suffix(".prov.json") for o in outputs if Path(o).suffix == ".parquet"]
    hashes = {
        Path(o).as_posix(): _file_sha256(Path(o))
        for o in [*outputs, *sidecars]
        if Path(o).as_posix().startswith(RECORDED_TREES)
        and Path(o).is_file()
        and not any(fnmatchcase(Path(o).as_posix(), g) for g in WALL_TIME_GLOBS)
    }
    body = {"rule": rule, "script": script, "outputs": dict(sorted(hashes.items()))}
    body[RECORD_DIGEST_KEY] = _record_digest(body)
    write_bytes_atomic(record, (json.dumps(body, sort_keys=True, indent=2) + "\n").encode())
    return record


def _record_digest(body: dict) -> str:
    """sha256 of an outputs record's content (canonical JSON, its own digest left out)."""
    rest = {k: v for k, v in body.items() if k != RECORD_DIGEST_KEY}
    return hashlib.sha256(canonical_json(rest).encode()).hexdigest()


def outputs_record_problem(path: Path | str) -> str | None:
    """Why the outputs record at ``path`` is not as its job wrote it (one clause: not valid
    JSON, other keys, or its own sha256 differs from its content), else None. A record holds
    its content's sha256 (``record_sha256``), so any changed byte shows. A record written
    before records carried it (exactly ``outputs``, ``rule``, ``script``) is not trusted: it
    is a problem too, so the stale check reruns the job that wrote it (which writes a record
    of today's format) and the audit names it."""
    try:
        body = json.loads(Path(path).read_text())
    except OSError as err:
        return f"cannot be read ({err.strerror})"
    except ValueError:  # UnicodeDecodeError included
        return "is not valid JSON"
    keys = set(body) if isinstance(body, dict) else set()
    if keys == _RECORD_KEYS:  # an older record, without its own sha256: not trusted
        return f"has no {RECORD_DIGEST_KEY} (written before records carried their own sha256)"
    if keys != _RECORD_KEYS | {RECORD_DIGEST_KEY}:
        return f"does not have the keys {', '.join(sorted(_RECORD_KEYS | {RECORD_DIGEST_KEY}))}"
    if body[RECORD_DIGEST_KEY] != _record_digest(body) or not isinstance(body["outputs"], dict):
        return f"does not match its own {RECORD_DIGEST_KEY}"
    return None


def _within(real: str, bases: list[str]) -> bool:
    return any(real == b or real.startswith(b.rstrip(os.sep) + os.sep) for b in bases)


def _bases(root: str, trees) -> list[str]:
    return [os.path.realpath(os.path.join(root, t)) for t in trees]


def inside_trees(root: Path | str, path: Path | str, trees=RECORD_TREES) -> bool:
    """Whether ``path`` (absolute, or relative to ``root``), every symlink resolved, lies in
    one of ``root``'s ``trees`` (a folder's content is not looked at: :func:`record_path`)."""
    full = os.path.join(os.path.abspath(root), os.fspath(path))
    return _within(os.path.realpath(full), _bases(os.path.abspath(root), trees))


def record_path(root: Path | str, path, trees=RECORD_TREES) -> str | None:
    """``path`` as a record names it (relative to the workflow folder ``root``, or absolute),
    relative to ``root`` and normalised, if it lies inside one of ``root``'s ``trees``
    (:data:`RECORD_TREES`) with every symlink resolved and, for a folder, no symlink in it
    leads out of them; else None: the record is refused (:func:`refusal`) and nothing it names
    is read, hashed or re-dated. The one check every reader of records uses (the stale check,
    the audit, ``share pull``)."""
    if not isinstance(path, (str, Path)) or not str(path) or "\0" in str(path):
        return None
    root = os.path.abspath(root)
    full = os.path.normpath(os.path.join(root, os.fspath(path)))
    bases = _bases(root, trees)
    if not _within(os.path.realpath(full), bases):
        return None
    if os.path.isdir(full):  # path_sha256 and mark() go into it: every link in it stays in
        for folder, dirs, files in os.walk(full):  # never through a link (followlinks=False)
            for name in dirs + files:
                link = os.path.join(folder, name)
                if os.path.islink(link) and not _within(os.path.realpath(link), bases):
                    return None
    rel = os.path.relpath(full, root)
    if rel == ".." or rel.startswith(".." + os.sep):  # an absolute path through a link to root
        rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root))
    return Path(rel).as_posix()


def refusal(record: str, path) -> str:
    """The one sentence that refuses ``record`` for naming ``path`` (see :func:`record_path`)."""
    return (
        f"refusing {record}: it names {path}, which is outside this checkout's results/, data/ "
        "and reports/ (symlinks resolved), so it is ignored and nothing it names is read or "
        "re-dated; delete it, or rerun the job that wrote it if it is this workflow's own"
    )


def metadata_path(output: str) -> Path:
    """Where Snakemake keeps its record of ``output``, relative to ``.snakemake/metadata``
    (snakemake/persistence/file.py): the urlsafe base64 of the path cut into pieces of
    NAME_MAX - 1 = 254 characters, every piece but the last a folder named with a leading "@"."""
    import base64

    enc = base64.urlsafe_b64encode(output.rstrip("/").encode()).decode()
    parts = [enc[i : i + 254] for i in range(0, len(enc), 254)]
    return Path(*["@" + s for s in parts[:-1]], parts[-1])


def snakemake_metadata(root: Path | str, rel: str) -> dict | None:
    """What Snakemake recorded about the output ``rel`` (``.snakemake/metadata``: rule, inputs,
    ``endtime`` = the mtime it gave the job's outputs when the job ended), if anything."""
    try:
        meta = json.loads((Path(root) / ".snakemake" / "metadata" / metadata_path(rel)).read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def outputs_records(root: Path | str = ".") -> list[Path]:
    """Every outputs record under ``root``'s ``results/`` and ``reports/``."""
    root = Path(root)
    return [r for t in RECORDED_TREES for r in sorted((root / t).rglob("*" + OUTPUTS_SUFFIX))]


def read_outputs_records(
    root: Path | str = ".", refused: dict[str, str] | None = None
) -> dict[str, tuple[str, str]]:
    """``{output path: (record path, sha256)}`` from every outputs record under ``root``'s
    ``results/`` and ``reports/`` (paths relative to ``root``, normalised). A record that is
    not as its job wrote it (:func:`outputs_record_problem`) is skipped: the stale check reruns
    its job, the audit names it. A record lying outside :data:`RECORD_TREES` itself (a link
    out: not read) or naming a path outside them (:func:`record_path`) is skipped and put in
    ``refused`` (``{record: that path}``, :func:`refusal`)."""
    root = Path(root)
    found: dict[str, tuple[str, str]] = {}
    for rec in outputs_records(root):
        rel = rec.relative_to(root).as_posix()
        if record_path(root, rel) is None:
            if refused is not None:
                refused[rel] = rel
            continue
        if outputs_record_problem(rec) is not None:
            continue
        outputs = json.loads(rec.read_text())["outputs"]
        outside = [out for out in outputs if record_path(root, out) is None]
        if outside:
            if refused is not None:
                refused[rel] = outside[0]
            continue
        for out, sha in outputs.items():
            if isinstance(sha, str):
                found[record_path(root, out)] = (rel, sha)
    return found
