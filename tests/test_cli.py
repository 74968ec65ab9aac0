"""The script runner: a user's problem is one sentence and exit 1, a bug keeps its traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
