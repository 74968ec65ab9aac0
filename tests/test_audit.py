"""The provenance audit (python3 -m softmax_ood.audit): prints a result's chain back to the data
and names every file whose recorded hash differs from the one on disk (exit status 1)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from softmax_ood.audit import AuditError, audit, main
from softmax_ood.provenance import (
    path_sha256,
    provenance_record,
    write_outputs_record,
    write_parquet,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import flip_byte_keep_mtime  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN = "results/eval/digits/sgd/cnn/ce/seed0"
MODEL = "results/train/digits/sgd/cnn/ce/seed0/model.pt"
SPEC = {"seeds": [0], "main_arch": "cnn"}


def _chain(root: Path) -> dict[str, str]:
    """A small chain made with the real provenance functions, paths relative to ``root`` (the
    workflow's working directory): data -> model.pt -> summary.json -> runs.parquet -> table.
    The workflow's rule files, scripts and library are copied in (rule -> script -> modules)."""
    import torch

    from softmax_ood.experiment import save_checkpoint

    skip = shutil.ignore_patterns("__pycache__", "tests")
    for sub in ("rules", "workflow/scripts", "src"):
        shutil.copytree(ROOT / sub, root / sub, ignore=skip)

    data = root / "data/digits"
    data.mkdir(parents=True)
    (data / "meta.json").write_text(json.dumps({"id_dataset": "digits", "ood_test": ["noise"]}))
    (data / "x_train.npy").write_bytes(b"\x00" * 64)
    spec = {
        "dataset": "digits",
        "recipe": "sgd",
        "arch": "cnn",
        "loss": "ce",
        "seed": 0,
        "data_sha256": path_sha256(data),
        "git": {"commit": "0" * 40, "dirty": False},
    }
    (root / MODEL).parent.mkdir(parents=True)
    save_checkpoint(root / MODEL, torch.nn.Linear(2, 2), spec)
    (root / RUN).mkdir(parents=True)
    summary = {
        "run": {"dataset": "digits", "seed": 0},
        "inputs": {"model_sha256": path_sha256(root / MODEL), "data_sha256": spec["data_sha256"]},
    }
    (root / RUN / "summary.json").write_text(json.dumps(summary))
    runs = "results/logitnorm/digits/runs.parquet"
    prov = provenance_record(
        inputs={"data": "data/digits", f"summary:{RUN}/summary.json": f"{RUN}/summary.json"},
        config=SPEC,
        seeds=[0],
        extra={"rule": "logitnorm_aggregate"},
    )
    write_parquet(pd.DataFrame({"acc": [0.9]}), runs, prov)
    table = "results/logitnorm/digits/tables/table1.parquet"
    prov = provenance_record(
        inputs={"runs": runs},
        config=SPEC,
        seeds=[0],
        # what the shared table rule records (no script: the audit finds the rule's own)
        extra={
            "rule": "logitnorm_table",
            "function": "softmax_ood.studies.logitnorm.tables:FRAME_TABLES[table1]",
        },
    )
    write_parquet(pd.DataFrame({"fpr95": [0.1]}), table, prov)
    Path(table).with_suffix(".md").write_text("| fpr95 |\n")
    # what run_job records at the end of the table job: every output it wrote
    write_outputs_record(
        [table, Path(table).with_suffix(".prov.json"), Path(table).with_suffix(".md")],
        rule="logitnorm_table",
    )
    return {"table": table, "runs": runs, "summary": f"{RUN}/summary.json", "model": MODEL}


@pytest.fixture
def chain(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    return root, _chain(root)


def _audit(path, root=None) -> tuple[int, str]:
    out = io.StringIO()
    rc = audit(path, root, out=out)
    return rc, out.getvalue()


def test_prints_the_chain_back_to_the_data(chain):
    root, f = chain
    rc, out = _audit(f["table"])
    assert rc == 0, out
    for path in (f["table"], f["runs"], f["summary"], f["model"], "data/digits"):
        assert path in out
    assert "rule     logitnorm_table" in out and "rule     logitnorm_aggregate" in out
    assert "rule     train" in out and "rule     evaluate" in out
    assert "config sha256" in out and "seeds 0" in out and "git 000000000000" in out
    # each rule's script, and the library modules it imports (derived from the source)
    assert "(workflow/scripts/study_table.py)" in out  # the shared table rule's script ...
    assert "studies/logitnorm/tables.py" in out  # ... and the study module it calls
    assert "(workflow/scripts/train.py)" in out
    assert "analysis/render.py" in out and "experiment.py" in out
    assert "DIFFERS" not in out and "audit: all" in out
    # the chain is deeper-first: table -> runs -> summary -> model -> data
    order = [out.index(p) for p in (f["runs"], f["summary"], f["model"])]
    assert order == sorted(order)


@pytest.mark.parametrize("which", ["summary", "model", "data"])
def test_a_changed_input_is_named_and_fails(chain, which):
    root, f = chain
    target = {"summary": f["summary"], "model": f["model"], "data": "data/digits/x_train.npy"}
    changed = root / target[which]
    changed.write_bytes(changed.read_bytes() + b" ")
    rc, out = _audit(f["table"])
    assert rc == 1
    named = "data/digits" if which == "data" else target[which]
    assert f"DIFFERS  {named}" in out
    tail = out.split("audit:")[-1]
    assert "differ" in tail and named in tail


def test_a_missing_input_is_named(chain):
    root, f = chain
    (root / f["summary"]).unlink()
    rc, out = _audit(f["runs"])
    assert rc == 1
    assert f"MISSING  {f['summary']}" in out


def test_an_edited_sidecar_is_named(chain):
    root, f = chain
    side = root / f["table"].replace(".parquet", ".prov.json")
    rec = json.loads(side.read_text())
    rec["seeds"] = [7]
    side.write_text(json.dumps(rec))
    rc, out = _audit(f["table"])
    assert rc == 1 and "table1.prov.json does not match" in out


@pytest.mark.parametrize("suffix", [".md", ".parquet"])
def test_a_damaged_output_is_named_by_its_jobs_outputs_record(chain, suffix):
    """A leaf nothing reads (the markdown) or a table: its own bytes against what its job
    wrote, with the mtime kept."""
    root, f = chain
    target = Path(f["table"]).with_suffix(suffix)
    assert _audit(target)[0] == 0
    flip_byte_keep_mtime(root / target)
    rc, out = _audit(target)
    assert rc == 1, out
    assert f"DIFFERS  {target.as_posix()}" in out
    assert "tables/table1.outputs.json" in out


def test_the_outputs_record_itself_is_audited(chain):
    root, f = chain
    record = "results/logitnorm/digits/tables/table1.outputs.json"
    assert _audit(record)[0] == 0
    flip_byte_keep_mtime(root / Path(f["table"]).with_suffix(".md"))
    rc, out = _audit(record)
    assert rc == 1 and "table1.md" in out, out


@pytest.mark.parametrize("name", ["meta.json", "x_train.npy"])
def test_a_damaged_prepared_data_file_is_named(chain, name):
    """A prepared-data file (meta.json, the data's own record, included) is audited with its
    folder, which is checked against the data_sha256 the evaluations recorded (before, the
    audit said "nothing is recorded about data/digits/meta.json", exit 2)."""
    root, _ = chain
    rel = f"data/digits/{name}"
    rc, out = _audit(rel)
    assert rc == 0 and "a file of the prepared data data/digits" in out, out
    flip_byte_keep_mtime(root / rel)
    rc, out = _audit(rel)
    assert rc == 1, out
    assert "DIFFERS  data/digits (sha256 " in out
    assert f"recorded in {RUN}/summary.json" in out


def test_markdown_is_audited_through_its_table(chain):
    root, f = chain
    rc, out = _audit(f["table"].replace(".parquet", ".md"))
    assert rc == 0 and "record: results/logitnorm/digits/tables/table1.prov.json" in out
    assert "rule     logitnorm_table" in out and f["runs"] in out


def test_cli_from_another_folder_exit_codes(chain, tmp_path, monkeypatch, capsys):
    root, f = chain
    monkeypatch.chdir(tmp_path)  # the workflow folder is found from the path
    assert main([str(root / f["table"])]) == 0
    (root / f["model"]).write_bytes(b"garbage")
    assert main([str(root / f["table"])]) == 1
    out = capsys.readouterr().out
    assert f"DIFFERS  {f['model']}" in out and "cannot be read as a checkpoint" in out
    assert main([str(root / "results/nope.parquet")]) == 2
    assert "audit error:" in capsys.readouterr().err
    (root / "results/plain.txt").write_text("x")
    with pytest.raises(AuditError, match="nothing is recorded"):
        audit(root / "results/plain.txt")


TABLE1 = "results/logitnorm/digits/tables/table1.parquet"


def _cli(root: Path, path: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "softmax_ood.audit", path],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_audit_of_a_smoke_run_and_of_a_tampered_copy(smoke_runs, tmp_path):
    proc = _cli(smoke_runs[0], TABLE1)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for expected in (
        "rule     logitnorm_table",
        "results/logitnorm/digits/runs.parquet",
        "summary.json",
        "model.pt",
        "data/digits",
        "rule     prepare_data",
        "modules",
    ):
        assert expected in out
    listed = [
        line.split("modules", 1)[1].strip().split(", ")
        for line in out.splitlines()
        if line.strip().startswith("modules ")
    ]
    assert listed and all(len(m) == len(set(m)) for m in listed), "a module listed twice"
    # never touch smoke_runs: tamper with a copy
    copy = tmp_path / "repo"
    shutil.copytree(smoke_runs[0], copy, symlinks=True)
    summaries = sorted((copy / "results/eval").rglob("summary.json"))
    victim = summaries[0]
    victim.write_text(victim.read_text() + " ")
    proc = _cli(copy, TABLE1)
    assert proc.returncode == 1, proc.stdout[-3000:]
    rel = victim.relative_to(copy).as_posix()
    assert f"DIFFERS  {rel}" in proc.stdout


def test_the_file_itself_is_not_listed_among_its_inputs(chain):
    """The results page lists a node's checks as its inputs: the outputs-record check of the
    file itself is kept apart."""
    from softmax_ood.audit import Auditor

    root, f = chain
    node = Auditor(root).node(f["table"])
    assert node.written is not None and node.written.ok
    assert f["table"] not in [c.path for c in node.checks]
    assert [c.name for c in node.checks] == ["runs"]


def test_every_rule_of_the_workflow_has_its_script_found():
    """The audit reads each rule's script from the rule files: named rules, the shared study
    rules (name: f"{...}_table") and the rules defined once per job unit (train / train_seed,
    evaluate / evaluate_seed: rules/train.smk)."""
    from softmax_ood.audit import Auditor

    a = Auditor(ROOT)
    assert a.script_of("train") == a.script_of("train_seed") == "workflow/scripts/train.py"
    assert a.script_of("evaluate") == a.script_of("evaluate_seed") == "workflow/scripts/evaluate.py"
    assert a.script_of("prepare_data") == "workflow/scripts/prepare_data.py"
    assert a.script_of("logitnorm_table") == "workflow/scripts/study_table.py"
