"""End to end: the smoke config (run from scratch by the session fixture ``smoke_runs``)
builds the Seddik figures, claims and report, byte-identical to the golden manifest's earlier
run from scratch (its digests leave out what is measured anew each run: the solver's wall time
in reports/seddik_timing_*.json)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

BASE = "results/seddik/digits"
FIGURES = ["fig2", "fig3", "fig4", "fig5", "validation"]
PNG = b"\x89PNG\r\n\x1a\n"


def test_seddik_outputs_exist(smoke_runs):
    a = smoke_runs[0]
    for fig in FIGURES:
        assert (a / BASE / f"figures/{fig}.png").read_bytes()[:8] == PNG
    claims = (a / BASE / "claims.md").read_text()
    assert all(f"| premise | P{i} |" in claims for i in (1, 2, 3))
    assert all(f"| claim | C{i} |" in claims for i in (1, 2, 3)) and "| sanity | S1 |" in claims
    html = (a / "reports/seddik.html").read_text()
    assert "Figure 5" in html and "ResNet-18" in html and "iterations" in html
    assert "Departures from the printed text" in html


def test_seddik_outputs_are_byte_identical(smoke_runs):
    from e2e import differs_from_golden

    compared, different = differs_from_golden(smoke_runs[0], f"{BASE}/", "reports/seddik.")
    assert compared >= 20
    assert not different, f"Seddik files differ from the golden run: {different}"
