"""The benchmark scripts run and check their own values (their timings are not asserted)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_metrics_benchmark_values_identical():
    proc = subprocess.run(
        [sys.executable, "workflow/bench/bench_metrics.py", "--n", "20000", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "values identical" in proc.stdout and "speedup" in proc.stdout


def test_train_benchmark_runs():
    proc = subprocess.run(
        [
            sys.executable,
            "workflow/bench/bench_train.py",
            "--epochs",
            "1",
            "--repeat",
            "1",
            "--arch",
            "mlp",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio" in proc.stdout
