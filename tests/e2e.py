"""Helpers for end-to-end tests: run Snakemake in a fresh temporary copy of the working tree
(never in the user's checkout), hash result trees, call DVC."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ["--configfile", "config/smoke.yaml"]
IGNORE = shutil.ignore_patterns(
    "results",
    "reports",
    "data",
    "logs",
    ".snakemake",
    "dvc-storage",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    "tmp",
)


def snakemake(cwd: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def fresh_copy(dst: Path) -> Path:
    """The working tree (with .git, so provenance records the same commit) minus outputs."""
    shutil.copytree(ROOT, dst, ignore=IGNORE, symlinks=True)
    return dst


def dvc(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def smoke_once(tmp_path_factory) -> list[Path]:
    """The smoke config run once from scratch in a fresh copy (a list: the session fixture's
    shape). Its bytes are checked against the golden manifest, the digests of an earlier run from
    scratch (:func:`differs_from_golden`): a second run here would check less (the same machine,
    the same commit) at the cost of a whole smoke run."""
    work = fresh_copy(tmp_path_factory.mktemp("a") / "repo")
    proc = snakemake(work, "--cores", "2", *SMOKE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return [work]


def differs_from_golden(run: Path, *prefixes: str) -> tuple[int, list[str]]:
    """``(files compared, those that differ)``: ``run``'s outputs under ``prefixes`` against the
    golden manifest (tests/golden/smoke_sha256.json: an earlier smoke run from scratch, digests
    with the recorded commit left out). A file made but not in the manifest, or in it but not
    made, differs too."""
    from softmax_ood import golden

    manifest = golden.load()
    want = {f: d for f, d in manifest["files"].items() if f.startswith(prefixes)}
    have = {
        f: d
        for f, d in golden.manifest_of(run, manifest.get("dataset", "digits")).items()
        if f.startswith(prefixes)
    }
    return len(have), sorted(f for f in set(want) | set(have) if want.get(f) != have.get(f))


def flip_byte_keep_mtime(path: Path) -> None:
    """Damage ``path`` as a disk or a careless edit would: one byte flipped, mtime kept."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
