"""Figures 1-5: non-empty PNGs, byte-identical when written twice; which sets and images
Figs. 2 and 3 draw."""

from __future__ import annotations

import pytest

from softmax_ood.studies.logitnorm.ablation import tau_ablation
from softmax_ood.studies.logitnorm.figures import FIGURES, fig2_examples, fig4, fig5, ood_groups

from .study_frames import make_spec, make_study

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def frames():
    return make_study()


@pytest.mark.parametrize("name", ["fig1", "fig2", "fig3", "fig4", "fig5"])
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


@pytest.mark.parametrize("name", ["fig2", "fig3", "fig4", "fig5"])
def test_figures_draw_the_floor_solved_sets_when_no_set_passes_its_floor(frames, name, tmp_path):
    """The paper path's loopback run: every far set is floor-solved and no near set is in the
    test sets. Figs. 2-5 draw the floor-solved sets, labelled as such, instead of failing."""
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


def test_ood_groups_headline_floor_solved_and_near(frames):
    """Figs. 2 and 3 draw the headline far sets, the floor-solved ones (labelled so) and the
    near sets, each in the frame's order; a group without a set is left out."""
    spec, ood = make_spec(), frames["ood"]
    softmax = frames["softmax"]
    assert ood_groups(softmax, ood, spec) == {"far OOD (headline)": ["textures", "photos"]}
    solved = ood.assign(trivial=ood["ood_set"] == "photos")
    assert ood_groups(softmax, solved, {**spec, "near_ood": ["textures"]}) == {
        "far OOD, floor-solved": ["photos"],
        "near OOD": ["textures"],
    }


def test_fig2_draws_the_first_drawn_images_whatever_the_row_order(frames):
    """The examples are fixed by rule: the image of order 0 (the first of each seeded subset;
    the synthetic frame lists it last) of the ID set and of each group's first set."""
    spec = make_spec()
    groups = ood_groups(frames["softmax"], frames["ood"], spec)
    shuffled = frames["softmax"].sample(frac=1.0, random_state=0)
    ex = fig2_examples(shuffled, spec, groups)
    assert list(zip(ex["group"], ex["set"], ex["loss"], strict=True)) == [
        ("ID test", "id", "ce"),
        ("ID test", "id", "logitnorm"),
        ("far OOD (headline)", "textures", "ce"),
        ("far OOD (headline)", "textures", "logitnorm"),
    ]
    assert (ex["order"] == 0).all() and list(ex["image"]) == [129, 129, 109, 109]
    with pytest.raises(ValueError, match="first images"):
        fig2_examples(shuffled[shuffled["order"] != 0], spec, groups)


def test_fig2_and_fig3_need_both_losses(frames, tmp_path):
    softmax = frames["softmax"][frames["softmax"]["loss"] != "logitnorm"]
    for name in ("fig2", "fig3"):
        with pytest.raises(ValueError, match="logitnorm"):
            FIGURES[name]({**frames, "softmax": softmax}, make_spec(), tmp_path / f"{name}.png")
