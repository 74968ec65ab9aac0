"""Is a figure legible at the report's width? Checked on the drawn figure, at save time.

:func:`figure_problems` lists, in one sentence each, what a reader would stumble on:

* the canvas is wider than the report column (:data:`~.style.REPORT_WIDTH_IN` at the DPI);
* a text artist (title, label, tick label, legend text, annotation) reaches outside the canvas;
* two tick labels of one axis overlap, or two titles / axis labels overlap;
* no axes carries finite, non-constant data (a blank figure).

:func:`~.style.save_figure` runs it and writes the result into the PNG's metadata (key
:data:`KEY`, JSON), so the contract test reads the verdict of every figure the workflow drew,
without redrawing it (:func:`read_check`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.collections import Collection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Text

__all__ = ["KEY", "figure_problems", "read_check"]

KEY = "figure-check"
_TOL = 1.0  # pixels


def _visible_text(t: Text) -> bool:
    return t.get_visible() and bool(t.get_text().strip()) and t.get_alpha() != 0


def _overlap(a, b) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > _TOL and min(a.y1, b.y1) - max(a.y0, b.y0) > _TOL


def _finite_nonconstant(values) -> bool:
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    return v.size > 0 and (v.size == 1 or float(v.max() - v.min()) > 0)


def _drawn_tick_labels(axis) -> list[Text]:
    """The tick labels matplotlib draws (ticks inside the view interval), in order."""
    ticks = axis._update_ticks()
    return [t for tick in ticks for t in (tick.label1, tick.label2) if _visible_text(t)]


def _has_data(ax) -> bool:
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        x = np.asarray(line.get_xdata(), dtype=float).ravel()
        y = np.asarray(line.get_ydata(), dtype=float).ravel()
        if x.size != y.size:
            continue
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.any() and (_finite_nonconstant(x[ok]) or _finite_nonconstant(y[ok])):
            return True
    for c in ax.collections:
        if not isinstance(c, Collection) or not c.get_visible():
            continue
        offsets = c.get_offsets()
        if len(offsets) and _finite_nonconstant(offsets):
            return True
        arr = c.get_array()
        if arr is not None and _finite_nonconstant(np.ma.filled(arr, np.nan)):
            return True
        if any(len(p.vertices) and _finite_nonconstant(p.vertices) for p in c.get_paths()):
            return True
    for im in ax.images:
        if isinstance(im, AxesImage) and _finite_nonconstant(np.ma.filled(im.get_array(), np.nan)):
            return True
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_visible()]
    return any(abs(p.get_height()) > 0 and np.isfinite(p.get_height()) for p in bars)


def figure_problems(fig: Figure, dpi: float, max_width_in: float) -> list[str]:
    """Everything that makes ``fig`` hard to read at ``dpi`` in a column ``max_width_in`` wide."""
    problems = []
    width_in, height_in = fig.get_size_inches()
    if width_in > max_width_in + 1e-6:
        problems.append(
            f"the canvas is {width_in:.2f} in wide, wider than the report column ({max_width_in} in)"
        )
    fig.set_dpi(dpi)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)  # layout (constrained) happens on draw
    W, H = width_in * dpi, height_in * dpi
    axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.axison]
    drawn_ticks = {
        id(ax): {"x": _drawn_tick_labels(ax.xaxis), "y": _drawn_tick_labels(ax.yaxis)}
        for ax in axes
    }
    all_tick_labels = {
        id(t)
        for ax in fig.get_axes()
        for a in (ax.xaxis, ax.yaxis)
        for tick in a.get_major_ticks() + a.get_minor_ticks()
        for t in (tick.label1, tick.label2)
    }
    texts = [t for t in fig.findobj(Text) if _visible_text(t) and id(t) not in all_tick_labels]
    texts += [t for d in drawn_ticks.values() for labels in d.values() for t in labels]
    for t in texts:
        bb = t.get_window_extent(renderer)
        if bb.x0 < -_TOL or bb.y0 < -_TOL or bb.x1 > W + _TOL or bb.y1 > H + _TOL:
            problems.append(f"the text {t.get_text()[:40]!r} reaches outside the canvas")
    for i, ax in enumerate(axes):
        for which, ticks in drawn_ticks[id(ax)].items():
            boxes = [
                (t.get_text(), t.get_window_extent(renderer)) for t in ticks if _visible_text(t)
            ]
            for (ta, a), (tb, b) in zip(boxes, boxes[1:], strict=False):
                if _overlap(a, b):
                    problems.append(f"axes {i}: the {which} tick labels {ta!r} and {tb!r} overlap")
                    break
    heads = [
        t
        for ax in axes
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)
        if _visible_text(t)
    ]
    if fig._suptitle is not None and _visible_text(fig._suptitle):
        heads.append(fig._suptitle)
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in heads]
    for k, (ta, a) in enumerate(boxes):
        for tb, b in boxes[k + 1 :]:
            if _overlap(a, b):
                problems.append(f"the titles/labels {ta[:30]!r} and {tb[:30]!r} overlap")
    data_axes = [ax for ax in fig.get_axes() if ax.get_visible()]
    if not any(_has_data(ax) for ax in data_axes):
        problems.append("no axes carries finite, non-constant data (a blank figure)")
    return problems


def read_check(png: str | Path) -> dict | None:
    """The check :func:`~.style.save_figure` recorded in ``png`` (None: none recorded)."""
    from PIL import Image

    with Image.open(png) as im:
        raw = im.info.get(KEY)
    return None if raw is None else json.loads(raw)
