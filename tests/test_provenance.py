import json
from pathlib import Path

import pandas as pd

from softmax_ood.provenance import (
    config_sha256,
    path_sha256,
    provenance_record,
    read_parquet_provenance,
    write_parquet,
)


def test_parquet_carries_provenance_and_is_deterministic(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("x")
    prov = provenance_record(inputs=[src], config={"b": 1, "a": [1, 2]}, seeds=[2, 0])
    df = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    write_parquet(df, tmp_path / "t1.parquet", prov)
    write_parquet(df, tmp_path / "t2.parquet", prov)
    assert (tmp_path / "t1.parquet").read_bytes() == (tmp_path / "t2.parquet").read_bytes()
    back = read_parquet_provenance(tmp_path / "t1.parquet")
    assert back["seeds"] == [0, 2]
    assert back["config_sha256"] == config_sha256({"a": [1, 2], "b": 1})
    assert back["inputs"][str(src)]["sha256"] == path_sha256(src)
    assert set(back["versions"]) >= {"python", "torch", "numpy"}
    assert "commit" in back["git"]
    side = json.loads((tmp_path / "t1.prov.json").read_text())
    assert side == back


def test_directory_hash_changes_with_content(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d/a").write_text("1")
    h1 = path_sha256(tmp_path / "d")
    (tmp_path / "d/a").write_text("2")
    assert path_sha256(tmp_path / "d") != h1


def test_a_job_records_every_output_it_wrote_under_results_and_reports(tmp_path, monkeypatch):
    from softmax_ood.provenance import read_outputs_records, write_outputs_record

    monkeypatch.chdir(tmp_path)
    for f in ("reports/r.ipynb", "reports/r.html", "data/raw/x.gz"):
        Path(f).parent.mkdir(parents=True, exist_ok=True)
        Path(f).write_text(f)
    Path("results/d").mkdir(parents=True)  # a directory output: not hashed here
    record = write_outputs_record(
        ["data/raw/x.gz", "results/d", "reports/r.ipynb", "reports/r.html"], rule="r_report"
    )
    assert record == Path("reports/r.outputs.json")
    rec = json.loads(record.read_text())
    assert rec["rule"] == "r_report" and sorted(rec["outputs"]) == [
        "reports/r.html",
        "reports/r.ipynb",
    ]
    assert read_outputs_records(tmp_path) == {
        f: ("reports/r.outputs.json", path_sha256(f)) for f in ("reports/r.html", "reports/r.ipynb")
    }
    assert write_outputs_record(["data/raw/x.gz"]) is None  # data/ keeps its own records
