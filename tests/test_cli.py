"""The script runner: a user's problem is one sentence and exit 1, a bug keeps its traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from softmax_ood.cli import BENCHMARKS_ENV
from softmax_ood.errors import (
    ArtifactError,
    ConfigError,
    DownloadError,
    MissingDataError,
    UserError,
)
from softmax_ood.numerics import NumericsError
from softmax_ood.train import DivergedError, NonFiniteLossError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "cls",
    [
        ConfigError,
        MissingDataError,
        DownloadError,
        ArtifactError,
        NumericsError,
        DivergedError,
        NonFiniteLossError,
    ],
)
def test_every_user_facing_error_is_a_user_error(cls):
    assert issubclass(cls, UserError)


def _run(tmp_path, raise_line: str) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(ROOT / "src")!r})
            from softmax_ood.cli import run_script
            from softmax_ood.errors import ConfigError

            def main():
                {raise_line}

            run_script(main, {str(tmp_path / "job.log")!r})
            """
        )
    )
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )


def test_a_user_error_is_one_sentence_without_traceback(tmp_path):
    proc = _run(
        tmp_path, "raise ConfigError('config error: recipes.sgd.lr is -1; it must be positive')"
    )
    assert proc.returncode == 1
    assert "config error: recipes.sgd.lr is -1" in proc.stderr and "Traceback" not in proc.stderr


def test_a_library_bug_raising_value_error_keeps_its_traceback(tmp_path):
    proc = _run(tmp_path, "raise ValueError('shapes (3,) and (4,) do not align')")
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "ValueError: shapes (3,) and (4,)" in proc.stderr


@pytest.mark.parametrize(
    ("code", "what"),
    [("ENOSPC", "No space left on device"), ("EACCES", "Permission denied")],
    ids=["full-disk", "read-only"],
)
def test_a_write_the_machine_refuses_is_one_sentence_naming_the_file(tmp_path, code, what):
    """Issue 40: a full disk ended a job with a 10-line traceback naming no file and an empty
    rule log. The failing write (injected into the job helper every output goes through) is
    one sentence naming the file and what to do, on stderr and in the rule log; nothing
    half-written is left."""
    out = tmp_path / "results/t1.parquet"
    out.parent.mkdir()
    refuse = f"OSError(errno.{code}, {what!r})"
    proc = _run(
        tmp_path,
        "import errno, softmax_ood.provenance as pv; "
        f"pv.os.fdopen = lambda fd, mode: (_ for _ in ()).throw({refuse}); "
        f"pv.write_bytes_atomic({str(out)!r}, b'x')",
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f" {out}: {what}" in lines[0], proc.stderr
    assert "then rerun the same snakemake command" in lines[0]
    assert lines[0].split(": ", 1)[1] in (tmp_path / "job.log").read_text()
    assert list(out.parent.iterdir()) == []


def test_an_unrelated_os_error_keeps_its_traceback(tmp_path):
    proc = _run(tmp_path, "import errno; raise OSError(errno.EPIPE, 'Broken pipe')")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_a_job_names_its_rule_and_script_in_every_provenance_record(tmp_path):
    """run_job: the rule and the script (the original, not Snakemake's temporary copy) are
    recorded without the script typing them."""
    scriptdir = tmp_path / "src/softmax_ood/studies/demo/scripts"
    scriptdir.mkdir(parents=True)
    copy = tmp_path / ".snakemake/scripts/tmpab12_x9.table.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            from types import SimpleNamespace
            sys.path.insert(0, {str(ROOT / "src")!r})
            from softmax_ood.cli import run_job
            from softmax_ood.provenance import provenance_record

            snakemake = SimpleNamespace(
                rule="demo_table", scriptdir={str(scriptdir)!r}, log=["job.log"]
            )

            def main():
                rec = provenance_record(inputs={{}}, extra={{"table": "t1"}})
                print(json.dumps({{k: rec[k] for k in ("rule", "script", "table")}}))

            run_job(snakemake, main)
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, str(copy)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "rule": "demo_table",
        "script": "src/softmax_ood/studies/demo/scripts/table.py",
        "table": "t1",
    }


def test_no_workflow_script_sets_up_its_own_import_path_or_types_its_name():
    scripts = sorted(ROOT.glob("src/softmax_ood/studies/*/scripts/*.py"))
    scripts += sorted((ROOT / "workflow/scripts").glob("*.py"))
    assert len(scripts) > 20
    for script in scripts:
        text = script.read_text()
        assert "run_job(snakemake, " in text, script
        assert '"script":' not in text and '"rule": snakemake.rule' not in text, script
        if script.name != "render_report.py":  # also a command-line tool outside Snakemake
            assert "sys.path" not in text, script


def test_a_job_writes_its_exact_cpu_seconds_beside_its_benchmark_file(tmp_path):
    """run_job: getrusage of the job's process and of its ended children (a notebook kernel),
    at the end of the job, in ``<benchmark>.cpu.json`` (the rule's pattern, job's wildcards)."""
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import subprocess, sys
            from types import SimpleNamespace
            sys.path.insert(0, {str(ROOT / "src")!r})
            from softmax_ood.cli import run_job

            snakemake = SimpleNamespace(
                rule="demo_table", scriptdir=".", log=["job.log"], output=[], threads=1,
                wildcards=SimpleNamespace(items=lambda: [("table", "t1")]),
            )

            def main():  # a child that burns CPU: counted once it has ended
                subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)

            run_job(snakemake, main)
            """
        )
    )
    env = {
        **os.environ,
        BENCHMARKS_ENV: json.dumps({"demo_table": "logs/benchmarks/demo_table/{table}.tsv"}),
    }
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads((tmp_path / "logs/benchmarks/demo_table/t1.cpu.json").read_text())
    assert rec["rule"] == "demo_table"
    assert rec["children_s"] > 0.02 and rec["self_s"] > 0
    assert rec["cpu_s"] == pytest.approx(rec["self_s"] + rec["children_s"], abs=1e-3)
    assert 0 < rec["startup_s"] <= rec["self_s"]
