"""The cross-paper figures, each a function of the frames, the section and the output path
(``study.figure_job``): (a) relative distance to the OCS vs the OOD score per shift family,
(b) raw vs normalised confidence along the rays, (c) Seddik's Theorem 4.8 on both networks'
features, (d) every paper's OOD sets on Kang's axis."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis.style import (
    REPORT_WIDTH_IN,
    color_of,
    legend_below,
    marker_of,
    new_figure,
    save_figure,
    style,
)

__all__ = ["FIGURES", "fig_axis", "fig_rays", "fig_reversion", "fig_seddik"]


def _line(ax, x, mean, sd, role: str, label: str) -> None:
    """One loss's mean ± std over seeds, in its colour and marker."""
    ax.errorbar(
        x,
        mean,
        yerr=sd.fillna(0),
        color=color_of(role),
        marker=marker_of(role) or "o",
        ms=3,
        lw=1,
        label=label,
    )


def _shifts(shift: pd.DataFrame) -> list[str]:
    return [s for s in dict.fromkeys(shift["shift"]) if s not in ("none", "far_ood")]


def fig_reversion(frames: dict, section: dict, path) -> None:
    """Per shift family: distance to the OCS relative to the clean split's vs the OOD score of
    each level (mean over seeds, bars: std), CE and LogitNorm."""
    shift, ood = frames["shift"], frames["ood_scores"]
    scores = ood.set_index("eval_set")["ood_score"].astype(float)
    names = _shifts(shift)
    ncols = min(3, max(len(names), 1))
    nrows = math.ceil(max(len(names), 1) / ncols)
    clean = shift[shift["shift"] == "none"].set_index(["loss", "seed"])["distance"]
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 2.4 * nrows), ncols=ncols, nrows=nrows)
        for ax, s in zip(axes, names, strict=False):
            for loss, role in ((section["baseline"], "ce"), (section["method"], "logitnorm")):
                g = shift[(shift["loss"] == loss) & (shift["shift"].isin([s, "none"]))].copy()
                g["rel"] = [
                    d / clean.loc[(lo, sd)]
                    for d, lo, sd in zip(g["distance"], g["loss"], g["seed"], strict=True)
                ]
                g["score"] = g["eval_set"].map(scores)
                agg = g.groupby("eval_set").agg(
                    score=("score", "first"), rel=("rel", "mean"), sd=("rel", "std")
                )
                agg = agg.sort_values("score")
                _line(ax, agg["score"], agg["rel"], agg["sd"], role, loss)
            ax.set(title=s, xlabel="OOD score", ylabel="d / d(clean)")
        for ax in axes[len(names) :]:
            ax.set_axis_off()
        axes[0].legend(loc="lower left", frameon=True)
        save_figure(fig, path)


def fig_rays(frames: dict, section: dict, path) -> None:
    """Along the rays: mean MSP of the raw logits and of the normalised logits vs alpha."""
    rays = frames["rays"]
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 2.8), ncols=2)
        for ax, col, title in (
            (axes[0], "msp", "raw logits (what the OOD score reads)"),
            (axes[1], "msp_normalised", "normalised logits z / (τ‖z‖)"),
        ):
            for loss, role in ((section["baseline"], "ce"), (section["method"], "logitnorm")):
                g = rays[rays["loss"] == loss].groupby("alpha")[col].agg(["mean", "std"])
                _line(ax, g.index, g["mean"], g["std"], role, loss)
            ax.axhline(float(section["claims"]["certain_max_prob"]), color="grey", ls=":", lw=1)
            ax.set_xscale("log")
            ax.set(title=title, xlabel="α (ray x = α x′)", ylabel="mean MSP")
        legend_below(fig, axes)
        save_figure(fig, path)


