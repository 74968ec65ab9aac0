"""workflow/bench/bench_gpu.py: skips cleanly where no GPU exists; its code path runs on a CPU."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "workflow/bench/bench_gpu.py"


def _bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def test_skips_with_its_reason_where_no_gpu_exists():
    # CUDA_VISIBLE_DEVICES="" hides any GPU, so this checks the skip on every machine
    proc = _bench(env={"CUDA_VISIBLE_DEVICES": ""})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bench_gpu: skipped: no CUDA GPU"), lines
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_benchmark_code_path_runs_on_the_cpu():
    proc = _bench(
        "--device", "cpu", "--images", "48", "--batch-size", "16", "--bf16", "--channels-last"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = re.fullmatch(
        r"bench_gpu: cpu \(CPU\), wrn-40-2, 48 images, batch 16, bf16 on, channels_last on, "
        r"deterministic on: epoch (\S+) s, (\d+) images/s\n",
        proc.stdout,
    )
    assert m and float(m[1]) > 0, proc.stdout
