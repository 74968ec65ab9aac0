"""Is a figure legible at the report's width? Checked on the drawn figure, at save time.

:func:`figure_problems` lists, in one sentence each, what a reader would stumble on:

* the canvas is wider than the report column (:data:`~.style.REPORT_WIDTH_IN` at the DPI);
* a text artist (title, label, tick label, legend text, annotation) reaches outside the canvas;
* two tick labels of one axis overlap, or two titles / axis labels overlap;
* no axes shows finite, non-constant data inside its drawn area (a blank figure: no data, or
  data outside the view, or a view whose x or y range is a single value);
* a legend is empty, names a series no axes draws, or covers plotted data (lines, markers,
  error bars, bars); an axes labels its series but no legend shows them.

:func:`~.style.save_figure` runs it and writes the result into the PNG's metadata (key
:data:`KEY`, JSON), so the contract test reads the verdict of every figure the workflow drew,
without redrawing it (:func:`read_check`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from matplotlib.collections import Collection, LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
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


def _degenerate(lo: float, hi: float) -> bool:
    span, scale = abs(float(hi) - float(lo)), max(abs(float(lo)), abs(float(hi)), 1e-300)
    return not np.isfinite(span) or span <= 1e-9 * scale


def _display(transform, xy) -> np.ndarray:
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    if not len(xy):
        return xy
    with np.errstate(all="ignore"):
        out = transform.transform(xy)
    return out[np.isfinite(out).all(axis=1)]


def _densify(points: np.ndarray, step: float = 2.0) -> np.ndarray:
    """The polyline through ``points`` (display pixels) sampled every ``step`` pixels."""
    if len(points) < 2:
        return points
    out = [points[:1]]
    for a, b in zip(points[:-1], points[1:], strict=True):
        n = int(min(max(np.hypot(*(b - a)) / step, 1), 2000))
        t = np.linspace(0.0, 1.0, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.concatenate(out)


def _marks(ax, bands: bool = False) -> tuple[list[np.ndarray], list]:
    """What ``ax`` plots, in display pixels: point clouds (line vertices and the segments between
    them, scatter markers, error-bar segments; with ``bands`` the outlines of other collections
    such as ``fill_between``) and boxes (bars, images). A legend may sit on a shaded band."""
    clouds, boxes = [], []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = _display(line.get_transform(), line.get_xydata())
        drawn = line.get_linestyle() not in ("None", "none", "", " ")
        clouds.append(_densify(xy) if drawn else xy)
    for c in ax.collections:
        if not isinstance(c, Collection) or not c.get_visible():
            continue
        if isinstance(c, PathCollection):
            clouds.append(_display(c.get_offset_transform(), c.get_offsets()))
        elif isinstance(c, LineCollection):
            for path in c.get_paths():
                clouds.append(_densify(_display(c.get_transform(), path.vertices)))
        elif bands:
            for path in c.get_paths():
                clouds.append(_display(c.get_transform(), path.vertices))
    for p in ax.patches:
        if isinstance(p, Rectangle) and p.get_visible() and p.get_height() and p.get_width():
            boxes.append(p.get_window_extent())
    for im in ax.images:
        if isinstance(im, AxesImage) and im.get_visible():
            boxes.append(im.get_window_extent())
    return clouds, boxes


def _shows_data(ax) -> bool:
    """Some plotted mark of ``ax`` lies inside its drawn area, and neither view range is a
    single value (matplotlib then draws nothing)."""
    if _degenerate(*ax.get_xlim()) or _degenerate(*ax.get_ylim()):
        return False
    box = ax.bbox
    clouds, boxes = _marks(ax, bands=True)
    for xy in clouds:
        inside = (
            (xy[:, 0] >= box.x0 - _TOL)
            & (xy[:, 0] <= box.x1 + _TOL)
            & (xy[:, 1] >= box.y0 - _TOL)
            & (xy[:, 1] <= box.y1 + _TOL)
        )
        if inside.any():
            return True
    return any(_overlap(b, box) for b in boxes) or not (clouds or boxes)


def _series_labels(axes) -> set[str]:
    """The labels of the series drawn in ``axes`` (matplotlib's ``_``-prefixed defaults left out)."""
    labels = set()
    for ax in axes:
        handles, names = ax.get_legend_handles_labels()
        labels.update(n for n in names if n and not n.startswith("_"))
    return labels


def _legend_problems(fig: Figure, axes: list) -> list[str]:
    problems = []
    legends = [(f"axes {i}", ax.get_legend(), [ax]) for i, ax in enumerate(axes)]
    legends += [("the figure", leg, axes) for leg in fig.legends]
    legends = [(name, leg, scope) for name, leg, scope in legends if isinstance(leg, Legend)]
    shown = set()
    for name, leg, scope in legends:
        if not leg.get_visible():
            continue
        texts = [t.get_text() for t in leg.get_texts() if t.get_visible()]
        texts = [t for t in texts if t.strip()]
        if not texts:
            problems.append(f"{name}: its legend is empty")
            continue
        shown.update(texts)
        labels = _series_labels(scope)
        stray = [t for t in texts if t not in labels]
        if stray:
            problems.append(f"{name}: its legend names {stray[0][:40]!r}, which no series plots")
        lb = leg.get_window_extent()
        inner = type(lb).from_extents(lb.x0 + _TOL, lb.y0 + _TOL, lb.x1 - _TOL, lb.y1 - _TOL)
        for i, ax in enumerate(axes):
            if not _overlap(inner, ax.bbox):
                continue
            clouds, boxes = _marks(ax)
            n = sum(
                int(
                    (
                        (xy[:, 0] > inner.x0)
                        & (xy[:, 0] < inner.x1)
                        & (xy[:, 1] > inner.y0)
                        & (xy[:, 1] < inner.y1)
                    ).any()
                )
                for xy in clouds
            ) + sum(_overlap(b, inner) for b in boxes)
            if n:
                where = "its" if name == f"axes {i}" else f"axes {i}'s"
                problems.append(f"{name}: its legend covers {where} plotted data ({n} series)")
    for i, ax in enumerate(axes):
        unshown = sorted(_series_labels([ax]) - shown)
        if unshown:
            problems.append(
                f"axes {i}: the series {unshown[0][:40]!r} is labelled but no legend shows it"
            )
    return problems


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
    if not any(_has_data(ax) and _shows_data(ax) for ax in data_axes):
        problems.append(
            "no axes shows finite, non-constant data inside its drawn area (a blank figure)"
        )
    problems += _legend_problems(fig, axes)
    return problems


def read_check(png: str | Path) -> dict | None:
    """The check :func:`~.style.save_figure` recorded in ``png`` (None: none recorded)."""
    from PIL import Image

    with Image.open(png) as im:
        raw = im.info.get(KEY)
    return None if raw is None else json.loads(raw)
