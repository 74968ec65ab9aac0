"""Ctrl-C during a run: no traceback, and one line saying how to resume (run in a temporary
copy on the smoke config; SIGINT goes to the whole process group, as a terminal's Ctrl-C)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from e2e import SMOKE, fresh_copy  # noqa: E402

pytestmark = pytest.mark.slow


def test_ctrl_c_prints_no_traceback_and_how_to_resume(tmp_path):
    work = fresh_copy(tmp_path / "repo")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "1", *SMOKE],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, like a terminal job
        # a terminal delivers SIGINT; a test run started in the background inherits "ignore
        # SIGINT" from its shell, which Python would keep: restore the default first
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # wait until a training job is running (its log exists), then interrupt it
    deadline = time.monotonic() + 300
    while not list(work.glob("logs/train/**/*.log")) and time.monotonic() < deadline:
        assert proc.poll() is None, "the workflow ended before any training started"
        time.sleep(0.5)
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=300)
    assert "Traceback" not in out, out[-6000:]
    # how to resume: the interrupted job's one line, or (when the signal lands between two of
    # these sub-second smoke jobs, as it can on a loaded machine) the workflow's own hint
    job_line = "interrupted: rerun the same snakemake command to resume" in out
    assert job_line or "To resume: rerun the same command" in out, out[-3000:]
    if proc.returncode != 0:  # Snakemake's own failure path adds the workflow's resume hint
        assert "To resume: rerun the same command" in out and "snakemake --unlock" in out
    # after the interrupt: Snakemake's own notice and summary, not pages of stack frames
    tail = out.split("Terminating processes on user request")[-1]
    assert len(tail.splitlines()) < 40, tail
