"""Issue 46: figures that do not mislead. Fig. 3 puts every panel on one OOD-score axis (one
distance axis per loss), greys the shifts the discriminator does not separate from clean, leaves
out the far sets the far trend excludes and draws the discriminator repeats' spread as x error
bars; Fig. 4's legends sit outside the data; Fig. 2 shows a shift its claim can be read on."""

from __future__ import annotations

import numpy as np

from .. import figures, plots
from ..study import spec as study_spec
from .controls import frames
from .test_claims_gates import SHIFT, _set_scores


def _capture(monkeypatch) -> list:
    drawn = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, path: drawn.append(fig))
    return drawn


def test_fig3_shares_axes_greys_unresolved_shifts_and_drops_excluded_far_sets(cfg, monkeypatch):
    spec = study_spec(cfg)
    f = frames(spec, "paper")
    _set_scores(f, {lv: 0.5 + 0.004 * lv for lv in (1, 2, 3, 4, 5)}, noise=0.001)
    far = spec["far_ood"][-1]
    sc = f["ood_scores"]
    sc.loc[sc["eval_set"] == f"far:{far}", "floor_accepted"] = 0
    out = plots._fig3_frame(f, spec)
    assert f"far:{far}" not in set(out["eval_set"])
    assert (out["ood_score_std"] > 0).all()  # the repeats' spread, not the seeds' zero
    drawn = _capture(monkeypatch)
    plots.fig3_full(f, spec, "unused.png")
    axes = [ax for ax in drawn[0].axes if ax.get_visible()]
    assert len({ax.get_xlim() for ax in axes}) == 1

    def notes(ax) -> str:
        return " ".join(t.get_text() for t in ax.texts)

    mine = [ax for ax in axes if SHIFT in ax.get_title()]
    assert mine and all("not separated from clean" in notes(ax) for ax in mine)
    assert not any("not separated" in notes(ax) for ax in axes if ax not in mine)
    xerr = [
        c
        for ax in axes
        for c in ax.collections
        if c.__class__.__name__ == "LineCollection" and len(c.get_segments())
    ]
    widths = [abs(s[1][0] - s[0][0]) for c in xerr for s in c.get_segments()]
    assert max(widths) > 0


def test_fig4_legends_sit_outside_the_axes(monkeypatch):
    from .test_figures import _fig4

    drawn = _capture(monkeypatch)
    figures.fig4(*_fig4(), "unused.png")
    for ax in drawn[0].axes:
        leg = ax.get_legend()
        if leg is None:
            continue
        fig = drawn[0]
        fig.canvas.draw()
        box, frame = leg.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= frame.x1 - 1, ax.get_title()


def test_fig2_shows_a_shift_its_claim_can_be_read_on(cfg):
    spec = study_spec(cfg)
    f = frames(spec, "paper")
    assert plots.fig2_shift(f, spec) == spec["figure_shift"]
    shift = spec["figure_shift"]
    levels = sorted({lv for lv in f["levels"].loc[f["levels"]["shift"] == shift, "level"] if lv})
    rng = np.random.default_rng(0)
    for lv in levels:
        name = f"{shift}@{lv:g}"
        sc = f["ood_scores"]
        i = sc.index[sc["eval_set"] == name][0]
        sc.at[i, "per_repeat"] = list(0.5 + rng.normal(0, 0.001, len(sc.at[i, "per_repeat"])))
        sc.at[i, "ood_score"] = float(np.mean(sc.at[i, "per_repeat"]))
    assert plots.fig2_shift(f, spec) != shift
