"""Seddik et al.'s Figures 2-5 and the validation figure, from the frames of :mod:`.experiments`.

Drawn with the shared style (:mod:`softmax_ood.analysis.style`): Agg canvas, fixed sizes,
fonts and DPI, files without time or version metadata, so the same figure twice is the same
bytes. Registry :data:`FIGURES` maps names to ``f(frame, path)``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns
from scipy.stats import norm

from ...analysis.style import (
    REPORT_WIDTH_IN,
    color_of,
    legend_below,
    marker_of,
    new_figure,
    save_figure,
    style,
)

__all__ = ["FIGURES", "fig2", "fig3", "fig4", "fig5", "fig_validation"]


def _require(frame: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing or frame.empty:
        raise ValueError(f"The {where} frame is empty or lacks columns {missing}.")


def _accuracy_axes(ax, frame: pd.DataFrame, x: str, title: str) -> None:
    """Theory (lines, the palette's ``theory`` colour) and practice (markers, ``practice``:
    mean ± std over seeds); test solid / filled, train dashed / open."""
    sel = frame[frame["cls"] == "all"]
    th_c, pr_c = color_of("theory"), color_of("practice")
    for split, ls, face in (("test", "-", pr_c), ("train", "--", "none")):
        th = sel[(sel["source"] == "theory") & (sel["split"] == split)].sort_values(x)
        ax.plot(th[x], th["accuracy"], color=th_c, linestyle=ls, label=f"theory, {split}")
        pr = sel[(sel["source"] == "practice") & (sel["split"] == split)]
        stats = pr.groupby(x)["accuracy"].agg(["mean", "std"]).sort_index()
        ax.errorbar(
            stats.index,
            stats["mean"],
            yerr=np.nan_to_num(stats["std"]),
            fmt=marker_of("practice"),
            color=pr_c,
            markerfacecolor=face,
            capsize=2,
            label=f"practice, {split}",
        )
    n_seeds = sel.loc[sel["source"] == "practice", "seed"].nunique()
    ax.set(xlabel=x, ylabel="accuracy", title=f"{title}\n(practice: mean ± std, {n_seeds} seeds)")
    ax.legend(loc="best", frameon=True)


def fig2(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 2: accuracy vs p on the Gaussian mixture, theory (lines) vs practice (markers)."""
    _require(frame, ["p", "source", "split", "cls", "accuracy"], "fig2")
    n, lam = frame["n"].iloc[0], frame["lam"].iloc[0]
    with style():
        fig, (ax,) = new_figure((5.2, 3.8))
        _accuracy_axes(ax, frame, "p", f"Gaussian mixture, n={n}, λ={lam:g}")
        ax.set_xscale("log")
        ps = sorted(frame["p"].unique())
        ax.set_xticks(ps, [str(v) for v in ps])
        ax.minorticks_off()
        save_figure(fig, path)


def _class_label(sel: pd.DataFrame) -> str:
    """A Fig. 3 class's name: the frame's ``label`` (Fashion-MNIST's class name or "digit d");
    frames made before that column name the index only."""
    if "label" in sel.columns:
        return str(sel["label"].iloc[0])
    return f"class index {sel['digit'].iloc[0]}"


