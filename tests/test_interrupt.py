"""Ctrl-C during a run: no traceback, and the one line saying how to resume (run in a temporary
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

#: one training of the smoke config (the test's target)
TRAINED = "results/train/digits/adam/cnn/ce/seed0/model.pt"


@pytest.mark.slow
def test_ctrl_c_prints_no_traceback_and_how_to_resume(tmp_path):
    work = fresh_copy(tmp_path / "repo")
    # trainings long enough (hundreds of epochs instead of the smoke's 2-4) that the Ctrl-C
    # lands in the training job whose log the test waited for, not in whatever job follows a
    # finished one (on an idle machine a smoke training ends within the 3 s below)
    (work / "long.yaml").write_text(
        "recipes:\n  sgd: {epochs: 400}\n  adam: {epochs: 400}\n  kang: {epochs: 400}\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.Popen(
        # one training as the target (before --configfile, which takes several values): the
        # Ctrl-C must land in a training, not in whichever of the smoke DAG's ~130 jobs runs first
        [sys.executable, "-m", "snakemake", "--cores", "1", TRAINED, *SMOKE, "long.yaml"],
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
    assert list(work.glob("logs/train/**/*.log")), "no training started within 300 s"
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=300)
    assert "Traceback" not in out, out[-6000:]
    # issue 40: the README's one line, once (not once per running job), and nothing after it
    # (Snakemake's notice, the cancelled jobs' errors, its summary: 27 lines)
    from softmax_ood.cli import INTERRUPTED

    assert out.count(INTERRUPTED) == 1, out[-3000:]
    assert out.rstrip().endswith(INTERRUPTED), out[-3000:]
    assert "Terminating processes" not in out and "To resume" not in out
    # the rule log keeps the line, Snakemake's own log its whole account
    logs = [p.read_text() for p in work.glob("logs/train/**/*.log")]
    assert any(INTERRUPTED in text for text in logs)


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
    from softmax_ood.cli import QUIET_INTERRUPT_ENV

    assert f'"{QUIET_INTERRUPT_ENV}"' in hook  # quiet under the Snakemake process, as run_script


def test_after_snakemakes_ctrl_c_notice_the_console_shows_one_line(monkeypatch):
    """The Snakefile's hook on Snakemake's console handler (softmax_ood.cli): its notice
    becomes the one line and what follows (the cancelled jobs' errors, the log's path, the
    closing WorkflowError) is dropped; its log file keeps everything; jobs stay quiet."""
    import io
    import logging

    from softmax_ood import cli

    monkeypatch.setattr(cli._OneLineOnInterrupt, "seen", False)
    monkeypatch.delenv(cli.QUIET_INTERRUPT_ENV, raising=False)
    logger = logging.getLogger("test-snakemake-console")
    logger.propagate = False
    console, record = io.StringIO(), io.StringIO()
    handlers = [logging.StreamHandler(console), logging.FileHandler(os.devnull)]
    handlers[1].stream = record  # a log file: kept whole
    for h in handlers:
        logger.addHandler(h)
    try:
        assert cli.one_line_on_interrupt(logger) == 1
        assert os.environ[cli.QUIET_INTERRUPT_ENV]
        logger.warning("Finished jobid: 3 (Rule: train)")
        assert not cli.interrupted()
        logger.warning("Terminating processes on user request, this might take some time.")
        for line in ("Error in rule train:", "Complete log(s): x", "WorkflowError:"):
            logger.error(line)
    finally:
        for h in handlers:
            logger.removeHandler(h)
    assert console.getvalue().splitlines() == ["Finished jobid: 3 (Rule: train)", cli.INTERRUPTED]
    assert cli.interrupted()
    assert "Terminating processes" in record.getvalue() and "WorkflowError" in record.getvalue()
    # a job under that Snakemake process writes the line to its rule log only
    proc = subprocess.run(
        [sys.executable, "-c", "import softmax_ood.cli; raise KeyboardInterrupt"],
        env={
            **os.environ,
            cli.QUIET_INTERRUPT_ENV: "1",
            "PYTHONPATH": str(JOBSTART.parents[1] / "src"),
        },
        capture_output=True,
        text=True,
    )
    assert proc.stderr == ""


def test_ctrl_c_while_snakemake_reads_the_workflow_is_one_line():
    """Before the first job (parsing, building the DAG) nothing of Snakemake catches Ctrl-C:
    the logger plugin, imported first, makes it the one line."""
    from snakemake_logger_plugin_softmax_ood import INTERRUPTED as HOOKS
    from softmax_ood.cli import INTERRUPTED

    assert HOOKS == INTERRUPTED
    src = str(JOBSTART.parents[1] / "src")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import snakemake_logger_plugin_softmax_ood\nraise KeyboardInterrupt",
        ],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
    )
    assert proc.stderr.strip() == INTERRUPTED, proc.stderr
