"""The printed rebuild command is the one the user ran (with their --configfile), plus
--forcerun; the closing line does not contradict it; `-d elsewhere` leaves no folder."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from softmax_ood.errors import COMMAND_ENV, rebuild_hint, remove_refused_folder, user_command

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import SMOKE, snakemake  # noqa: E402


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/snakemake", "--cores", "all"], "snakemake --cores all"),
        (
            [
                "/x/site-packages/snakemake/__main__.py",
                "--cores",
                "2",
                "--configfile",
                "config/smoke.yaml",
            ],
            "snakemake --cores 2 --configfile config/smoke.yaml",
        ),
        (
            [
                "snakemake",
                "-R",
                "a",
                "b",
                "--cores",
                "1",
                "--forcerun=c",
                "t.txt",
                "--forcerun",
                "d",
            ],
            "snakemake --cores 1 t.txt",
        ),
        (
            ["snakemake", "--configfile", "my config.yaml"],
            "snakemake --configfile 'my config.yaml'",
        ),
    ],
)
def test_user_command_keeps_everything_but_forcerun(argv, expected):
    assert user_command(argv) == expected


def test_rebuild_hint_is_the_users_command_plus_forcerun(monkeypatch):
    monkeypatch.setenv(COMMAND_ENV, "snakemake --cores 2 --configfile config/smoke.yaml")
    assert rebuild_hint("data/digits", "prepare_data") == (
        "it is made by the rule 'prepare_data'; rebuild it with: snakemake --cores 2 "
        "--configfile config/smoke.yaml --forcerun data/digits"
    )
    monkeypatch.delenv(COMMAND_ENV)
    assert rebuild_hint("data/digits", "prepare_data").endswith(
        "rebuild it with: snakemake --cores all --forcerun data/digits"
    )


def test_a_refused_d_removes_what_it_made_and_nothing_else(tmp_path, monkeypatch):
    """Only the folders noted as missing before Snakemake started go (deepest first, while
    empty), and this run's log file; a folder that existed (even empty, even just made) stays."""
    from snakemake_logger_plugin_softmax_ood import directory_option, missing_folders

    assert directory_option(["snakemake", "-n", "-d", "a/b", "--cores", "1"]) == "a/b"
    assert directory_option(["snakemake", "--directory=x"]) == "x"
    assert directory_option(["snakemake", "-dx"]) == "x"
    assert directory_option(["snakemake", "--dry-run"]) is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    made = missing_folders("a/b/c")
    assert made == tuple(
        str(tmp_path / p) for p in ("a/b/c/.snakemake/log", "a/b/c/.snakemake", "a/b/c", "a/b", "a")
    )
    kept = missing_folders("empty")
    assert kept == (str(tmp_path / "empty/.snakemake/log"), str(tmp_path / "empty/.snakemake"))
    for folder in ("a/b/c", "empty"):
        log = tmp_path / folder / ".snakemake/log"
        log.mkdir(parents=True)
        (log / "this-run.snakemake.log").write_text("x")
    monkeypatch.chdir(tmp_path / "a/b/c")
    assert remove_refused_folder(
        made, [str(tmp_path / "a/b/c/.snakemake/log/this-run.snakemake.log")]
    )
    assert not (tmp_path / "a").exists()
    monkeypatch.chdir(tmp_path / "empty")
    remove_refused_folder(kept, [str(tmp_path / "empty/.snakemake/log/this-run.snakemake.log")])
    assert (tmp_path / "empty").is_dir() and not any((tmp_path / "empty").iterdir())
    # a folder holding anything of the user's stays, with its parents
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "a/b/mine.txt").write_text("x")
    assert (
        remove_refused_folder(missing_folders("zzz") + (str(tmp_path / "a/b"), str(tmp_path / "a")))
        == []
    )
    assert (tmp_path / "a/b/mine.txt").is_file()


@pytest.mark.parametrize(
    ("mode", "folder"),
    [(["--cores", "1"], "empty"), (["--cores", "1"], "a/b/c"), (["-n"], "x/y")],
    ids=["existing-empty", "nested-run", "nested-dry-run"],
)
@pytest.mark.slow
def test_d_elsewhere_removes_every_folder_it_made_and_no_other(tmp_path, mode, folder):
    """Issue 40: ``-d <an existing empty folder>`` deleted the user's folder; ``-d a/b/c``
    left ``a/`` and ``a/b/`` behind."""
    from e2e import ROOT

    cwd = tmp_path / "run"
    (cwd / "empty").mkdir(parents=True)
    proc = snakemake(cwd, *mode, "-s", str(ROOT / "Snakefile"), "-d", folder)
    assert proc.returncode != 0
    assert "this workflow runs in its checkout" in proc.stdout + proc.stderr
    assert sorted(p.name for p in cwd.rglob("*")) == ["empty"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [["-n"], ["--cores", "1"]], ids=["dry-run", "run"])