def fig3(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 3: histograms of the LOO projections per class with the predicted Gaussians."""
    _require(frame, ["cls", "digit", "loo_projection", "theory_mean", "theory_std"], "fig3")
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 3.2), ncols=2)
        for ax, (c, sel) in zip(axes, frame.groupby("cls", sort=True), strict=True):
            m, s = sel["theory_mean"].iloc[0], sel["theory_std"].iloc[0]
            sns.histplot(
                x=sel["loo_projection"].to_numpy(),
                stat="density",
                bins=30,
                ax=ax,
                color=color_of("practice"),
                alpha=0.5,
                label="$x_i^T w_{-i}$ (practice)",
            )
            grid = np.linspace(m - 4.5 * s, m + 4.5 * s, 400)
            ax.plot(
                grid,
                norm.pdf(grid, m, s),
                color=color_of("theory"),
                label="theory N(m, σ²)",
            )
            ax.set(
                xlabel="$x_i^T w_{-i}$",
                ylabel="density",
                title=f"{_class_label(sel)} (class {int(c) + 1})\ntheory m={m:.3g}, σ={s:.3g}",
            )
        legend_below(fig, axes, ncol=2)  # outside the histograms (issue 46)
        save_figure(fig, path)


def fig4(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 4: accuracy on the image pair (``seddik.digits``) vs n, theory (lines) vs practice
    (markers)."""
    _require(frame, ["n", "source", "split", "cls", "accuracy"], "fig4")
    p, lam = frame["p"].iloc[0], frame["lam"].iloc[0]
    with style():
        fig, (ax,) = new_figure((5.2, 3.8))
        _accuracy_axes(ax, frame, "n", f"image pair (seddik.digits), p={p}, λ={lam:g}")
        save_figure(fig, path)


def fig5(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 5 for the first network of the frame: (left) learned weights vs theory ± std;
    (middle, right) practical vs predicted logits (first two logits of each test point,
    coloured by class)."""
    _require(frame, ["panel", "source", "output", "index", "value"], "fig5")
    if "seed" in frame.columns and frame["seed"].notna().any():
        first = frame["seed"].dropna().min()
        frame = frame[frame["seed"] == first]
        which = f"network seed {int(first)}"
    else:
        which = "one network"
    weights = frame[frame["panel"] == "weights"]
    logits = frame[frame["panel"] == "logits"]
    k = int(weights["output"].max()) + 1
    colors = sns.color_palette("colorblind", max(k, 3))
    th_c, pr_c = color_of("theory"), color_of("practice")
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 2.9), ncols=3)
        ax = axes[0]
        for a in range(k):
            pr = weights[(weights["source"] == "practice") & (weights["output"] == a)]
            th = weights[(weights["source"] == "theory") & (weights["output"] == a)]
            p = len(th)
            x = th["index"].to_numpy(dtype=float) + a * p
            v, s = th["value"].to_numpy(), th["theory_std"].to_numpy(dtype=float)
            ax.fill_between(x, v - s, v + s, color=th_c, alpha=0.15, linewidth=0)
            ax.plot(
                pr["index"].to_numpy(dtype=float) + a * p,
                pr["value"],
                marker_of("practice"),
                ms=2,
                markerfacecolor="none",
                color=pr_c,
                label="learned" if a == 0 else None,
            )
            ax.plot(x, v, "x", ms=2, color=th_c, label="theory ± std" if a == 0 else None)
        ax.set(
            xlabel="coordinate (classes side by side)", ylabel="weight", title=f"Weights ({which})"
        )
        ax.legend(loc="best", frameon=True, fontsize=6)
        lims = []
        for ax, source, tag in (
            (axes[1], "practice", "(a) practice"),
            (axes[2], "theory", "(b) theory"),
        ):
            sel = logits[logits["source"] == source]
            wide = sel.pivot_table(
                index=["index", "true_class"], columns="output", values="value"
            ).reset_index()
            for c in sorted(wide["true_class"].unique()):
                pts = wide[wide["true_class"] == c]
                ax.scatter(
                    pts[0], pts[1], s=3, alpha=0.5, color=colors[int(c)], label=f"class {int(c)}"
                )
            ax.set(xlabel="logit 0", ylabel="logit 1", title=f"{tag} test logits")
            ax.legend(loc="best", frameon=True, markerscale=3, fontsize=5)
            lims.append((ax.get_xlim(), ax.get_ylim()))
        xl = (min(a[0][0] for a in lims), max(a[0][1] for a in lims))
        yl = (min(a[1][0] for a in lims), max(a[1][1] for a in lims))
        for ax in axes[1:]:
            ax.set(xlim=xl, ylim=yl)
        save_figure(fig, path)


def fig_validation(frame: pd.DataFrame, path: str | Path) -> None:
    """Validation: theory vs reference (practice at small λ; ridge closed form / simulation)."""
    _require(frame, ["check", "quantity", "theory", "reference", "reference_kind"], "validation")
    ok = frame[frame["quantity"] != "error"].dropna(subset=["theory", "reference"])
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 3.6), ncols=2)
        for ax, check in zip(axes, ("logistic", "ridge"), strict=True):
            sel = ok[ok["check"] == check]
            if not sel.empty:
                sns.scatterplot(
                    data=sel,
                    x="reference",
                    y="theory",
                    hue="quantity",
                    style="reference_kind",
                    ax=ax,
                    s=25,
                )
                lo = float(min(sel["reference"].min(), sel["theory"].min()))
                hi = float(max(sel["reference"].max(), sel["theory"].max()))
                ax.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8, zorder=0)
                ax.legend(loc="best", frameon=True, fontsize=6)
            lams = ", ".join(f"{v:g}" for v in sorted(sel["lam"].unique()))
            ax.set(xlabel="reference", ylabel="theory", title=f"{check} (λ ∈ {{{lams}}})")
        save_figure(fig, path)


FIGURES = {"fig2": fig2, "fig3": fig3, "fig4": fig4, "fig5": fig5, "validation": fig_validation}


def _of_frames(name: str):
    """Figure ``name`` drawn from its own frame (the shared figure rule's form)."""

    def draw(frames, section, path) -> None:
        FIGURES[name](frames[name], path)

    return draw


#: Each figure as a function of the study's frames and section (``study.figure_job``).
FRAME_FIGURES = {name: _of_frames(name) for name in FIGURES}
