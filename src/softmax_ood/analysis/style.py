"""Figure style shared by every study: fixed sizes, fonts and DPI, seaborn's whitegrid, no
pyplot (Agg canvas per figure, so nothing global), and PNG/SVG files without timestamps or
software versions, so drawing the same figure twice gives identical bytes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["DPI", "RC", "new_figure", "palette", "save_figure", "style"]

DPI = 150
RC = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "svg.hashsalt": "softmax-ood",
    "path.simplify": True,
}


@contextmanager
def style() -> Iterator[None]:
    """The project's plotting style; draw every figure inside it."""
    with sns.axes_style("whitegrid"), matplotlib.rc_context(RC):
        yield


def new_figure(size: tuple[float, float], ncols: int = 1, nrows: int = 1, **kw):
    """``(fig, axes)`` on an Agg canvas; ``axes`` is a flat array (constrained layout)."""
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw).ravel()
    return fig, axes


def palette(names, name: str = "colorblind") -> dict:
    """A fixed colour per name (order of ``names`` decides the colour)."""
    names = list(names)
    return dict(zip(names, sns.color_palette(name, max(len(names), 1)), strict=False))


def save_figure(fig: Figure, path: str | Path) -> None:
    """Write ``fig`` as PNG (or SVG by suffix) with no time or version metadata."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".svg":
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    else:
        fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
