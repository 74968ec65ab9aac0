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


def smoke_twice(tmp_path_factory) -> list[Path]:
    """The smoke config run twice from scratch, each in its own fresh copy."""
    runs = []
    for name in ("a", "b"):
        work = fresh_copy(tmp_path_factory.mktemp(name) / "repo")
        proc = snakemake(work, "--cores", "2", *SMOKE)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
        runs.append(work)
    return runs


def flip_byte_keep_mtime(path: Path) -> None:
    """Damage ``path`` as a disk or a careless edit would: one byte flipped, mtime kept."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
