"""End to end (slow): the smoke config ran from scratch (session fixture ``smoke_runs``); the
Ulmer study's tables, figures, claims and report exist and are byte-identical to the golden
manifest's earlier run from scratch."""

from __future__ import annotations

import pandas as pd
import pytest

from softmax_ood.studies.ulmer import study
from softmax_ood.studies.ulmer.claims.evidence import STOCHASTIC

pytestmark = [pytest.mark.slow]

CONFIG = {"seeds": [0, 1], "data": {"dataset": "digits"}}  # targets: the data set's name only
BASE = "results/ulmer/digits"


def _targets() -> list[str]:
    return study.targets(CONFIG)


def test_every_output_exists_and_is_byte_identical(smoke_runs):
    from e2e import differs_from_golden

    a = smoke_runs[0]
    for rel in _targets():
        assert (a / rel).is_file() and (a / rel).stat().st_size > 0, rel
    compared, different = differs_from_golden(a, "results/ulmer/", "reports/ulmer.")
    assert compared, "no results/ulmer/ files"
    assert not different, f"differ from the golden run from scratch: {different}"


def test_claims_and_report_content(smoke_runs):
    a = smoke_runs[0]
    claims = pd.read_parquet(a / f"{BASE}/claims.parquet")
    assert claims["kind"].iloc[0] == "premise"
    assert {"F-synthetic", "N-breast_cancer", "K-synthetic-bbb"} <= set(claims["claim_id"])
    # one C row per data set and averaged family (MC dropout, BBB, ensemble, MCMC)
    assert claims["claim_id"].str.startswith("C-").sum() == 2 * len(STOCHASTIC)
    assert (claims[claims["claim_id"].str.startswith(("G-", "S-"))]["kind"] == "sanity").all()
    html = (a / "reports/ulmer.html").read_text()
    for text in ("Figure 1", "Premises", "per direction", "softmax-properties note", "Claims"):
        assert text in html, text
    assert "Traceback" not in html
