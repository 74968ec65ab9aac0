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

__all__ = [
    "DPI",
    "MARKERS",
    "RC",
    "REPORT_WIDTH_IN",
    "ROLES",
    "color_of",
    "legend_below",
    "marker_of",
    "new_figure",
    "palette",
    "save_figure",
    "style",
]

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


#: The report column: no figure is wider than this (inches at :data:`DPI`).
REPORT_WIDTH_IN = 7.5

#: One colour and one marker per role across every study (Okabe-Ito, colour-blind safe): the same
#: colour means the same loss or model kind everywhere. Roles are what figures label:
#: loss kinds (``ce``, ``logitnorm``, ``logitpenalty``, ``godin``, ``reward_mse``,
#: ``gaussian_nll``), model kinds (Ulmer's ``single``, ``mc_dropout``, ``bbb``, ``ensemble``,
#: ``mcmc``, ``control``), comparison roles (``theory``, ``practice``, ``oracle``, ``ocs``), data roles
#: (``id``, ``near``, ``far``).
_OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#7F7F7F",
}
ROLES: dict[str, str] = {
    "ce": _OKABE_ITO["blue"],
    "logitnorm": _OKABE_ITO["vermillion"],
    "logitpenalty": _OKABE_ITO["green"],
    "godin": _OKABE_ITO["purple"],
    "reward_mse": _OKABE_ITO["orange"],
    "gaussian_nll": _OKABE_ITO["green"],
    "single": _OKABE_ITO["blue"],
    "mc_dropout": _OKABE_ITO["orange"],
    "bbb": _OKABE_ITO["green"],
    "ensemble": _OKABE_ITO["purple"],
    "mcmc": _OKABE_ITO["vermillion"],
    "control": _OKABE_ITO["grey"],
    "theory": _OKABE_ITO["black"],
    "practice": _OKABE_ITO["sky"],
    "oracle": _OKABE_ITO["grey"],
    "ocs": _OKABE_ITO["black"],
    "id": _OKABE_ITO["blue"],
    "near": _OKABE_ITO["orange"],
    "far": _OKABE_ITO["vermillion"],
}
MARKERS: dict[str, str] = {
    "ce": "o",
    "logitnorm": "s",
    "logitpenalty": "^",
    "godin": "D",
    "reward_mse": "v",
    "gaussian_nll": "P",
    "single": "o",
    "mc_dropout": "s",
    "bbb": "^",
    "ensemble": "D",
    "mcmc": "v",
    "control": "x",
    "theory": "",
    "practice": "o",
    "oracle": "*",
    "ocs": "",
    "id": "o",
    "near": "s",
    "far": "^",
}


def color_of(role: str) -> str:
    """The one colour of a role (a loss kind, model kind, or comparison/data role)."""
    if role not in ROLES:
        raise ValueError(f"no colour for the role {role!r}; known roles: {', '.join(ROLES)}")
    return ROLES[role]


def marker_of(role: str) -> str:
    """The one marker of a role ('' for a line without markers)."""
    color_of(role)
    return MARKERS[role]


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


def legend_below(fig: Figure, axes, ncol: int = 2, **kw) -> None:
    """One legend for ``axes`` below the panels, outside the data (constrained layout makes room):
    every labelled series once, in drawing order (a label two panels share is shown once)."""
    seen: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=ncol, **kw)


def palette(names, name: str = "colorblind") -> dict:
    """A fixed colour per name (order of ``names`` decides the colour)."""
    names = list(names)
    return dict(zip(names, sns.color_palette(name, max(len(names), 1)), strict=False))


def save_figure(fig: Figure, path: str | Path) -> None:
    """Write ``fig`` as PNG (or SVG by suffix) with no time or version metadata. A PNG carries
    the legibility check of :mod:`.figcheck` in its metadata (read back with ``read_check``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".svg":
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
    else:
        import json

        from .figcheck import KEY, figure_problems

        check = {"problems": figure_problems(fig, DPI, REPORT_WIDTH_IN)}
        fig.savefig(
            path,
            dpi=DPI,
            format="png",
            metadata={"Software": None, KEY: json.dumps(check, sort_keys=True)},
        )
