"""Figures draw from small frames and are byte-for-byte reproducible."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from softmax_ood.studies.ulmer.figures import (
    directions_figure,
    fig1_heatmaps,
    scaling_figure,
    softmax_note_figure,
)
from softmax_ood.studies.ulmer.softmax_note import sharpness_table


def _grid_frame() -> pd.DataFrame:
    g = np.linspace(-5, 5, 6)
    xx, yy = np.meshgrid(g, g)
    rows = []
    for model, kind in (("single", "single"), ("mc dropout", "mc_dropout"), ("ens", "ensemble")):
        value = np.exp(-((xx - yy) ** 2)) * (1.0 if kind == "single" else 0.5)
        rows.append(
            pd.DataFrame(
                {
                    "model": model,
                    "kind": kind,
                    "x1": xx.ravel(),
                    "x2": yy.ravel(),
                    "metric": "predictive_entropy",
                    "value": value.ravel(),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _scaling_frame() -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for model, kind in (("single", "single"), ("ens", "ensemble")):
            for alpha in (1.0, 10.0, 100.0):
                for metric in ("max_prob", "mutual_information"):
                    rows.append(
                        {
                            "model": model,
                            "kind": kind,
                            "seed": seed,
                            "alpha": alpha,
                            "metric": metric,
                            "value": 1 - 0.1 / alpha + 0.01 * seed,
                            "grad_norm": 0.0 if alpha == 100.0 else 1e-3 / alpha**3,
                        }
                    )
    return pd.DataFrame(rows)


def _draw(name: str, path) -> None:
    if name == "fig1":
        data = pd.DataFrame({"x1": [0.0, 1.0], "x2": [0.0, -1.0], "y": [0, 1]})
        fig1_heatmaps(_grid_frame(), path, data=data, panel_size=1.2)
    elif name == "scaling":
        scaling_figure(_scaling_frame(), path, "toy", panel_size=(2.0, 1.2))
    elif name == "directions":
        from softmax_ood.studies.ulmer.tests.controls import build_frames

        config = {"seeds": [0, 1, 2], "ulmer": {"kinds": ["single", "bbb"]}}
        directions_figure(build_frames(config)[2], path, level=0.99, height=1.5)
    else:
        softmax_note_figure(
            sharpness_table({"z": [2.0, 1.0, 0.5]}, alphas=[0.1, 1.0, 10.0]), path, size=(4.0, 1.6)
        )


@pytest.mark.parametrize("suffix", [".png", ".svg"])
@pytest.mark.parametrize("name", ["fig1", "scaling", "directions", "note"])
def test_figures_are_reproducible(tmp_path, name, suffix):
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    _draw(name, first)
    _draw(name, second)
    assert first.stat().st_size > 1000
    assert first.read_bytes() == second.read_bytes()


def test_fig1_rejects_unknown_metric(tmp_path):
    with pytest.raises(ValueError, match="no rows"):
        fig1_heatmaps(_grid_frame(), tmp_path / "x.png", metric="max_prob")


def test_figures_stay_within_the_report_width(tmp_path):
    from PIL import Image

    from softmax_ood.analysis.style import DPI, REPORT_WIDTH_IN

    for name in ("fig1", "scaling", "directions", "note"):
        _draw(name, tmp_path / f"{name}.png")
        with Image.open(tmp_path / f"{name}.png") as im:
            assert im.size[0] <= REPORT_WIDTH_IN * DPI + 1, name


def test_fig1_with_every_kind_and_the_control_is_legible(tmp_path):
    """Fig. 1's second row holds every averaged kind: its panels narrow, and the control's long
    title must still not overlap its neighbour's (the legibility check of save_figure)."""
    from softmax_ood.analysis.figcheck import read_check
    from softmax_ood.studies.ulmer.experiment import MODEL_LABELS, control_label

    base = _grid_frame()
    one = base[base["kind"] == "single"]
    kinds = [*MODEL_LABELS.items(), ("control", control_label("gaussian"))]
    frame = pd.concat([one.assign(model=label, kind=kind) for kind, label in kinds])
    fig1_heatmaps(frame, tmp_path / "fig1.png")
    assert read_check(tmp_path / "fig1.png") == {"problems": []}
