"""Nothing stale unnoticed: softmax_ood.stale finds files whose bytes no longer match what
their consumers recorded (or that a record names but are gone) and marks them for Snakemake;
the end-to-end tests (slow) corrupt a copy of the smoke run as a user would."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from softmax_ood.provenance import path_sha256, write_outputs_record
from softmax_ood.stale import MARK_MTIME, Stale, find_stale, mark

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import SMOKE, flip_byte_keep_mtime, snakemake  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODEL = "results/train/digits/sgd/cnn/ce/seed0/model.pt"
SUMMARY = "results/eval/digits/sgd/cnn/ce/seed0/summary.json"
DATA_FILE = "data/digits/id_test_x.npy"


def _tree(root: Path) -> Path:
    """data/digits with meta.json, a model, its summary and a table sidecar recording both."""
    d = root / "data/digits"
    d.mkdir(parents=True)
    (d / "id_test_x.npy").write_bytes(b"x" * 100)
    (d / "meta.json").write_text(
        json.dumps({"files": {"id_test_x.npy": path_sha256(d / "id_test_x.npy")}})
    )
    m = root / MODEL
    m.parent.mkdir(parents=True)
    m.write_bytes(b"weights" * 10)
    s = root / SUMMARY
    s.parent.mkdir(parents=True)
    s.write_text(
        json.dumps({"inputs": {"model_sha256": path_sha256(m), "data_sha256": path_sha256(d)}})
    )
    t = root / "results/logitnorm/digits/runs.prov.json"
    t.parent.mkdir(parents=True)
    (t.parent / "runs.parquet").write_bytes(b"table")
    t.write_text(json.dumps({"inputs": {"summary": {"path": SUMMARY, "sha256": path_sha256(s)}}}))
    later = s.stat().st_mtime + 10  # records are written after their inputs
    for f in (s, t, t.parent / "runs.parquet"):
        os.utime(f, (later, later))
    return root


def _truncate_keep_mtime(path: Path) -> None:
    st = path.stat()
    path.write_bytes(path.read_bytes()[: max(1, st.st_size // 2)])
    os.utime(path, (st.st_atime, st.st_mtime))


def test_an_intact_tree_has_nothing_stale(tmp_path):
    assert find_stale(_tree(tmp_path)) == []


def test_a_truncated_data_file_marks_its_data_folder(tmp_path):
    root = _tree(tmp_path)
    _truncate_keep_mtime(root / DATA_FILE)
    found = find_stale(root)
    assert [(s.path, s.marks) for s in found][0] == (DATA_FILE, ("data/digits",))
    assert "does not match the sha256 recorded in data/digits/meta.json" in found[0].sentence()
    assert "data/digits" in mark(found, root)
    assert (root / "data/digits").stat().st_mtime == MARK_MTIME
    assert (root / DATA_FILE).stat().st_mtime == MARK_MTIME


def test_a_truncated_model_with_its_mtime_kept_is_marked(tmp_path):
    root = _tree(tmp_path)
    _truncate_keep_mtime(root / MODEL)
    (found,) = find_stale(root)
    assert found.path == MODEL and found.record == SUMMARY and found.marks == (MODEL,)
    mark([found], root)
    assert (root / MODEL).stat().st_mtime == MARK_MTIME


def test_a_changed_file_newer_than_its_record_is_left_to_snakemake(tmp_path):
    root = _tree(tmp_path)
    (root / MODEL).write_bytes(b"retrained")  # newer mtime: Snakemake reruns the consumer
    t = (root / SUMMARY).stat().st_mtime + 100
    os.utime(root / MODEL, (t, t))
    assert find_stale(root) == []


def test_a_deleted_intermediate_marks_its_consumer(tmp_path):
    root = _tree(tmp_path)
    (root / SUMMARY).unlink()
    (found,) = find_stale(root)
    assert found.missing and found.path == SUMMARY
    assert found.marks == (
        "results/logitnorm/digits/runs.parquet",
        "results/logitnorm/digits/runs.prov.json",
    )
    assert "is missing but recorded as an input in results/logitnorm/digits/runs.prov.json" in (
        found.sentence()
    )


def test_a_damaged_output_nothing_reads_is_marked(tmp_path):
    """A leaf (a table's markdown) against its own job's outputs record, mtime kept: it is
    marked itself, so Snakemake reruns the job that made it."""
    root = _tree(tmp_path)
    md = root / "results/logitnorm/digits/runs.md"
    md.write_text("| a |\n| 0.5 |\n")
    os.chdir(root)
    try:
        write_outputs_record(["results/logitnorm/digits/runs.parquet", str(md.relative_to(root))])
    finally:
        os.chdir(ROOT)
    assert find_stale(root) == []
    flip_byte_keep_mtime(md)
    (found,) = find_stale(root)
    assert found.path == "results/logitnorm/digits/runs.md" and found.marks == (found.path,)
    assert found.sentence() == (
        "results/logitnorm/digits/runs.md does not match the sha256 its job recorded in "
        "results/logitnorm/digits/runs.outputs.json (changed with its modification time kept); "
        "rebuilding it and everything made from it"
    )
    assert mark([found], root) == [found.path] and md.stat().st_mtime == MARK_MTIME


def test_a_damaged_output_with_a_new_mtime_says_so(tmp_path):
    root = _tree(tmp_path)
    os.chdir(root)
    try:
        write_outputs_record(["results/logitnorm/digits/runs.parquet"])
    finally:
        os.chdir(ROOT)
    table = root / "results/logitnorm/digits/runs.parquet"
    table.write_bytes(b"tablX")
    later = (root / "results/logitnorm/digits/runs.outputs.json").stat().st_mtime + 5
    os.utime(table, (later, later))
    (found,) = find_stale(root)
    assert "(changed after the record was written)" in found.sentence()
    assert "modification time kept" not in found.sentence()


def test_an_output_damaged_with_its_mtime_kept_says_so_after_snakemake_touched_it(tmp_path):
    """Snakemake sets a job's outputs' mtime when the job ends, after the job wrote its
    outputs record, and keeps that time in its metadata (endtime): an output changed with
    that mtime kept is "changed with its modification time kept", one touched later is
    "changed after the record was written" (a smoke run showed every output line saying
    the latter with the mtime kept)."""
    import base64

    root = _tree(tmp_path)
    table = "results/logitnorm/digits/runs.parquet"
    os.chdir(root)
    try:
        record = root / write_outputs_record([table])
    finally:
        os.chdir(ROOT)
    end = record.stat().st_mtime + 1.2  # as measured: ~1 s after the record
    os.utime(root / table, (end, end))
    meta = root / ".snakemake/metadata" / base64.urlsafe_b64encode(table.encode()).decode()
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"rule": "logitnorm_aggregate", "endtime": end}))
    assert find_stale(root) == []
    flip_byte_keep_mtime(root / table)
    (found,) = find_stale(root)
    assert "(changed with its modification time kept)" in found.sentence()
    os.utime(root / table, (end + 60, end + 60))
    (found,) = find_stale(root)
    assert "(changed after the record was written)" in found.sentence()


def test_a_sidecar_the_rule_does_not_declare_is_recorded_and_rebuilt_through_its_table(tmp_path):
    """write_parquet writes ``<table>.prov.json`` beside a table; some rules declare only the
    table (a smoke run had 11 such sidecars in no outputs record: a byte flipped in one's
    versions or seeds went unseen). The record holds it; a damaged one marks its table too,
    the declared output whose job rewrites both."""
    root = _tree(tmp_path)
    table = "results/logitnorm/digits/runs.parquet"
    side = root / "results/logitnorm/digits/runs.prov.json"
    os.chdir(root)
    try:
        record = root / write_outputs_record([table])
    finally:
        os.chdir(ROOT)
    assert "results/logitnorm/digits/runs.prov.json" in json.loads(record.read_text())["outputs"]
    assert find_stale(root) == []
    text = side.read_text()
    side.write_text(text.replace('"sha256"', '"sha256" ', 1))  # no input's hash changes
    os.utime(side, (record.stat().st_mtime, record.stat().st_mtime))
    (found,) = find_stale(root)
    assert found.path == side.relative_to(root).as_posix() and found.output
    assert found.marks == (found.path, table)


@pytest.mark.slow
def test_any_byte_flipped_in_an_outputs_record_reruns_its_job_and_is_named(tmp_path):
    """The record itself, one byte at a time (mtime kept): a hash, a path, the rule or the
    script changed, or the JSON broken; each is found (its job's outputs marked) and named
    by the audit. Before records carried their own sha256, half of these went unseen."""
    import io

    from softmax_ood.audit import audit

    root = _tree(tmp_path)
    md = root / "results/logitnorm/digits/runs.md"
    md.write_text("| a |\n| 0.5 |\n")
    os.chdir(root)
    try:
        record = root / write_outputs_record(
            ["results/logitnorm/digits/runs.parquet", "results/logitnorm/digits/runs.md"],
            rule="logitnorm_table",
            script="workflow/scripts/table.py",
        )
    finally:
        os.chdir(ROOT)
    rel = record.relative_to(root).as_posix()
    assert find_stale(root) == []
    original, st = record.read_bytes(), record.stat()
    for i in range(len(original)):
        damaged = bytearray(original)
        damaged[i] ^= 0x01
        record.write_bytes(bytes(damaged))
        os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns))
        found = [f for f in find_stale(root) if f.path == rel]
        assert found, (i, chr(original[i]))
        assert "results/logitnorm/digits/runs.parquet" in found[0].marks
        assert found[0].sentence().startswith(f"{rel}, the outputs record of the job that made ")
        out = io.StringIO()
        assert audit(record, root, out=out) == 1, (i, out.getvalue())
        assert f"DIFFERS  {rel} " in out.getvalue()
        out = io.StringIO()  # and the files it records name it
        assert audit(md, root, out=out) == 1, (i, out.getvalue())
        assert f"{rel} (the outputs record of the job that wrote " in out.getvalue()
    record.write_bytes(original)
    assert find_stale(root) == []


def test_an_outputs_record_without_its_own_sha256_is_not_trusted_but_rerun(tmp_path):
    """A record of the older format (no record_sha256) is not taken as it is: nothing it
    names is read, and the job that wrote it (its siblings) reruns, writing today's format;
    the audit names it."""
    import io

    from softmax_ood.audit import audit

    root = _tree(tmp_path)
    rec = root / "results/logitnorm/digits/runs.outputs.json"
    table = "results/logitnorm/digits/runs.parquet"
    body = {"outputs": {table: path_sha256(root / table)}, "rule": "r", "script": None}
    rec.write_text(json.dumps(body, indent=2))
    (found,) = find_stale(root)
    assert found.path == rec.relative_to(root).as_posix() and table in found.marks
    assert "has no record_sha256 (written before records carried their own sha256)" in (
        found.sentence()
    )
    out = io.StringIO()
    assert audit(rec, root, out=out) == 1 and "has no record_sha256" in out.getvalue()


OLD = 1_000_000.0  # the outside files' mtime: older than every record, so a check would act


def _hostile(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A tree (under ``tmp_path/repo``) whose records name files outside it, every way a
    record from elsewhere could: an absolute path, a ``../`` path, a path through a symlink in
    results/ that leads out, ``/``, a symlinked record, a data file name with ``../``. Returns
    (root, the outside folder, {record: the outside path it names})."""
    from softmax_ood.provenance import RECORD_DIGEST_KEY, _record_digest

    root = _tree(tmp_path / "repo")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.bin").write_bytes(b"s" * 100)
    (outside / "sub/more.bin").write_bytes(b"m" * 100)
    (outside / "evil.prov.json").write_text(
        json.dumps({"inputs": {"x": {"path": str(outside / "sub"), "sha256": "0" * 64}}})
    )
    (root / "results/link").symlink_to(outside, target_is_directory=True)
    (root / "results/linked.prov.json").symlink_to(outside / "evil.prov.json")
    side = root / "results/logitnorm/digits"
    named = {
        "results/logitnorm/digits/abs.prov.json": str(outside / "secret.bin"),
        "results/logitnorm/digits/up.prov.json": "../outside/sub",
        "results/logitnorm/digits/via.prov.json": "results/link/secret.bin",
    }
    for rec, path in named.items():  # beside one intact input: the whole record is ignored
        inputs = {
            "ok": {"path": SUMMARY, "sha256": "0" * 64},
            "x": {"path": path, "sha256": "0" * 64},
        }
        (root / rec).write_text(json.dumps({"inputs": inputs}))
    for name, path in (("root", "/"), ("dir", "results/link")):  # outputs records, self-hashed
        body = {"outputs": {path: "0" * 64}, "rule": "r", "script": None}
        body[RECORD_DIGEST_KEY] = _record_digest(body)
        (side / f"{name}.outputs.json").write_text(json.dumps(body))
        named[f"results/logitnorm/digits/{name}.outputs.json"] = path
    named["results/linked.prov.json"] = "results/linked.prov.json"
    meta = root / "data/digits/meta.json"
    files = json.loads(meta.read_text())["files"]
    meta.write_text(json.dumps({"files": {**files, "../../../outside/secret.bin": "0" * 64}}))
    named["data/digits/meta.json"] = "data/digits/../../../outside/secret.bin"
    later = OLD + 10**6
    for rec in named:
        if rec != "data/digits/meta.json":
            os.utime(root / rec, (later, later), follow_symlinks=False)
    newer = (root / SUMMARY).stat().st_mtime + 1  # the data folder changed after its record
    os.utime(meta, (newer, newer))
    for f in [outside, *outside.rglob("*")]:
        os.utime(f, (OLD, OLD))
    return root, outside, named


def test_hostile_records_read_and_re_date_nothing_outside_the_tree(tmp_path, monkeypatch):
    """Records naming files outside the checkout are refused, one sentence each naming the
    record; nothing outside is hashed (every hash call is recorded) or re-dated, and what
    the intact records say is still checked (a damaged model is still found)."""
    import softmax_ood.stale as stale_mod

    root, outside, named = _hostile(tmp_path)
    hashed: list[Path] = []
    real_sha = stale_mod.path_sha256

    def recording_sha(path, cache=None):
        hashed.append(Path(path))
        assert Path(os.path.realpath(path)).is_relative_to(root.resolve()), path
        return real_sha(path, cache)

    monkeypatch.setattr(stale_mod, "path_sha256", recording_sha)
    _truncate_keep_mtime(root / MODEL)
    found = find_stale(root)
    refused = {f.path: f for f in found if f.refused is not None}
    assert sorted(refused) == sorted(named)
    for rec, f in refused.items():
        assert not f.marks
        sentence = f.sentence()
        assert sentence.startswith(f"refusing {rec}: it names ") and sentence.count(". ") == 0
        assert "outside this checkout's results/, data/ and reports/" in sentence
    assert refused["results/logitnorm/digits/root.outputs.json"].refused == "/"
    assert [f.path for f in found if f.refused is None] == [MODEL]  # the intact records count
    assert hashed and all(".." not in p.parts for p in hashed)
    mark(found, root)
    assert (root / MODEL).stat().st_mtime == MARK_MTIME
    for f in [outside, *outside.rglob("*")]:
        assert f.stat().st_mtime == OLD, f
    # mark() itself refuses a path outside and a folder link, whoever asks
    assert mark([Stale("x", "x", ("results/link", "../outside", "/"))], root) == []
    assert all(f.stat().st_mtime == OLD for f in [outside, *outside.rglob("*")])


def test_the_audit_refuses_hostile_records_and_hashes_nothing_outside(tmp_path, monkeypatch):
    """The audit follows the same records: each hostile one is named (exit 1) with the same
    sentence and nothing outside is hashed; an input outside the checkout that Snakemake's
    own record of a job names (a system package's raw file) is noted, not read, not a fault."""
    import base64
    import io

    import softmax_ood.audit as audit_mod

    root, outside, named = _hostile(tmp_path)
    real_sha = audit_mod.path_sha256

    def recording_sha(path, cache=None):
        assert Path(os.path.realpath(path)).is_relative_to(root.resolve()), path
        return real_sha(path, cache)

    monkeypatch.setattr(audit_mod, "path_sha256", recording_sha)
    for rec, path in named.items():
        if rec == "results/linked.prov.json":
            continue  # a link given on the command line: the audit follows the user
        target = root / rec
        if rec.endswith(".prov.json"):  # audited through the table it describes
            target = target.with_name(target.name.replace(".prov.json", ".parquet"))
            target.write_bytes(b"t")
        out = io.StringIO()
        assert audit_mod.audit(target, root, out=out) == 1, (rec, out.getvalue())
        assert f"DIFFERS  refusing {rec}: it names {path}, which is outside" in out.getvalue()
    # Snakemake's record of a job reading a file outside the checkout: not read, not a fault
    meta = root / ".snakemake/metadata" / base64.urlsafe_b64encode(MODEL.encode()).decode()
    meta.parent.mkdir(parents=True)
    raw = str(outside / "secret.bin")
    meta.write_text(json.dumps({"rule": "train", "input": [raw], "input_checksums": {raw: "0"}}))
    out = io.StringIO()
    audit_mod.audit(root / MODEL, root, out=out)
    assert f"input {raw} lies outside the checkout: not read" in out.getvalue()
    assert raw not in out.getvalue().split("audit:")[-1]


def test_a_marked_folder_is_not_marked_through_a_link_out_of_the_tree(tmp_path):
    root = _tree(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_bytes(b"f")
    os.utime(outside / "f", (OLD, OLD))
    (root / "data/digits/raw").symlink_to(outside, target_is_directory=True)
    assert mark([Stale(DATA_FILE, "data/digits/meta.json", ("data/digits",))], root) == []
    (root / "data/digits/raw").unlink()
    (root / "data/digits/sub").mkdir()
    (root / "data/digits/sub/out").symlink_to(outside / "f")
    assert mark([Stale(DATA_FILE, "data/digits/meta.json", ("data/digits",))], root) == []
    (root / "data/digits/sub/out").unlink()
    assert mark([Stale(DATA_FILE, "data/digits/meta.json", ("data/digits",))], root) == [
        "data/digits"
    ]
    assert (root / DATA_FILE).stat().st_mtime == MARK_MTIME
    assert (outside / "f").stat().st_mtime == OLD


@pytest.mark.slow
def test_a_dry_run_refuses_hostile_records_and_touches_nothing_outside(tmp_path):
    """Through a real ``snakemake -n`` on a copy of the checkout: each hostile record gets its
    one ``stale: refusing`` line, and nothing outside the copy is re-dated."""
    from e2e import fresh_copy

    root, outside, named = _hostile(tmp_path)
    work = fresh_copy(tmp_path / "work")
    for top in ("results", "data"):
        shutil.copytree(root / top, work / top, symlinks=True)
    proc = snakemake(work, "-n", "--quiet", "rules", *SMOKE)
    err = proc.stderr
    for rec in named:
        (line,) = [x for x in err.splitlines() if x.startswith(f"stale: refusing {rec}: ")]
    for f in [outside, *outside.rglob("*")]:
        assert f.stat().st_mtime == OLD, f


# --------------------------------------------------------------------------- end to end (slow)
@pytest.fixture
def run_copy(smoke_runs, tmp_path):
    """A copy of the first smoke run (the shared runs are never touched)."""
    dst = tmp_path / "repo"
    shutil.copytree(smoke_runs[0], dst, symlinks=True)
    return dst


def _plan(work: Path) -> tuple[str, dict[str, int]]:
    proc = snakemake(work, "-n", "--quiet", "rules", *SMOKE)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    if "Nothing to be done" in out:
        return out, {}
    stats = out.split("Job stats:")[1].split("Reasons:")[0]
    return out, {k: int(v) for k, v in re.findall(r"^(\w+)\s+(\d+)$", stats, re.M)}


@pytest.mark.slow
def test_truncated_data_file_with_mtime_kept_is_rebuilt(run_copy):
    _truncate_keep_mtime(run_copy / DATA_FILE)
    out, jobs = _plan(run_copy)
    assert f"stale: {DATA_FILE} does not match the sha256 recorded in data/digits/meta.json" in out
    assert jobs.get("prepare_data") == 1 and jobs.get("train", 0) >= 1, jobs


@pytest.mark.slow
def test_deleted_intermediate_summary_is_rebuilt(run_copy):
    (run_copy / SUMMARY).unlink()
    out, jobs = _plan(run_copy)
    assert f"stale: {SUMMARY} is missing but recorded as an input" in out
    assert jobs.get("evaluate") == 1 and "train" not in jobs, jobs


# one file of every kind the workflow makes (the first match of each pattern in a smoke run)
EVERY_KIND = (
    "results/logitnorm/*/runs.parquet",
    "results/train/*/sgd/mlp/logitnorm/seed0/model.pt",
    "results/seddik/*/frames/fig3.prov.json",
    "results/logitnorm/*/tables/table2.outputs.json",
    "reports/results.html",
    "results/logitnorm/*/tables/table1.parquet",
    "results/logitnorm/*/tables/table1.md",
    "results/*/*/figures/*.png",
    "results/kang/*/claims.parquet",
    "results/kang/*/claims.md",
    "reports/logitnorm.ipynb",
    "reports/logitnorm.html",
    "results/*/*/latex/*.tex",
    "results/results_section.tex",
    "results/claims_all.parquet",
    "results/claims_all.csv",
    "results/audit.json",
)


def flip_every_kind(work: Path) -> list[str]:
    """Flip one byte (mtime kept) in one file of every kind; returns them (relative)."""
    files = []
    for pattern in EVERY_KIND:
        found = sorted(work.glob(pattern))
        assert found, f"the smoke run made no {pattern}"
        files.append(found[0].relative_to(work).as_posix())
        flip_byte_keep_mtime(found[0])
    return files


def check_flipped_outputs_are_named_and_rebuilt(work: Path, truncated: str) -> None:
    """The audit names every flipped file; one plain run rebuilds each (byte-identical to
    before, golden digests) and everything made from it, and retrains the model ``truncated``
    (another cell's, cut to half with its mtime kept) to the same bytes; then nothing is
    stale."""
    import io

    from softmax_ood.audit import audit
    from softmax_ood.golden import manifest_of

    before = manifest_of(work)
    originals = {
        p.relative_to(work).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for pattern in EVERY_KIND
        for p in sorted(work.glob(pattern))[:1]
    }
    files = flip_every_kind(work)
    assert truncated not in files
    _truncate_keep_mtime(work / truncated)
    for f in files:
        out = io.StringIO()
        assert audit(work / f, work, out=out) == 1, out.getvalue()
        assert f"DIFFERS  {f}" in out.getvalue(), out.getvalue()
    proc = snakemake(work, "--cores", "2", *SMOKE)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert f"stale: {truncated} does not match the sha256 recorded in " in log
    assert re.search(r"rule train:", log)
    for f in files:
        (line,) = [x for x in log.splitlines() if x.startswith(f"stale: {f} ")] or [
            x for x in log.splitlines() if x.startswith(f"stale: {f}, the outputs record")
        ]
        # every changed file kept its mtime (a record's own line has no such clause)
        assert "(changed with its modification time kept)" in line or "outputs record" in line
    assert manifest_of(work) == before
    for f in files:  # each rebuilt to its own bytes, not just its golden digest
        assert hashlib.sha256((work / f).read_bytes()).hexdigest() == originals[f], f
    for f in files:
        out = io.StringIO()
        assert audit(work / f, work, out=out) == 0, out.getvalue()
    assert "stale:" not in snakemake(work, "-n", *SMOKE).stderr


@pytest.mark.slow
def test_a_byte_flipped_in_a_file_of_every_kind_is_rebuilt_and_named(run_copy):
    """A frame, a model, a provenance record, an outputs record, tables (parquet, markdown),
    a figure, claims (parquet, markdown), reports (ipynb, HTML, the results page), LaTeX (a
    fragment, the section), claims_all (parquet, csv) and the audit: each damaged with its
    mtime kept, in one copy, one rerun, each rebuilt to its own bytes; in the same copy and run
    a truncated model (mtime kept) is named against its evaluation's recorded sha256 and
    retrained to the same bytes."""
    check_flipped_outputs_are_named_and_rebuilt(run_copy, truncated=MODEL)
