"""The Seddik report notebook executes with papermill on small study outputs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

from softmax_ood.studies.seddik.claims import evaluate_seddik_claims
from softmax_ood.studies.seddik.departures import departures_frame
from softmax_ood.studies.seddik.experiments import (
    fig2_frame,
    fig3_frame,
    fig4_frame,
    fig5_networks,
    timing,
    validation_frame,
)
from softmax_ood.studies.seddik.features import feature_columns
from softmax_ood.studies.seddik.figures import FIGURES
from softmax_ood.studies.seddik.tests.controls import CLAIM_IDS

ROOT = Path(__file__).resolve().parents[5]
NOTEBOOK = Path(__file__).resolve().parents[1] / "report.ipynb"
PARAMETERS = (
    "frames_dir",
    "figures_dir",
    "claims_path",
    "departures_path",
    "timing_path",
    "seconds_path",
    "provenance_path",
    "fig5_run",
)


def test_notebook_parameters_cell():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for name in PARAMETERS:
        assert f"{name} =" in tagged[0].source
    assert nb.metadata["kernelspec"]["name"] == "python3"
    timing_cells = [c for c in nb.cells if "timing" in c.metadata.get("tags", [])]
    assert len(timing_cells) == 1  # the solver's speed: iterations only, the seconds stay out
    assert "seconds_path" not in timing_cells[0].source.split("where =")[0]  # never read


def _features(k, n, seed, p=16):
    rng = np.random.default_rng(100)
    A, B = rng.standard_normal((p, 8)) / np.sqrt(8), rng.standard_normal((k, 8))
    r = np.random.default_rng(seed)
    y = np.arange(n) % k
    return np.maximum((r.standard_normal((n, 8)) + 1.0 * B[y]) @ A.T, 0.0), y


def features_frame(k, n, seeds, p=16):
    """A features frame as :func:`~softmax_ood.studies.seddik.features.extract_network_features`
    writes it: two networks, two ID splits each."""
    parts = []
    for seed in seeds:
        for i, split in enumerate(("val", "test")):
            X, y = _features(k, n, 10 * seed + i, p)
            f = pd.DataFrame(X, columns=feature_columns(p))
            f.insert(0, "num_classes", k)
            f.insert(0, "label", y)
            f.insert(0, "split", split)
            f.insert(0, "seed", seed)
            parts.append(f)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.slow  # executes a notebook (the fast loop stays under 2 min)
def test_notebook_executes(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    frames_dir, figures_dir = tmp_path / "frames", tmp_path / "figures"
    frames_dir.mkdir()
    frames = {
        "fig2": fig2_frame(ps=(20, 40), seeds=(0, 1), n_test=300),
        "fig3": fig3_frame(loo="newton"),
        "fig4": fig4_frame(ns=(40, 80), seeds=(0, 1)),
        "fig5": fig5_networks(
            features_frame(3, 100, (0, 1)),
            lam=1.5,
            fit_fraction=1 / 3,
            stats_from="independent",
            stats_fraction=1 / 3,
        ),
        "validation": validation_frame(lams=(0.5,), seeds=(0,), p=20, n=80, n_test=300),
    }
    for name, frame in frames.items():
        frame.to_parquet(frames_dir / f"{name}.parquet", index=False)
        FIGURES[name](frame, figures_dir / f"{name}.png")
    claims = evaluate_seddik_claims(
        frames["fig2"],
        frames["fig4"],
        frames["fig5"],
        frames["validation"],
        frames["fig3"],
        max_gap_points=2.0,
        ridge_n_gap=1.0,
        alpha=0.05,
    )
    claims.to_parquet(tmp_path / "claims.parquet", index=False)
    departures_frame().to_parquet(tmp_path / "departures.parquet", index=False)
    t = timing(p=24, n=100, ks=(2,))
    t.drop(columns="seconds").to_parquet(tmp_path / "timing.parquet", index=False)
    seconds = [{"solver": "solve_binary", "k": 2, "seconds": 7.654321}]
    (tmp_path / "seconds.json").write_text(json.dumps(seconds))
    (tmp_path / "prov.json").write_text(json.dumps({"runs": ["digits/adam/cnn/ce/seed0"]}))
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))  # the kernel imports softmax_ood
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out),
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
        parameters={
            "frames_dir": str(frames_dir),
            "figures_dir": str(figures_dir),
            "claims_path": str(tmp_path / "claims.parquet"),
            "departures_path": str(tmp_path / "departures.parquet"),
            "timing_path": str(tmp_path / "timing.parquet"),
            "seconds_path": str(tmp_path / "seconds.json"),
            "provenance_path": str(tmp_path / "prov.json"),
            "fig5_run": "digits/adam/cnn/ce/seed0",
        },
    )
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "\n".join(
        o.get("text", "") + "".join(o.get("data", {}).get("text/markdown", "")) for o in outputs
    )
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 5
    assert "iterations" in text and "seconds.json" in text  # names the file of the seconds
    assert "7.654321" not in text  # ... but never shows them: reports are the same bytes every run
    assert "arch cnn, loss ce" in text  # Fig. 5 names its network
    assert "ResNet-18" in "\n".join(c.source for c in nb.cells)  # ... and says it is a stand-in
    assert "Theorem 4.4" in text  # the departures list
    for cid in CLAIM_IDS:
        assert f"**{cid}** (" in text
    assert "Moments vs shape" in "\n".join(c.source for c in nb.cells)
    assert "shape part" in text and "95 % exact interval" in text
    # the reader's order: verdict, claims table, tables, figures (each with a caption), appendix
    order = [
        text.index("**P1** ("),
        text.index("Claims of Seddik et al. 2021 tested at this scale"),
        text.index("train: theory %"),
        text.index("arch cnn, loss ce"),
        text.index("iterations"),
        text.index("Theorem 4.4"),
    ]
    assert order == sorted(order)
    cells = [c for c in nb.cells if "parameters" not in c.metadata.get("tags", [])]
    with_image = [
        i
        for i, c in enumerate(cells)
        if any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
    ]
    assert len(with_image) == 5 and with_image == list(range(with_image[0], with_image[0] + 10, 2))
    for i in with_image:  # each figure is followed by its caption
        assert cells[i + 1].cell_type == "markdown" and cells[i + 1].source.startswith("**")