def fig_axis(frames: dict, section: dict, path) -> None:
    """Every set's OOD score on Kang's discriminator axis, coloured by the paper it belongs to."""
    ood = frames["ood_scores"].copy()
    kind = {"id": "id", "far_ood": "far", "ray": "near"}
    ood = ood.sort_values("ood_score").reset_index(drop=True)
    with style():
        fig, (ax,) = new_figure((REPORT_WIDTH_IN, max(3.0, 0.12 * len(ood) + 1.0)))
        y = np.arange(len(ood))
        colours = {"id": "control", "far_ood": "logitnorm", "ray": "single"}
        for group, g in ood.groupby("group"):
            role = colours.get(group, "practice")
            label = {
                "id": "clean ID",
                "far_ood": "LogitNorm's OOD sets",
                "ray": "Ulmer's rays",
            }.get(group, "Kang's shifts")
            ax.errorbar(
                g["ood_score"],
                y[g.index],
                xerr=g["ood_score_std"],
                fmt=marker_of(kind.get(group, "far")) or "o",
                color=color_of(role),
                ms=3,
                lw=0.8,
                label=label,
            )
        handles, labels = ax.get_legend_handles_labels()
        by = dict(zip(labels, handles, strict=True))
        ax.set_yticks(y, ood["eval_set"], fontsize=5)
        ax.axvline(0.5, color="grey", ls=":", lw=1)
        ax.set(xlabel="Kang's OOD score (discriminator)", title="Each paper's OOD sets on one axis")
        ax.legend(by.values(), by.keys(), loc="lower right", frameon=True)
        save_figure(fig, path)


def fig_seddik(frames: dict, section: dict, path) -> None:
    """(c) Per loss and network: the weights ratio r (bar 2, the exact theory's r dotted) and the
    logit-mean gap in predicted SDs (bar 0.5); right: learned vs predicted weights of each loss's
    first network."""
    from ..seddik.claims import LOGIT_GAP_BAR, WEIGHT_RATIO_BAR
    from .claims import seddik_per_seed

    frame = frames["seddik"]
    per = seddik_per_seed(frame, float(section["claims"]["alpha"]))
    losses = [(section["baseline"], "ce"), (section["method"], "logitnorm")]
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 2.6), ncols=3)
        for ax, col, bar, title in (
            (axes[0], "r", WEIGHT_RATIO_BAR, "weights ratio r"),
            (axes[1], "logit_gap", LOGIT_GAP_BAR, "logit-mean gap (SD)"),
        ):
            for i, (loss, role) in enumerate(losses):
                g = per[per["loss"] == loss]
                x = i + np.linspace(-0.15, 0.15, max(len(g), 1))[: len(g)]
                ax.plot(x, g[col], ls="", marker=marker_of(role) or "o", ms=4, color=color_of(role))
                if col == "r" and len(g):
                    ax.hlines(g["r_exact"].mean(), i - 0.3, i + 0.3, colors="grey", ls=":", lw=1)
            ax.axhline(bar, color="grey", ls="--", lw=1)
            ax.set_xticks(range(len(losses)), [loss for loss, _ in losses])
            ax.set_xlim(-0.6, len(losses) - 0.4)
            ax.set_ylim(0, max(1.15 * bar, 1.1 * float(per[col].max()) if len(per) else bar))
            ax.set(title=title)
        ax = axes[2]
        w = frame[frame["panel"] == "weights"]
        for loss, role in losses:
            g = w[w["loss"] == loss]
            if g.empty:
                continue
            g = g[g["seed"] == g["seed"].min()]
            th = g[g["source"] == "theory"].set_index(["output", "index"])["value"]
            pr = g[g["source"] == "practice"].set_index(["output", "index"])["value"]
            ax.plot(th, pr.loc[th.index], ls="", marker=".", ms=2, color=color_of(role), label=loss)
        lim = ax.get_xlim()
        ax.plot(lim, lim, color="grey", lw=0.8, ls=":")
        ax.set(title="weights (first network)", xlabel="predicted mean", ylabel="learned")
        ax.legend(loc="upper left", frameon=True)
        save_figure(fig, path)


FIGURES = {"reversion": fig_reversion, "rays": fig_rays, "axis": fig_axis, "seddik": fig_seddik}
