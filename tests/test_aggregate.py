"""Per-run files -> the long frames every study reads (hand-made files, known answers)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from softmax_ood.analysis.aggregate import aggregate_runs
from softmax_ood.runs import Run, parse_run_dir, run_dir

LOSSES = {"ce": {"loss": "ce"}, "ln": {"loss": "logitnorm", "tau": 0.04}}


def _write_run(root, run: Run, acc: float):
    ev, tr = root / run_dir("eval", run), root / run_dir("train", run)
    ev.mkdir(parents=True)
    tr.mkdir(parents=True)
    summary = {
        "run": {**run._asdict(), "best_epoch": 2},
        "loss_cfg": LOSSES[run.loss],
        "epochs": 2,
        "metrics": {"accuracy": acc, "ece": 0.1},
        "ood": [{"score": "msp", "ood_set": "tex", "split": "test", "fpr95": 1 - acc}],
    }
    (ev / "summary.json").write_text(json.dumps(summary))
    pd.DataFrame({"set": ["id", "tex"], "value": [0.9, 0.4]}).to_parquet(ev / "scores.parquet")
    (tr / "curve.tsv").write_text("epoch\tval_acc\n1\t0.5\n2\t0.75\n")
    return ev / "summary.json", tr / "curve.tsv", ev / "scores.parquet"


def test_run_dirs_round_trip():
    run = Run("digits", "adam", "wrn-10-1", "logitnorm-tau0.5", 4)
    assert run_dir("eval", run) == "results/eval/digits/adam/wrn-10-1/logitnorm-tau0.5/seed4"
    assert parse_run_dir(run_dir("eval", run) + "/summary.json") == run
    with pytest.raises(ValueError, match="not inside a run folder"):
        parse_run_dir("results/x.json")


def test_aggregate_by_hand(tmp_path):
    runs = [
        Run("digits", "adam", "cnn", "ln", 1),
        Run("digits", "adam", "cnn", "ce", 0),
        Run("digits", "adam", "mlp", "ce", 0),
    ]
    files = [_write_run(tmp_path, r, acc) for r, acc in zip(runs, (0.8, 0.9, 0.7), strict=True)]
    s, c, m = (list(x) for x in zip(*files, strict=True))
    f = aggregate_runs(s, c, m, main_arch="cnn", losses=LOSSES)
    r = f["runs"]
    # sorted by recipe, arch, loss, seed
    assert list(zip(r["arch"], r["loss"], strict=True)) == [
        ("cnn", "ce"),
        ("cnn", "ln"),
        ("mlp", "ce"),
    ]
    assert r["accuracy"].tolist() == [0.9, 0.8, 0.7] and r["best_epoch"].tolist() == [2, 2, 2]
    assert r.loc[r["loss"] == "ln", "tau"].item() == 0.04
    assert math.isnan(r.loc[(r["loss"] == "ce") & (r["arch"] == "cnn"), "tau"].item())
    assert f["ood"]["fpr95"].tolist() == pytest.approx([0.1, 0.2, 0.3])
    assert set(f["curves"]["recipe"]) == {"adam"} and len(f["curves"]) == 6
    # per-sample MSP only for the main architecture
    assert set(f["samples"]["arch"]) == {"cnn"} and len(f["samples"]) == 4
    assert str(f["samples"]["value"].dtype) == "float32"
