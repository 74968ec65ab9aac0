"""Golden hashes: a fresh smoke run (the session's `smoke_runs`) reproduces every digest in
tests/golden/smoke_sha256.json, made under pinned numerics; digests ignore the git commit in
provenance records and nothing else."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from softmax_ood import golden
from softmax_ood.provenance import write_parquet, write_provenance

REGENERATE = "python3 -m softmax_ood.golden --update"


def test_parquet_digest_ignores_the_commit_but_not_the_data(tmp_path):
    df = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    rec = {
        "git": {"commit": "a" * 40, "dirty": False},
        "inputs": {"x": {"sha256": "1"}},
        "seeds": [0],
    }
    write_parquet(df, tmp_path / "t1.parquet", rec)
    write_parquet(
        df,
        tmp_path / "t2.parquet",
        {**rec, "git": {"commit": "b" * 40, "dirty": True}, "inputs": {}},
    )
    write_parquet(df.assign(a=[1.0, 2.5]), tmp_path / "t3.parquet", rec)
    write_parquet(df, tmp_path / "t4.parquet", {**rec, "seeds": [0, 1]})
    d = [golden.digest(tmp_path / f"t{i}.parquet") for i in (1, 2, 3, 4)]
    assert d[0] == d[1] and d[0] != d[2] and d[0] != d[3]
    # the sidecars likewise
    assert golden.digest(tmp_path / "t1.prov.json") == golden.digest(tmp_path / "t2.prov.json")
    assert golden.digest(tmp_path / "t1.prov.json") != golden.digest(tmp_path / "t4.prov.json")


def test_checkpoint_digest_is_the_weights_and_spec_without_git(tmp_path):
    import torch

    w = {"layer.weight": torch.arange(6.0).reshape(2, 3)}
    spec = {"seed": 0, "git": {"commit": "a" * 40}}
    torch.save({"state_dict": w, "spec": spec}, tmp_path / "a.pt")
    torch.save({"state_dict": w, "spec": {**spec, "git": {"commit": "b" * 40}}}, tmp_path / "b.pt")
    w2 = {"layer.weight": torch.arange(6.0).reshape(2, 3) + 1e-7}
    torch.save({"state_dict": w2, "spec": spec}, tmp_path / "c.pt")
    a, b, c = (golden.digest(tmp_path / f"{n}.pt") for n in "abc")
    assert a == b != c


def test_text_digest_ignores_a_printed_commit_only(tmp_path):
    a = '<pre>{\n  "git": {\n    "commit": "%s",\n    "dirty": %s\n  },\n  "seeds": [0]\n}</pre>'
    nb = '"      \\"commit\\": \\"%s\\",\\n",'
    files = {
        "a.html": a % ("a" * 40, "true"),
        "b.html": a % ("b" * 40, "false"),
        "c.html": (a % ("a" * 40, "true")).replace("[0]", "[1]"),
        "a.ipynb": nb % ("a" * 40),
        "b.ipynb": nb % ("c" * 40),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    d = {n: golden.digest(tmp_path / n) for n in files}
    assert d["a.html"] == d["b.html"] != d["c.html"]
    assert d["a.ipynb"] == d["b.ipynb"]


def test_compare_names_the_first_differing_file_in_pipeline_order_and_its_rule(tmp_path):
    run = tmp_path / "run"
    (run / "data/digits").mkdir(parents=True)
    (run / "data/digits/x.npy").write_bytes(b"data")
    t = run / "results/logitnorm/digits/tables/table1.md"
    t.parent.mkdir(parents=True)
    t.write_text("| a |\n")
    write_provenance(t.with_suffix(".prov.json"), {"rule": "logitnorm_table", "inputs": {}})
    (run / "reports").mkdir()
    (run / "reports/seddik_timing_digits.json").write_text('{"seconds": 1.23}')  # excluded
    manifest = {"dataset": "digits", "files": golden.manifest_of(run)}
    assert "reports/seddik_timing_digits.json" not in manifest["files"]
    assert list(manifest["files"])[0] == "data/digits/x.npy"
    assert golden.compare(run, manifest) == []
    t.write_text("| b |\n")
    (run / "results/logitnorm/digits/tables/table2.md").write_text("new")
    problems = golden.compare(run, manifest)
    assert problems[0].startswith(
        "results/logitnorm/digits/tables/table1.md (rule logitnorm_table) differs from the golden"
    )
    assert "table2.md" in problems[1] and "is not in the golden manifest" in problems[1]


@pytest.mark.slow
def test_a_fresh_smoke_run_reproduces_the_golden_manifest(smoke_runs):
    manifest = golden.load()
    assert manifest["numerics"]["mode"] == "pinned"
    assert len(manifest["files"]) > 100
    problems = golden.compare(smoke_runs[0], manifest)
    assert not problems, (
        f"{len(problems)} file(s) differ from tests/golden/smoke_sha256.json; first: "
        f"{problems[0]}. If the change is intended (a study or recipe changed), regenerate "
        f"the manifest with `{REGENERATE}` and commit it; if not, the run is not reproducible "
        f"(package versions: {json.dumps(manifest['versions'])})"
    )


def test_the_results_pages_commit_spans_are_normalised(tmp_path):
    from softmax_ood.golden import digest

    a, b, c = (tmp_path / f"{n}.html" for n in "abc")
    a.write_text('<li>commit <code class="rs-git">0123456789ab</code>, seeds [0]</li>')
    b.write_text('<li>commit <code class="rs-git">ba9876543210 (dirty)</code>, seeds [0]</li>')
    c.write_text('<li>commit <code class="rs-git">0123456789ab</code>, seeds [1]</li>')
    assert digest(a) == digest(b) != digest(c)
    nb = tmp_path / "p.ipynb"  # the notebook stores the same HTML with escaped quotes
    nb.write_text('"<code class=\\"rs-git\\">0123</code>"')
    nb2 = tmp_path / "q.ipynb"
    nb2.write_text('"<code class=\\"rs-git\\">4567</code>"')
    assert digest(nb) == digest(nb2)
