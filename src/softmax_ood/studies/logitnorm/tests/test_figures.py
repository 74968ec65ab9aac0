"""Figures 1, 4, 5: non-empty PNGs, byte-identical when written twice."""

from __future__ import annotations

import pytest

from softmax_ood.studies.logitnorm.ablation import tau_ablation
from softmax_ood.studies.logitnorm.figures import FIGURES, fig4, fig5

from .study_frames import make_spec, make_study

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frames():
    return make_study()


@pytest.mark.parametrize("name", ["fig1", "fig4", "fig5"])
def test_figure_png_deterministic(frames, name, tmp_path):
    spec = make_spec()
    a, b = tmp_path / "a" / f"{name}.png", tmp_path / f"{name}.png"
    FIGURES[name](frames, spec, a)
    FIGURES[name](frames, spec, b)
    data = a.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    assert data == b.read_bytes()
    assert b"matplotlib" not in data.lower()  # no Software metadata


def test_fig5_direct_and_svg_deterministic(frames, tmp_path):
    spec = make_spec()
    tau = tau_ablation(frames["runs"], frames["ood"], spec)
    fig5({"far": tau}, spec, tmp_path / "a.svg")
    fig5({"far": tau}, spec, tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


def test_missing_loss_raises(frames, tmp_path):
    samples = frames["samples"][frames["samples"]["loss"] != "logitnorm"]
    with pytest.raises(ValueError, match="logitnorm"):
        fig4(samples, make_spec(), tmp_path / "x.png")
    curves = {**frames, "curves": frames["curves"][frames["curves"]["loss"] != "ce"]}
    with pytest.raises(ValueError, match="ce"):
        FIGURES["fig1"](curves, make_spec(), tmp_path / "y.png")


@pytest.mark.parametrize("name", ["fig4", "fig5"])
def test_figures_draw_the_floor_solved_sets_when_no_set_passes_its_floor(frames, name, tmp_path):
    """The paper path's loopback run: every far set is floor-solved and no near set is in the
    test sets. Figs. 4 and 5 draw the floor-solved sets, labelled as such, instead of failing."""
    from softmax_ood.analysis.figcheck import read_check

    spec = {**make_spec(), "near_ood": []}
    ood = frames["ood"].assign(trivial=True)
    path = tmp_path / f"{name}.png"
    FIGURES[name]({**frames, "ood": ood}, spec, path)
    assert path.read_bytes().startswith(PNG)
    assert read_check(path)["problems"] == []


def test_fig5_is_drawn_only_with_two_or_more_taus_and_its_absence_is_declared():
    """Issue 45: one tau (the 28x28 default) makes Fig. 5 a plot with nothing to read; the
    config then does not ask for it, and its departure says so."""
    from pathlib import Path

    import yaml
    from snakemake.utils import update_config

    from softmax_ood.config import validate_config
    from softmax_ood.studies.logitnorm.study import departures, targets
    from softmax_ood.studies.registry import registered_studies

    root = Path(__file__).resolve().parents[5]

    def config(*overlays):
        cfg = yaml.safe_load((root / "config/default.yaml").read_text())
        for o in overlays:
            update_config(cfg, yaml.safe_load((root / "config" / o).read_text()))
        schema = root / "workflow/schemas/config.schema.yaml"
        return validate_config(cfg, schema, registered_studies())

    default, digits, full = config(), config("digits.yaml"), config("full.yaml")
    assert len(default["logitnorm"]["tau_ablation"]) == 1
    assert not any(t.endswith("/fig5.png") for t in targets(default))
    assert any(t.endswith("/fig5.png") for t in targets(digits))
    assert any(t.endswith("/fig5.png") for t in targets(full))
    # the digits' own grid is a departure; the full config's is the paper's (no entry)
    assert [d for d in departures(digits) if d.setting == "logitnorm.tau_ablation"]
    assert not [d for d in departures(full) if d.setting == "logitnorm.tau_ablation"]
    (tau,) = [d for d in departures(default) if d.setting == "logitnorm.tau_ablation"]
    assert "Fig. 5 is not drawn" in tau.ours