def test_d_elsewhere_stops_and_leaves_no_folder(tmp_path, mode):
    """A real run also leaves no ``elsewhere/.snakemake/log`` (Snakemake makes it before the
    workflow can refuse)."""
    from e2e import ROOT

    cwd = tmp_path / "run"
    cwd.mkdir()
    proc = snakemake(cwd, *mode, "-s", str(ROOT / "Snakefile"), "-d", "elsewhere")
    assert proc.returncode != 0
    assert "this workflow runs in its checkout" in proc.stdout + proc.stderr
    assert not (cwd / "elsewhere").exists()


@pytest.mark.slow
def test_a_bad_checkpoint_prints_the_users_command_and_no_contradiction(smoke_runs, tmp_path):
    work = tmp_path / "repo"
    shutil.copytree(smoke_runs[0], work, symlinks=True)
    model = work / "results/train/digits/sgd/cnn/ce/seed0/model.pt"
    model.write_bytes(b"not a checkpoint")  # a newer mtime: Snakemake reruns its consumers
    # the train job's outputs record would make the parse-time stale check rebuild the file
    # (tests/test_stale.py); without it (a checkpoint from elsewhere) the loader's own check speaks
    for record in work.glob("results/**/*.outputs.json"):
        if "train/digits/sgd/cnn/ce/seed0/model.pt" in record.read_text():
            record.unlink()
    proc = snakemake(work, "--cores", "2", *SMOKE)
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0
    m = re.search(r"rebuild it with: (snakemake [^\n]*)", err)
    assert m, err[-3000:]
    assert m.group(1) == (
        "snakemake --cores 2 --configfile config/smoke.yaml --forcerun "
        "results/train/digits/sgd/cnn/ce/seed0/model.pt"
    )
    assert "run the rebuild command printed above" in err
    assert "To resume: rerun the same command" not in err
    assert not list((work / ".snakemake/softmax_ood").glob("rebuild-hints-*"))
    # the printed command, pasted as printed, rebuilds it and finishes
    args = m.group(1).split()[1:]
    proc = snakemake(work, *args)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert os.path.getsize(model) > 1000


def test_rebuild_hints_printed_reads_and_clears_the_note(tmp_path, monkeypatch):
    from softmax_ood.cli import _note_rebuild_hint
    from softmax_ood.errors import HINTS_ENV, rebuild_hints_printed

    note = tmp_path / "hints"
    monkeypatch.setenv(HINTS_ENV, str(note))
    assert not rebuild_hints_printed()
    _note_rebuild_hint("data file x is wrong; rebuild it with: snakemake --forcerun x")
    _note_rebuild_hint("a message without a command")
    assert note.read_text().count("\n") == 1
    assert rebuild_hints_printed() and not note.exists()


def test_left_locks_get_one_line_with_the_users_unlock_command(tmp_path):
    """After a SIGKILL the next real run says first how to unlock (Snakemake's LockException
    follows); nothing for a dry run, for --unlock itself, or without locks."""
    from softmax_ood.errors import unlock_hint

    locks = tmp_path / ".snakemake/locks"
    argv = ["/usr/bin/snakemake", "--cores", "all", "--configfile", "config/smoke.yaml"]
    assert unlock_hint(locks, argv) is None
    locks.mkdir(parents=True)
    assert unlock_hint(locks, argv) is None
    (locks / "0.output.lock").write_text("results/x\n")
    hint = unlock_hint(locks, argv)
    assert hint.count("\n") == 0
    assert "snakemake --cores all --configfile config/smoke.yaml --unlock" in hint
    assert unlock_hint(locks, [*argv, "-n"]) is None
    assert unlock_hint(locks, [*argv, "--unlock"]) is None


