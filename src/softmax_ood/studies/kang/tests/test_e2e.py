"""End to end: the smoke config ran from scratch (the session fixture ``smoke_runs``); the Kang
tables, figures, claims and report exist and every Kang result is byte-identical to the golden
manifest's earlier run from scratch."""

from __future__ import annotations

import pandas as pd
import pytest

from softmax_ood.studies.kang.study import FIGURES, TABLES

pytestmark = pytest.mark.slow

BASE = "results/kang/digits"


def test_outputs_exist(smoke_runs):
    root = smoke_runs[0]
    for t in TABLES:
        assert (root / f"{BASE}/tables/{t}.parquet").stat().st_size > 0
        assert (root / f"{BASE}/tables/{t}.md").read_text().startswith("### ")
    for f in FIGURES:
        assert (root / f"{BASE}/figures/{f}.png").stat().st_size > 1000
    claims = pd.read_parquet(root / f"{BASE}/claims.parquet")
    kinds = list(claims["kind"])
    n = kinds.count("premise")
    assert n > 0 and kinds[:n] == ["premise"] * n
    assert (root / "reports/kang.html").stat().st_size > 10_000
    assert "ORACLE" in (root / "reports/kang.ipynb").read_text()
    groups = sorted(p.stem for p in (root / f"{BASE}/discriminator").glob("*/*.parquet"))
    assert "id" in groups and "rotation" in groups


def test_kang_results_are_byte_identical(smoke_runs):
    from e2e import differs_from_golden

    compared, different = differs_from_golden(smoke_runs[0], f"{BASE}/", "reports/kang.")
    assert compared > 40
    assert not different, different
