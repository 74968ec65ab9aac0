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


@pytest.mark.slow
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


JOBSTART = Path(__file__).resolve().parents[1] / "workflow/jobstart"


@pytest.mark.parametrize("where", ["start-up", "script"])
def test_interrupt_during_job_start_up_is_one_line(where, tmp_path):
    """A Ctrl-C that lands while a job's Python is still importing (Snakemake's script
    preamble, before run_script's handler exists) prints the one line, no traceback; any other
    error keeps its traceback. The Snakefile puts workflow/jobstart on every job's PYTHONPATH."""
    from softmax_ood.cli import INTERRUPTED

    env = {**os.environ, "PYTHONPATH": str(JOBSTART)}
    code = (
        "import json, platform\nraise KeyboardInterrupt"
        if where == "script"
        else ("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(5)")
    )
    script = tmp_path / "job.py"
    script.write_text(code)
    # a test run started in the background inherits "ignore SIGINT", which Python would keep
    proc = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr.strip() == INTERRUPTED, proc.stderr
    assert proc.returncode != 0
    script.write_text("raise ValueError('a bug')")
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert "Traceback" in proc.stderr and "a bug" in proc.stderr


def test_every_job_gets_this_checkouts_library_and_the_start_up_hook(monkeypatch):
    from softmax_ood.cli import INTERRUPTED, set_job_pythonpath

    root = JOBSTART.parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/user/lib", str(root / "src")]))
    assert set_job_pythonpath(root).split(os.pathsep) == [
        str(root / "src"),
        str(JOBSTART),
        "/user/lib",
    ]
    assert "set_job_pythonpath(workflow.basedir)" in (root / "Snakefile").read_text()
    hook = (JOBSTART / "sitecustomize.py").read_text()
    assert f'INTERRUPTED = "{INTERRUPTED}"' in hook  # the same line as run_script's