@pytest.mark.slow
def test_a_run_on_the_locks_a_killed_run_left_says_first_how_to_unlock(tmp_path):
    """The Snakefile's wiring of unlock_hint: the locks Snakemake leaves when SIGKILL ends it
    mid-run (as a real kill left them), then the user's next plain run: the one line, with
    the command pasted as printed, comes before Snakemake's LockException; that command
    unlocks and nothing else is left."""
    from e2e import fresh_copy

    work = fresh_copy(tmp_path / "repo")
    locks = work / ".snakemake/locks"
    locks.mkdir(parents=True)
    # Snakemake writes each job file as the DAG names it (relative to the workflow folder)
    (locks / "0.input.lock").write_text("config/default.yaml\n")
    (locks / "0.output.lock").write_text("results/claims_all.parquet\n")
    proc = snakemake(work, "--cores", "1", *SMOKE, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    hint = "unlock it with: snakemake --cores 1 --configfile config/smoke.yaml --unlock, then rerun"
    assert hint in out, out[-3000:]
    assert out.index(hint) < out.index("LockException"), out[-3000:]
    assert "Traceback" not in out
    unlock = snakemake(work, "--cores", "1", *SMOKE, "--unlock")
    assert unlock.returncode == 0 and not list(locks.glob("*")), unlock.stderr[-2000:]


def test_the_configfile_hook_imports_nothing_of_the_library(tmp_path):
    """Snakemake imports the hook (src/snakemake_logger_plugin_softmax_ood) before the
    Snakefile, which must then import its own checkout's library, not the installed one."""
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\nb: 2\n")
    code = (
        "import sys; from snakemake_logger_plugin_softmax_ood import configfile_problem as p; "
        f"print(p({str(bad)!r})); print(p({str(tmp_path / 'none.yaml')!r})); "
        "print(any(m.split('.')[0] == 'softmax_ood' for m in sys.modules))"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": src},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert (
        lines[0]
        == f"config file {bad} (--configfile) line 3: expected ',' or ']', but got '<stream end>'"
    )
    assert lines[1] == f"config file {tmp_path / 'none.yaml'} (--configfile): no such file"
    assert lines[2] == "False"


@pytest.mark.slow
def test_a_binary_configfile_is_one_sentence_saying_targets_go_first(tmp_path):
    """Issue 40: a target written after ``--configfile`` (a figure) is read as a config file;
    the logger plugin crashed with a 32-line UnicodeDecodeError."""
    from e2e import ROOT

    from softmax_ood.config import ConfigError, checked_configfile

    png = tmp_path / "fig.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    with pytest.raises(ConfigError, match="fig.png is not a UTF-8 text"):
        checked_configfile(png)
    proc = snakemake(
        tmp_path,
        "-n",
        "-s",
        str(ROOT / "Snakefile"),
        "--configfile",
        str(ROOT / "config/smoke.yaml"),
        "fig.png",
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert (
        "Error: config file fig.png (--configfile) is not a text (YAML) file; if it is a target, "
        "put targets before --configfile (every name after --configfile is read as a config file)"
    ) in out.splitlines(), out
    assert "Traceback" not in out


def _tree(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): p.stat().st_mtime_ns
        for p in root.rglob("*")
        if p.is_file() and ".snakemake/log" not in p.as_posix()
    }


@pytest.mark.slow
def test_a_run_beside_a_live_one_stops_before_it_touches_the_tree(tmp_path):
    """Issue 40: a second run started beside a live one ran the change check (re-dating the
    live run's files) before it failed on the lock. Now the locks and a live job of the other
    run (its script copy in .snakemake/scripts) stop it, a dry run too, with one sentence and
    nothing of the tree read or written; once that run is gone the locks are a killed run's."""
    import subprocess

    from e2e import fresh_copy

    work = fresh_copy(tmp_path / "repo")
    locks = work / ".snakemake/locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("config/default.yaml\n")
    (locks / "0.output.lock").write_text("results/claims_all.parquet\n")
    job = work / ".snakemake/scripts/tmpk2j4l1.train.py"
    job.parent.mkdir(parents=True)
    job.write_text("import time\ntime.sleep(600)\n")
    live = subprocess.Popen([sys.executable, str(job.relative_to(work))], cwd=work)
    try:
        before = _tree(work)
        for mode in (["--cores", "1"], ["-n"]):
            proc = snakemake(work, *mode, *SMOKE, timeout=300)
            out = proc.stdout + proc.stderr
            assert proc.returncode != 0, out[-2000:]
            sentence = (
                f"locked: another snakemake run (process {live.pid}) is working in {work}; "
                "wait for it to end (or stop it), then rerun"
            )
            assert sentence in out.splitlines(), out[-2000:]
            assert "stale:" not in out and "LockException" not in out
            assert _tree(work) == before
    finally:
        live.kill()
        live.wait()
    proc = snakemake(work, "-n", *SMOKE, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["results/train", "reports"])
def test_a_read_only_folder_is_one_sentence_before_the_first_job(tmp_path, folder):
    """Issue 40: a read-only results/ subfolder or reports/ gave Snakemake's 64-line traceback
    when it prepared the first job writing there. As root, the folder's mode binds only
    without CAP_DAC_OVERRIDE (setpriv drops it)."""
    import subprocess

    from e2e import fresh_copy

    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv: a read-only folder cannot be made")
        prefix = ["setpriv", "--bounding-set=-dac_override"]
    work = fresh_copy(tmp_path / "repo")
    ro = work / folder
    ro.mkdir(parents=True)
    ro.chmod(0o555)
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "snakemake", "--cores", "1", *SMOKE],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
    finally:
        ro.chmod(0o755)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    sentence = f"the folder {folder} is read-only for this user; make it writable"
    assert sentence in out, out[-3000:]
    assert "Traceback" not in out
    assert not (work / "data").exists()  # before the first job
    assert not list((work / ".snakemake/locks").glob("*"))


def test_the_snakefile_has_one_handler_per_event():
    """Snakemake keeps the last onstart/onsuccess/onerror handler it reads: two would silently
    drop one (the read-only check or the removal of killed downloads' partial files)."""
    import re

    root = Path(__file__).resolve().parents[1]
    files = [root / "Snakefile", *sorted((root / "rules").glob("*.smk"))]
    files += sorted((root / "src/softmax_ood/studies").glob("*/rules.smk"))
    text = "\n".join(f.read_text() for f in files)
    for event in ("onstart", "onsuccess", "onerror"):
        assert len(re.findall(rf"(?m)^{event}:", text)) == 1, event
    handler = text[text.index("\nonstart:") :].split("\n\n\n")[0]
    assert "unwritable(" in handler and "remove_all_partial_files(" in handler
