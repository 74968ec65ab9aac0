"""Figures of the Ulmer & Cinà study, drawn from the frames of :mod:`.scaling` and
:mod:`.softmax_note` with the project style (:mod:`softmax_ood.analysis.style`: Agg canvas, no
pyplot, no timestamps), so drawing and saving the same frame twice gives identical bytes.

:see Paper: Ulmer & Cinà, "Know your limits", Fig. 1 (predictive entropy over the plane), Theorem 1
    (metrics and gradient norms under scaling); softmax-properties note, Property 5.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns

from softmax_ood.analysis.style import (
    REPORT_WIDTH_IN,
    color_of,
    legend_below,
    marker_of,
    new_figure,
    palette,
    save_figure,
    style,
)
from softmax_ood.studies.ulmer.study import DATASETS, METRICS

__all__ = [
    "METRIC_LABELS",
    "directions_figure",
    "fig1_heatmaps",
    "scaling_figure",
    "softmax_note_figure",
]

METRIC_LABELS = {
    "max_prob": "max. softmax prob.",
    "class_variance": "class variance",
    "predictive_entropy": "predictive entropy",
    "mutual_information": "mutual information",
}
"""Axis labels of the metric names of :data:`~softmax_ood.studies.ulmer.uncertainty.METRICS`."""

_KIND_ORDER = ("single", "control", "mc_dropout", "bbb", "ensemble", "mcmc")


def _colours(frame: pd.DataFrame, models: Sequence[str]) -> dict:
    """The shared palette's colour of each model's kind (:func:`color_of`)."""
    if "kind" not in frame:
        return palette(models)
    kind = frame.drop_duplicates("model").set_index("model")["kind"]
    return {m: color_of(kind[m]) for m in models}


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


def _models_in_order(frame: pd.DataFrame) -> list[str]:
    """Model names by kind (single, control, MC dropout, BBB, ensemble, MCMC), then order of
    appearance."""
    names = list(dict.fromkeys(frame["model"]))
    if "kind" not in frame:
        return names
    kind = frame.drop_duplicates("model").set_index("model")["kind"]
    rank = {k: i for i, k in enumerate(_KIND_ORDER)}
    return sorted(names, key=lambda m: (rank.get(kind[m], len(rank)), names.index(m)))


def fig1_heatmaps(
    frame: pd.DataFrame,
    path: str | Path,
    metric: str = "predictive_entropy",
    *,
    data: pd.DataFrame | None = None,
    cmap: str = "Purples",
    panel_size: float = 2.4,
) -> None:
    """Fig. 1: one heatmap of ``metric`` per model, white = certain, dark = uncertain.

    Deterministic networks (the single network and the control) fill the first row, the
    averaged models (MC dropout, Bayes-by-backprop, ensembles, MCMC) the second; all panels share one
    colour scale. Panels shrink so the figure stays within the report width.

    :param frame: concatenated :func:`~softmax_ood.studies.ulmer.scaling.grid_heatmap` frames
        (columns ``model, x1, x2, metric, value``, optionally ``kind``).
    :param path: output file (``.png`` or ``.svg``).
    :param metric: which metric to draw.
    :param data: optional training points (columns ``x1, x2, y``) drawn on every panel.
    :param cmap: matplotlib / seaborn colormap name.
    :param panel_size: inches per panel.
    """
    sub = frame[frame["metric"] == metric]
    if sub.empty:
        raise ValueError(f"no rows for metric {metric!r}")
    models = _models_in_order(sub)
    kinds = sub.drop_duplicates("model").set_index("model")["kind"] if "kind" in sub else None
    first = [m for m in models if kinds is not None and kinds[m] in ("single", "control")]
    rows = [r for r in (first, [m for m in models if m not in first]) if r]
    ncols = max(len(r) for r in rows)
    panel_size = min(panel_size, (REPORT_WIDTH_IN - 0.8) / ncols)
    vmin, vmax = float(sub["value"].min()), float(sub["value"].max())
    if vmax <= vmin:
        vmax = vmin + 1e-12
    with style():
        fig, axes = new_figure(
            (panel_size * ncols + 0.8, panel_size * len(rows)), ncols=ncols, nrows=len(rows)
        )
        grid = axes.reshape(len(rows), ncols)
        mesh = None
        for r, names in enumerate(rows):
            for c in range(ncols):
                ax = grid[r, c]
                if c >= len(names):
                    ax.axis("off")
                    continue
                cells = sub[sub["model"] == names[c]]
                table = cells.pivot_table(index="x2", columns="x1", values="value", sort=True)
                mesh = ax.pcolormesh(
                    table.columns.to_numpy(),
                    table.index.to_numpy(),
                    table.to_numpy(),
                    cmap=cmap,
                    vmin=vmin,
                    vmax=vmax,
                    shading="nearest",
                    rasterized=True,
                )
                if data is not None:
                    sns.scatterplot(
                        data=data,
                        x="x1",
                        y="x2",
                        hue="y",
                        palette="colorblind",
                        s=5,
                        linewidth=0,
                        legend=False,
                        ax=ax,
                    )
                # long names (the control's) wrap so neighbouring titles of narrow panels do not
                # overlap
                ax.set_title(textwrap.fill(names[c], 20))
                ax.set_xlabel("$x_1$")
                ax.set_ylabel("$x_2$" if c == 0 else "")
                ax.set_aspect("equal")
                ax.grid(False)
        fig.colorbar(mesh, ax=list(axes), label=_label(metric), shrink=0.8)
        save_figure(fig, path)


def _band(values: pd.Series, log: bool, floor: float) -> tuple[float, float, float]:
    """Mean and mean -/+ std over seeds (in log10 space when ``log``; values clipped at floor)."""
    v = values.to_numpy(dtype=np.float64)
    if log:
        lv = np.log10(np.maximum(v, floor))
        m, s = lv.mean(), lv.std()
        return 10.0**m, 10.0 ** (m - s), 10.0 ** (m + s)
    m, s = v.mean(), v.std()
    return m, m - s, m + s


def scaling_figure(
    frame: pd.DataFrame,
    path: str | Path,
    dataset: str,
    *,
    metrics: Sequence[str] | None = None,
    floor: float = 1e-30,
    panel_size: tuple[float, float] = (3.5, 2.0),
    note: str = "",
) -> None:
    """Each metric (left) and its input-gradient norm (right) against the scale ``alpha``.

    One line per model: the mean over seeds with a band of +/- one standard deviation over seeds
    (``ddof=0``). Values are on linear y axes; gradient norms on log y axes, averaged as
    ``log10(max(grad_norm, floor))`` (geometric mean, band in log space), so exact zeros are
    drawn at ``floor``. ``alpha`` is on a log axis.

    :param frame: concatenated :func:`~softmax_ood.studies.ulmer.scaling.scaling_experiment`
        frames (reduced; columns ``model, seed, alpha, metric, value, grad_norm``).
    :param path: output file (``.png`` or ``.svg``).
    :param dataset: name shown in the title.
    :param metrics: metric rows to draw (default: those in ``frame``, in the paper's order).
    :param floor: smallest gradient norm drawn.
    :param panel_size: ``(width, height)`` of one panel in inches.
    :param note: appended to the title (e.g. that the scaled feature is degenerate).
    """
    present = list(dict.fromkeys(frame["metric"]))
    order = [m for m in METRIC_LABELS if m in present] + [
        m for m in present if m not in METRIC_LABELS
    ]
    metrics = list(metrics) if metrics is not None else order
    models = _models_in_order(frame)
    colours = _colours(frame, models)
    n_seeds = frame["seed"].nunique()
    width = min(2 * panel_size[0], REPORT_WIDTH_IN)
    with style():
        fig, axes = new_figure(
            (width, panel_size[1] * len(metrics) + 0.6), ncols=2, nrows=len(metrics)
        )
        grid = axes.reshape(len(metrics), 2)
        for r, metric in enumerate(metrics):
            sub = frame[frame["metric"] == metric]
            for c, (column, log) in enumerate((("value", False), ("grad_norm", True))):
                ax = grid[r, c]
                for model in models:
                    cur = sub[sub["model"] == model]
                    if cur.empty:
                        continue
                    stats = [
                        (alpha, *_band(g[column], log, floor))
                        for alpha, g in cur.groupby("alpha", sort=True)
                    ]
                    a, mean, lo, hi = (np.array(col) for col in zip(*stats, strict=True))
                    ax.plot(a, mean, color=colours[model], label=model, lw=1.4)
                    ax.fill_between(a, lo, hi, color=colours[model], alpha=0.2, lw=0)
                ax.set_xscale("log")
                if log:
                    ax.set_yscale("log")
                    ax.set_ylabel(f"‖∇ₓ {_label(metric)}‖₂")
                else:
                    ax.set_ylabel(_label(metric))
                ax.set_xlabel("scale α" if r == len(metrics) - 1 else "")
        legend_below(fig, [grid[0, 0]], ncol=min(len(models), 4))  # outside the data (issue 46)
        fig.suptitle(
            "\n".join(
                x
                for x in (
                    f"{dataset}: uncertainty metrics and their gradient norms under scaling",
                    note.strip(),
                    f"lines: mean over {n_seeds} seeds; bands: ± 1 std over seeds "
                    "(gradients: in log10)",
                )
                if x
            )
        )
        save_figure(fig, path)


def softmax_note_figure(
    frame: pd.DataFrame, path: str | Path, size: tuple[float, float] = (7.0, 2.6)
) -> None:
    """Max probability and entropy of ``softmax(alpha z)`` against ``alpha > 0`` (log axis).

    Dotted lines mark the limits 1 / log(1) (one-hot) and 1/C / log C (uniform) of each vector
    size; a vector with ``n`` tied maxima levels off at ``1/n`` and ``log n`` instead.

    :param frame: :func:`~softmax_ood.studies.ulmer.softmax_note.sharpness_table` output.
    :param path: output file (``.png`` or ``.svg``).
    :param size: figure ``(width, height)`` in inches.
    """
    sub = frame[frame["alpha"] > 0]
    vectors = list(dict.fromkeys(sub["vector"]))
    colours = palette(vectors)
    sizes = sorted(set(int(c) for c in sub["n_classes"]))
    with style():
        fig, axes = new_figure(size, ncols=2)
        for ax, column, label in (
            (axes[0], "max_prob", "max. probability"),
            (axes[1], "entropy", "entropy (nats)"),
        ):
            sns.lineplot(
                data=sub,
                x="alpha",
                y=column,
                hue="vector",
                hue_order=vectors,
                palette=colours,
                marker="o",
                markersize=3,
                errorbar=None,
                ax=ax,
            )
            for c in sizes:
                ref = (1.0, 1.0 / c) if column == "max_prob" else (0.0, float(np.log(c)))
                for y in ref:
                    ax.axhline(y, color="0.4", ls=":", lw=0.8)
            ax.set_xscale("log")
            ax.set_xlabel("scale α")
            ax.set_ylabel(label)
        axes[1].get_legend().remove()
        fig.suptitle("softmax(α z): one-hot (or shared among ties) as α → ∞, uniform as α → 0")
        save_figure(fig, path)


def directions_figure(
    frame: pd.DataFrame, path: str | Path, *, level: float, height: float = 2.4
) -> None:
    """Mean max probability at the largest alpha along every direction (x axis: the axes, then
    the random directions), one marker per model kind in the shared palette and one point per
    seed (the distribution, not a pooled mean: an averaged model's split votes stand out), at
    the sample count ``K``; one panel per dataset. Degenerate
    directions (parallel to a class boundary) are shaded grey; the dashed line is ``level``.

    :param frame: concatenated
        :func:`~softmax_ood.studies.ulmer.scaling.certainty_at_scale` frames (with ``dataset``
        and ``seed``).
    """
    sub = frame[frame["k_role"] == "K"]
    datasets = list(dict.fromkeys(sub["dataset"]))
    models = _models_in_order(sub)
    colours = _colours(sub, models)
    kinds = sub.drop_duplicates("model").set_index("model")["kind"]
    n_seeds = sub["seed"].nunique()
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, height * len(datasets) + 0.5), nrows=len(datasets))
        for ax, ds in zip(axes, datasets, strict=True):
            cur = sub[sub["dataset"] == ds]
            dirs = cur.drop_duplicates("direction")[["direction", "direction_type", "degenerate"]]
            order = list(dirs["direction"])
            pos = {d: i for i, d in enumerate(order)}
            for _, d in dirs[dirs["degenerate"].astype(bool)].iterrows():
                ax.axvspan(pos[d["direction"]] - 0.5, pos[d["direction"]] + 0.5, color="0.85", lw=0)
            width = 0.8 / max(len(models), 1)
            for j, model in enumerate(models):
                # every direction x seed cell, not a pooled mean: split votes show as outliers
                cells = cur[cur["model"] == model]
                x = np.array([pos[d] for d in cells["direction"]], dtype=float)
                x += (j - (len(models) - 1) / 2) * width
                ax.scatter(
                    x,
                    cells["mean_max_prob"].to_numpy(),
                    marker=marker_of(kinds[model]) or "o",
                    s=6,
                    lw=0.4,
                    alpha=0.8,
                    color=colours[model],
                    label=model,
                )
            ax.axhline(level, color="0.3", ls="--", lw=0.8)
            ax.set_xticks(np.arange(len(order)))
            ax.set_xticklabels(order, rotation=90, fontsize=5 if len(order) > 12 else 7)
            ax.set_xlim(-0.6, len(order) - 0.4)
            ax.set_ylabel("mean max prob.")
            ax.set_title(f"{ds}: at the largest α (grey: degenerate direction)")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", fontsize=6, ncol=len(models))
        fig.suptitle(f"Far-away certainty: one point per direction x seed ({n_seeds} seeds)")
        save_figure(fig, path)


# -- each figure as a function of the study's frames and section (``study.figure_job``) ------


def _scaling(dataset: str):
    def draw(frames: dict, section: dict, path) -> None:
        directions = frames["directions"]
        paper = directions[directions["paper_direction"]].drop_duplicates("direction")
        note = "".join(
            f"along {d['direction']}: a degenerate direction, parallel to a class boundary"
            for _, d in paper.iterrows()
            if d["degenerate"]
        )
        scaling_figure(frames["scaling"], path, dataset, note=note)

    return draw


def _directions(frames: dict, section: dict, path) -> None:
    frame = pd.concat(list(frames.values()), ignore_index=True)  # the data sets' order
    directions_figure(frame, path, level=float(section["level"]))


def _fig1(metric: str):
    def draw(frames: dict, section: dict, path) -> None:
        # white = certain: low entropy / variance / MI, but HIGH max probability
        cmap = "Purples_r" if metric == "max_prob" else "Purples"
        fig1_heatmaps(frames["grid"], path, metric, data=frames["points"], cmap=cmap)

    return draw


def _softmax_note(frames: dict, section: dict, path) -> None:
    softmax_note_figure(frames["sharpness"], path)


def frame_figures(datasets: Sequence[str], metrics: Sequence[str]) -> dict:
    """Figure name -> function(frames, section, path), for these data sets and metrics."""
    return {
        **{f"scaling_{ds}": _scaling(ds) for ds in datasets},
        "directions": _directions,
        **{f"fig1_{m}": _fig1(m) for m in metrics},
        "softmax_note": _softmax_note,
    }


#: the study's figures (study.FIGURES), each from the frames ``figure_job`` gives it
FRAME_FIGURES = frame_figures(DATASETS, METRICS)
