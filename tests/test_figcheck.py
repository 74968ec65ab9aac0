"""The legibility check every saved figure carries (issue 21), on hand-built figures."""

from __future__ import annotations

import numpy as np

from softmax_ood.analysis.figcheck import figure_problems, read_check
from softmax_ood.analysis.style import DPI, REPORT_WIDTH_IN, new_figure, save_figure, style


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
