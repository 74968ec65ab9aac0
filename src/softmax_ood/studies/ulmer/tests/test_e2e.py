"""End to end (slow): the smoke config ran twice from scratch (session fixture ``smoke_runs``);
the Ulmer study's tables, figures, claims and report exist and are byte-identical."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from softmax_ood.studies.ulmer import study

pytestmark = [pytest.mark.slow]

CONFIG = {"seeds": [0, 1], "data": {"dataset": "digits"}}  # targets: the data set's name only
BASE = "results/ulmer/digits"


def _targets() -> list[str]:
    return study.targets(CONFIG)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_output_exists_and_is_byte_identical(smoke_runs):
    a, b = smoke_runs
    for rel in _targets():
        pa, pb = a / rel, b / rel
        assert pa.is_file() and pa.stat().st_size > 0, rel
        assert _sha(pa) == _sha(pb), f"{rel} differs between two runs from scratch"
    tree = sorted(p.relative_to(a) for p in (a / "results/ulmer").rglob("*") if p.is_file())
    assert tree, "no results/ulmer/ files"
    for rel in tree:
        assert _sha(a / rel) == _sha(b / rel), f"{rel} differs between two runs from scratch"


def test_claims_and_report_content(smoke_runs):
    a = smoke_runs[0]
    claims = pd.read_parquet(a / f"{BASE}/claims.parquet")
    assert claims["kind"].iloc[0] == "premise"
    assert {"F-synthetic", "N-breast_cancer", "K-synthetic-bbb"} <= set(claims["claim_id"])
    assert claims["claim_id"].str.startswith("C-").sum() == 2 * 3
    assert (claims[claims["claim_id"].str.startswith(("G-", "S-"))]["kind"] == "sanity").all()
    html = (a / "reports/ulmer.html").read_text()
    for text in ("Figure 1", "Premises", "per direction", "softmax-properties note", "Claims"):
        assert text in html, text
    assert "Traceback" not in html
