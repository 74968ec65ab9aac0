"""Shared trained models through DVC (softmax_ood.share): the pieces, and the round trip on the
smoke config (produce, push to a local-directory remote, fresh clone, pull, rebuild without a
single training, evaluation or discriminator job, byte-identical to the producer)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from e2e import IGNORE, ROOT, SMOKE, tree_hashes  # noqa: E402

from softmax_ood import share  # noqa: E402
from softmax_ood.provenance import git_info  # noqa: E402

DOT = """digraph snakemake_dag {
    graph[bgcolor=white, margin=0];
	0[label = "all", color = "0.00 0.6 0.85", style="rounded"];
	1[label = "table", color = "0.18 0.6 0.85", style="rounded"];
	2[label = "evaluate", color = "0.05 0.6 0.85", style="rounded"];
	3[label = "train", color = "0.11 0.6 0.85", style="rounded"];
	4[label = "prepare_data", color = "0.49 0.6 0.85", style="rounded"];
	5[label = "figure", color = "0.49 0.6 0.85", style="rounded"];
	1 -> 0
	2 -> 1
	3 -> 2
	4 -> 3
	4 -> 2
	4 -> 5
	5 -> 0
}
"""


def test_rulegraph_ancestors_share_everything_upstream_of_the_compute_rules():
    deps = share.parse_rulegraph(DOT)
    assert deps["evaluate"] == {"train", "prepare_data"}
    assert share.ancestors(deps, ["evaluate", "not_a_rule"]) == {
        "evaluate",
        "train",
        "prepare_data",
    }
    assert "figure" not in share.ancestors(deps, share.COMPUTE_RULES)


def test_summary_rows_are_parsed():
    text = (
        "Building DAG of jobs...\n"
        "output_file\tdate\trule\tlog-file(s)\tstatus\tplan\n"
        "results/a.parquet\t-\ttable\t-\tmissing\tupdate pending\n"
        "results/train/x/model.pt\tMon\ttrain\tlogs/t.log\tok\tno update\n"
    )
    rows = share.parse_summary(text)
    assert [r["rule"] for r in rows] == ["table", "train"]
    assert share.shared_outputs(rows, {"train"})[0]["plan"] == "no update"


def _touch(root: Path, *files: str) -> None:
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text(f)


def test_tracked_units_are_whole_folders_unless_another_rule_writes_there(tmp_path):
    _touch(
        tmp_path,
        "results/train/d/r/a/l/seed0/model.pt",
        "results/train/d/r/a/l/seed1/model.pt",
        "results/kang/d/eval/x.parquet",
        "results/kang/d/eval/undeclared.prov.json",
        "results/kang/d/tables/t.parquet",
        "results/seddik/d/features.parquet",
        "results/seddik/d/figures/f.png",
        "data/digits/x.npy",
    )
    files = [
        "results/train/d/r/a/l/seed0/model.pt",
        "results/train/d/r/a/l/seed1/model.pt",
        "results/kang/d/eval/x.parquet",
        "results/seddik/d/features.parquet",
        "data/digits/",
    ]
    others = ["results/kang/d/tables/t.parquet", "results/seddik/d/figures/f.png"]
    assert share.tracked_units(files, tmp_path, others) == [
        "data",
        "results/kang/d/eval",
        "results/seddik/d/features.parquet",
        "results/train",
    ]


def test_set_mtimes_gives_every_path_one_time(tmp_path):
    _touch(tmp_path, "u/a/b.txt", "u/c.txt", "v.txt")
    n = share.set_mtimes([tmp_path / "u", tmp_path / "v.txt"], 1_000_000.0)
    assert n == 5  # u, u/a, u/a/b.txt, u/c.txt, v.txt
    assert {p.stat().st_mtime for p in tmp_path.rglob("*")} == {1_000_000.0}


def test_snakemake_records_are_copied_in_snakemakes_layout(tmp_path):
    long = "results/" + "x" * 300 + "/model.pt"
    src, dst = tmp_path / "meta", tmp_path / "shared"
    for out in ("data/digits", long):
        f = src / share.metadata_path(out)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(out)
    assert share.metadata_path("data/digits/") == Path("ZGF0YS9kaWdpdHM=")
    assert len(share.metadata_path(long).parts) == 2  # names longer than 255 are split
    assert share.copy_records(["data/digits", long, "results/none"], src, dst) == 2
    assert (dst / share.metadata_path(long)).read_text() == long


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def test_git_info_names_the_last_code_commit_not_a_pointer_commit(tmp_path):
    _git(tmp_path, "init", "-q")
    _touch(tmp_path, "code.py", "data.dvc")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "code")
    code = _git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "data.dvc").write_text("md5: 1\n")
    _touch(tmp_path, "results/train.dvc")
    assert git_info(tmp_path) == {"commit": code, "dirty": False}  # pointer edits: not dirty
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "pointers")
    assert git_info(tmp_path) == {"commit": code, "dirty": False}
    (tmp_path / "code.py").write_text("changed")
    assert git_info(tmp_path)["dirty"] is True
    _git(tmp_path, "commit", "-qam", "code 2")
    assert git_info(tmp_path)["commit"] == _git(tmp_path, "rev-parse", "HEAD") != code


def test_pointer_units_are_the_tracked_paths_not_the_dvc_folder(tmp_path):
    (tmp_path / ".dvc").mkdir()
    _touch(tmp_path, "data.dvc", "results/train.dvc", "results/kang/d/eval.dvc")
    assert share.pointer_units(tmp_path) == ["data", "results/kang/d/eval", "results/train"]


def test_push_refuses_uncommitted_code(tmp_path):
    _git(tmp_path, "init", "-q")
    _touch(tmp_path, "code.py")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "code")
    (tmp_path / "code.py").write_text("changed")
    with pytest.raises(share.ShareError, match="uncommitted code"):
        share.push(tmp_path, [])


def test_pull_without_pointers_says_what_to_do(tmp_path):
    with pytest.raises(share.ShareError, match="share push"):
        share.pull(tmp_path, [])


# --- the round trip ------------------------------------------------------------------------------

# every rule whose job the colleague must not run: the compute rules and what they rest on
NOT_RERUN = (*share.COMPUTE_RULES, "prepare_data", "kang_grid", "download_source")
# wall times, not reproducible bytes by nature (README); DVC's own ignore files
UNREPRODUCIBLE = re.compile(r"(^|/)(seddik_timing_[^/]*\.json|\.gitignore)$")


def _copy_ignore(folder, names):
    skip = set(IGNORE(folder, names)) | {".git"}
    if Path(folder).name == ".dvc":
        skip |= {"cache", "tmp"}
    return skip


def _run(cwd: Path, *cmd: str, timeout: int = 1800) -> str:
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": str(cwd / "src"),
        "GIT_AUTHOR_NAME": "producer",
        "GIT_AUTHOR_EMAIL": "producer@example.org",
        "GIT_COMMITTER_NAME": "producer",
        "GIT_COMMITTER_EMAIL": "producer@example.org",
    }
    proc = subprocess.run(
        list(cmd), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{out[-6000:]}"
    return out


def _outputs(root: Path) -> dict[str, str]:
    """Every output's digest as the golden manifest takes it (softmax_ood.golden.digest: the
    bytes, with the commit a record names left out): the producer's outputs were made at the
    session's commit, the consumer's rebuilds at the producer's snapshot commit. Job records
    (``*.outputs.json``: the raw hashes of those outputs) and logs are not outputs."""
    from softmax_ood import golden

    out = {}
    for top in ("data", "results", "reports"):
        for k in tree_hashes(root / top):
            key = f"{top}/{k}"
            if not UNREPRODUCIBLE.search(key) and not key.endswith(golden.EXCLUDE_SUFFIXES):
                out[key] = golden.digest(root / key)
    return out


#: what a run of the workflow leaves in its checkout (besides the code)
RUN_STATE = ("data", "results", "reports", "logs", ".snakemake")


@pytest.mark.slow
def test_round_trip_rebuilds_everything_without_training_byte_identical(smoke_runs, tmp_path):
    producer, consumer, remote = tmp_path / "producer", tmp_path / "consumer", tmp_path / "remote"
    shutil.copytree(ROOT, producer, ignore=_copy_ignore, symlinks=True)
    remote.mkdir()
    _run(producer, "git", "init", "-q", "-b", "main")
    _run(producer, sys.executable, "-m", "dvc", "remote", "add", "-d", "-f", "shared", str(remote))
    _run(producer, "git", "add", "-A")
    _run(producer, "git", "commit", "-qm", "snapshot of the working tree")

    # the producer: the whole smoke workflow (the session's smoke run of this same code, copied
    # with its modification times and Snakemake's metadata: a run here would repeat it), then push
    for part in RUN_STATE:
        if (smoke_runs[0] / part).exists():
            shutil.copytree(smoke_runs[0] / part, producer / part, symlinks=True)
    shutil.rmtree(producer / ".snakemake" / "locks", ignore_errors=True)
    assert "Nothing to be done" in _run(
        producer, sys.executable, "-m", "snakemake", "-n", "--cores", "2", *SMOKE
    ), "the copied smoke run is not complete and up to date in the producer"
    pushed = _run(producer, sys.executable, "-m", "softmax_ood.share", "push", *SMOKE)
    assert "results/train" in pushed and "results/eval" in pushed, pushed
    assert _run(producer, "git", "status", "--porcelain", "--untracked-files=no") == ""
    assert any(remote.rglob("*")), "nothing reached the remote"

    # the colleague: a fresh clone, one command
    _run(tmp_path, "git", "clone", "-q", str(producer), str(consumer))
    assert not (consumer / "results/train").exists()
    log = _run(
        consumer, sys.executable, "-m", "softmax_ood.share", "pull", *SMOKE, "--", "--cores", "2"
    )
    ran = set(re.findall(r"^(?:local)?rule (\w+):", log, flags=re.M))
    assert ran, f"the rebuild ran no job:\n{log[-3000:]}"
    assert not ran & set(NOT_RERUN), f"the rebuild ran {sorted(ran & set(NOT_RERUN))}"
    assert {"logitnorm_table", "kang_report", "results_report"} <= ran

    a, b = _outputs(producer), _outputs(consumer)
    assert len(a) > 100
    assert a.keys() == b.keys(), sorted(a.keys() ^ b.keys())[:10]
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, f"{len(differ)} files differ, e.g. {differ[:5]}"


# --- what a pull brings is verified before anything uses it -------------------------------------


def _fake_pull(monkeypatch, tmp_path: Path, make) -> Path:
    """A checkout with one pointer (results/train.dvc) whose `dvc pull` runs ``make(root)``."""
    root = tmp_path / "repo"
    _touch(root, "results/train.dvc")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_bytes(b"f")

    def fake_run(cmd, cwd, what):
        assert "snakemake" not in " ".join(cmd), "nothing may run"
        if "pull" in cmd:
            make(cwd)
        return ""

    monkeypatch.setattr(share, "_run", fake_run)
    return root


def _record(root: Path, outputs: dict[str, str]) -> None:
    from softmax_ood.provenance import RECORD_DIGEST_KEY, _record_digest

    body = {"outputs": outputs, "rule": "train", "script": None}
    body[RECORD_DIGEST_KEY] = _record_digest(body)
    (root / "results/train/model.outputs.json").write_text(__import__("json").dumps(body))


def _model(root: Path, recorded: str | None = None) -> None:
    import hashlib

    _touch(root, "results/train/model.pt")
    sha = recorded or hashlib.sha256(b"results/train/model.pt").hexdigest()
    _record(root, {"results/train/model.pt": sha})


def test_an_intact_pull_is_kept(monkeypatch, tmp_path):
    root = _fake_pull(monkeypatch, tmp_path, _model)
    assert share.pull(root, [], run=False) == 0
    assert (root / "results/train/model.pt").is_file()


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda r: _model(r, "0" * 64), "the pulled results/train/model.pt does not match"),
        (
            lambda r: (_model(r), _record(r, {"/": "0" * 64})),
            "refusing results/train/model.outputs.json: it names /, which is outside",
        ),
        (
            lambda r: (_model(r), _record(r, {"../outside/f": "0" * 64})),
            "it names ../outside/f, which is outside",
        ),
        (
            lambda r: (r / "results/train").symlink_to(r.parent / "outside"),
            "the pulled results/train is or holds a link out of results/, data/ and reports/",
        ),
    ],
    ids=["hash", "root", "up", "link"],
)
def test_a_pull_that_does_not_match_its_records_is_refused_and_removed(
    monkeypatch, tmp_path, make, says
):
    root = _fake_pull(monkeypatch, tmp_path, make)
    with pytest.raises(share.ShareError, match=re.escape(says)) as err:
        share.pull(root, [])
    assert "the pulled files were removed again and nothing was run" in str(err.value)
    assert not os.path.lexists(root / "results/train")
    assert (tmp_path / "outside/f").read_bytes() == b"f"


def test_metadata_path_is_snakemakes_own_cut_for_long_outputs():
    """A long output's record sits in "@"-folders of 254 characters (Snakemake's
    persistence/file.py); share and provenance read it at the same place."""
    from softmax_ood.provenance import metadata_path

    short = "results/x/model.pt"
    assert share.metadata_path(short) == metadata_path(short)
    assert len(share.metadata_path(short).parts) == 1
    long = "results/" + "y" * 300 + "/model.pt"
    parts = share.metadata_path(long).parts
    assert len(parts) == 2 and parts[0].startswith("@") and len(parts[0]) == 255
    assert len(parts[1]) <= 254
