"""The README's measured LogitNorm numbers are the generated block, never typed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from softmax_ood.studies.logitnorm.summary import BEGIN, END, readme_block, readme_section

ROOT = Path(__file__).resolve().parents[5]


def test_readme_has_the_generated_block_markers():
    text = (ROOT / "README.md").read_text()
    assert BEGIN in text and END in text


@pytest.mark.skipif(
    os.environ.get("SOFTMAX_OOD_README_CHECK") != "1",
    reason="compares the README with this checkout's own default-config outputs, which depend "
    "on what the user ran (config, numerics): the release step runs it with "
    "SOFTMAX_OOD_README_CHECK=1 after `snakemake --cores all`",
)
def test_readme_block_matches_the_outputs():
    block = ROOT / "results/logitnorm/digits/readme_block.md"
    assert block.is_file(), "no default-config outputs here: run `snakemake --cores all` first"
    assert readme_section((ROOT / "README.md").read_text()) == block.read_text(), (
        "README's LogitNorm numbers differ from results/logitnorm/digits/readme_block.md; "
        "paste the generated block between the markers"
    )


def test_block_lists_every_set_and_claim():
    import pandas as pd

    floor = pd.DataFrame(
        [
            {
                "ood_set": "glyphs",
                "shift": "far",
                "floor_fpr95": 40.0,
                "floor_detector": "m",
                "ce_fpr95": 30.0,
                "value": 10.0,
                "p_value": 0.01,
                "trivial": False,
            },
            {
                "ood_set": "uniform",
                "shift": "far",
                "floor_fpr95": 0.0,
                "floor_detector": "m",
                "ce_fpr95": 3.0,
                "value": -3.0,
                "p_value": 0.9,
                "trivial": True,
            },
        ]
    )
    claims = pd.DataFrame(
        [
            {
                "kind": "premise",
                "claim_id": "P1",
                "value": 1.2,
                "direction": ">",
                "threshold": 1.0,
                "p_value": 0.01,
                "n": 5,
                "power": float("nan"),
                "verdict": "holds",
            },
        ]
    )
    text = readme_block(claims, floor)
    assert "| uniform | far | 0.0 |" in text and "| yes |" in text and "| P1 |" in text
