"""The legibility check every saved figure carries (issue 21), on hand-built figures."""

from __future__ import annotations

import numpy as np

from softmax_ood.analysis.figcheck import figure_problems, read_check
from softmax_ood.analysis.style import (
    DPI,
    REPORT_WIDTH_IN,
    legend_below,
    new_figure,
    save_figure,
    style,
)


def _problems(fig):
    return figure_problems(fig, DPI, REPORT_WIDTH_IN)


def test_a_plain_line_plot_passes_and_is_recorded_in_the_png(tmp_path):
    with style():
        fig, (ax,) = new_figure((4, 3))
        ax.plot([0, 1, 2], [0, 1, 4], label="ce")
        ax.set_title("A title")
        ax.legend()
        assert _problems(fig) == []
        save_figure(fig, tmp_path / "f.png")
    assert read_check(tmp_path / "f.png") == {"problems": []}


def test_too_wide_outside_text_overlapping_ticks_and_blank_axes_are_found():
    with style():
        wide, (ax,) = new_figure((12, 3))
        ax.plot([0, 1], [0, 1])
        assert any("wider than the report" in p for p in _problems(wide))

        cut, (ax,) = new_figure((3, 2))
        ax.plot([0, 1], [0, 1])
        cut.text(0.9, 0.5, "a long label that runs off the right edge")
        assert any("outside the canvas" in p for p in _problems(cut))

        crowded, (ax,) = new_figure((2, 2))
        ax.bar(range(13), np.arange(1, 14))
        ax.set_xticks(range(13), [f"{15 * (i + 1)}°" for i in range(13)])
        assert any("tick labels" in p and "overlap" in p for p in _problems(crowded))

        blank, (ax,) = new_figure((3, 2))
        ax.plot([0, 1], [np.nan, np.nan])
        assert any("blank figure" in p for p in _problems(blank))

        flat, (ax,) = new_figure((3, 2))
        ax.plot([0, 1, 2], [1.0, 1.0, 1.0])
        ax.plot([0, 1, 2], [2.0, 2.0, 2.0])
        assert _problems(flat) == []  # constant y over varying x still shows data


def test_overlapping_panel_titles_are_found():
    with style():
        fig, axes = new_figure((3, 1.5), ncols=3)
        for ax in axes:
            ax.plot([0, 1], [0, 1])
            ax.set_title("a rather long panel title that cannot fit")
        assert any("overlap" in p for p in _problems(fig))


def test_a_plot_whose_only_marks_sit_outside_the_view_is_blank():
    """Issue 45's empty Fig. 5: a figure whose data all lie outside the drawn area is blank.
    (The one-tau construction the issue reported, an error bar and a line at the same x on a
    log axis, does not collapse the view with this matplotlib: it widens a singular range, so
    that construction is no test here; Fig. 5 is not drawn with one tau, test_figures.)"""
    with style():
        moved, (ax,) = new_figure((4, 3))
        ax.plot([0, 1, 2], [0, 1, 4])
        ax.set_xlim(5, 6)  # every point outside the view
        assert any("blank figure" in p for p in _problems(moved))

        shown, (ax,) = new_figure((4, 3))
        ax.plot([0, 1, 2], [0, 1, 4])
        assert not any("blank figure" in p for p in _problems(shown))


def test_legends_that_are_empty_stray_missing_or_over_the_data_are_found():
    """Issue 46: a legend must name what is plotted, and sit outside the data."""
    with style():
        empty, (ax,) = new_figure((4, 3))
        ax.plot([0, 1], [0, 1])
        ax.legend([], [])
        assert any("legend is empty" in p for p in _problems(empty))

        stray, (ax,) = new_figure((4, 3))
        (line,) = ax.plot([0, 1], [0, 1], label="ce")
        ax.legend([line], ["logitnorm"], loc="lower right")
        assert any("'logitnorm', which no series plots" in p for p in _problems(stray))

        missing, (ax,) = new_figure((4, 3))
        ax.plot([0, 1], [0, 1], label="ce")
        ax.plot([0, 1], [1, 0], label="logitnorm")
        assert any("'ce' is labelled but no legend" in p for p in _problems(missing))

        covered, (ax,) = new_figure((4, 3))
        x = np.linspace(0, 1, 50)
        ax.plot(x, np.full_like(x, 0.5), label="a flat line through the middle")
        ax.plot(x, x, label="a rising line")
        ax.legend(loc="center")
        assert any("legend covers its plotted data" in p for p in _problems(covered))

        bars, (ax,) = new_figure((4, 3))
        ax.hist(np.linspace(0, 1, 400), bins=10, label="uniform")
        ax.legend(loc="center")
        assert any("legend covers its plotted data" in p for p in _problems(bars))

        below, axes = new_figure((5, 3), ncols=2)
        for ax in axes:
            ax.plot(x, np.ones_like(x), label="flat")
            ax.plot(x, x, label="rising")
        legend_below(below, axes)
        assert _problems(below) == []
