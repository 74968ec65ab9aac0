"""The LogitNorm paper's Figures 1, 4 and 5 (Wei et al. 2022) from the study's long frames.

Drawn with the shared style (:mod:`softmax_ood.analysis.style`): Agg canvas, fixed sizes,
fonts and DPI, PNGs without time or version metadata, so the same figure twice is the same bytes.

Registry :data:`FIGURES` maps names to ``f(frames, spec, path)`` where ``frames`` holds the
``runs``, ``ood``, ``curves`` and ``samples`` frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns

from ...analysis.seeds import one_recipe
from ...analysis.style import new_figure, save_figure, style
from .ablation import tau_ablation

__all__ = ["FIGURES", "fig1", "fig4", "fig5"]

BINS = np.linspace(0.0, 1.0, 51)


def _palette(spec: dict) -> dict[str, tuple]:
    colors = sns.color_palette("colorblind", 4)
    return {spec["baseline"]: colors[0], spec["method"]: colors[1]}


def _require(frame: pd.DataFrame, column: str, values, where: str) -> None:
    missing = [v for v in values if v not in set(frame[column])]
    if missing:
        raise ValueError(f"The {where} frame has no rows for {column} {missing}.")


def fig1(curves: pd.DataFrame, spec: dict, path: str | Path) -> None:
    """Fig. 1: mean L2 logit norm vs epoch (ID val solid, OOD monitor dashed), mean ± std."""
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    curves = one_recipe(curves, spec, "curves")
    sel = curves[curves["arch"] == arch]
    _require(curves, "arch", [arch], "curves")
    _require(sel, "loss", losses, "curves")
    monitor = spec.get("monitor_set", spec.get("norm_ood_set", "OOD"))
    colors = _palette(spec)
    with style():
        fig, (ax,) = new_figure((5.0, 3.4))
        for loss in losses:
            g = sel[sel["loss"] == loss].groupby("epoch")
            for column, linestyle, label in (
                ("logit_norm_id", "-", "ID val"),
                ("logit_norm_ood", "--", f"OOD ({monitor})"),
            ):
                stats = g[column].agg(["mean", "std", "count"])
                x, m = stats.index.to_numpy(), stats["mean"].to_numpy()
                s = np.nan_to_num(stats["std"].to_numpy())
                ax.plot(x, m, linestyle=linestyle, color=colors[loss], label=f"{loss}, {label}")
                ax.fill_between(x, m - s, m + s, color=colors[loss], alpha=0.18, linewidth=0)
        n = sel.groupby("loss")["seed"].nunique().reindex(losses).min()
        ax.set(
            xlabel="epoch",
            ylabel="mean L2 norm of logits",
            title=f"Logit norm during training ({arch}; mean ± std over {n} seeds)",
        )
        ax.legend(loc="best", frameon=True)
        save_figure(fig, path)


def fig4(samples: pd.DataFrame, spec: dict, path: str | Path) -> None:
    """Fig. 4: MSP histograms, ID test vs the far OOD test sets pooled (over sets and seeds),
    and the near sets (``spec['near_ood']``) pooled on their own."""
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    samples = one_recipe(samples, spec, "samples")
    near = set(spec.get("near_ood") or [])
    sel = samples[(samples["arch"] == arch) & (samples["score"] == "msp")]
    _require(samples, "arch", [arch], "samples")
    _require(sel, "loss", losses, "samples")
    exclude = set(spec.get("ood_val", []))
    sel = sel[~sel["set"].isin(exclude)]
    colors = sns.color_palette("colorblind", 4)
    with style():
        fig, axes = new_figure((8.0, 3.2), ncols=2)
        for ax, loss in zip(axes, losses, strict=True):
            d = sel[sel["loss"] == loss]
            id_v = d.loc[d["set"] == "id", "value"].to_numpy(dtype=float)
            far = (d["set"] != "id") & ~d["set"].isin(near)
            ood_v = d.loc[far, "value"].to_numpy(dtype=float)
            near_v = d.loc[d["set"].isin(near), "value"].to_numpy(dtype=float)
            if id_v.size == 0 or ood_v.size == 0:
                raise ValueError(f"The samples frame lacks ID or OOD MSP values for loss {loss!r}.")
            ood_sets = sorted(set(d.loc[far, "set"]))
            ax.hist(
                id_v,
                bins=BINS,
                density=True,
                alpha=0.55,
                color=colors[0],
                label=f"ID test (n={id_v.size})",
            )
            ax.hist(
                ood_v,
                bins=BINS,
                density=True,
                alpha=0.55,
                color=colors[3],
                label=f"far OOD, {len(ood_sets)} sets pooled (n={ood_v.size})",
            )
            if near_v.size:
                ax.hist(
                    near_v,
                    bins=BINS,
                    density=True,
                    histtype="step",
                    linewidth=1.4,
                    color=colors[2],
                    label=f"near OOD, {', '.join(sorted(near))} (n={near_v.size})",
                )
            ax.set(
                xlim=(0, 1),
                xlabel="softmax confidence (MSP)",
                ylabel="density",
                title=f"{loss} ({arch}, {d['seed'].nunique()} seeds pooled)",
            )
            ax.legend(loc="upper left")
        save_figure(fig, path)


def fig5(tau_frame: pd.DataFrame, spec: dict, path: str | Path) -> None:
    """Fig. 5: average FPR95 (MSP) vs tau, test and validation split, mean ± std over seeds."""
    df = tau_frame.sort_values("tau")
    if df.empty:
        raise ValueError("The tau-ablation frame is empty.")
    colors = sns.color_palette("colorblind", 4)
    with style():
        fig, (ax,) = new_figure((5.0, 3.4))
        ax.errorbar(
            df["tau"],
            df["fpr95_mean"],
            yerr=np.nan_to_num(df["fpr95_std"]),
            marker="o",
            capsize=3,
            color=colors[1],
            label="test OOD sets (average)",
        )
        ax.errorbar(
            df["tau"],
            df["val_fpr95_mean"],
            yerr=np.nan_to_num(df["val_fpr95_std"]),
            marker="s",
            capsize=3,
            linestyle="--",
            color=colors[2],
            label="validation OOD set(s)",
        )
        if "selected" in df and df["selected"].any():
            tau = float(df.loc[df["selected"], "tau"].iloc[0])
            ax.axvline(
                tau,
                color="0.35",
                linestyle=":",
                linewidth=1.2,
                label=f"selected on val: tau = {tau:g}",
            )
        ax.set_xscale("log")
        ax.set_xticks(df["tau"].to_numpy(), [f"{t:g}" for t in df["tau"]])
        ax.minorticks_off()
        ax.set(
            xlabel="tau (log scale)",
            ylabel="FPR95 (%), MSP",
            title=f"Effect of tau ({spec['main_arch']}; mean ± std over "
            f"{int(df['n_seeds'].min())} seeds)",
        )
        ax.legend(loc="best")
        save_figure(fig, path)


def _fig1(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig1(frames["curves"], spec, path)


def _fig4(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig4(frames["samples"], spec, path)


def _fig5(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig5(tau_ablation(frames["runs"], frames["ood"], spec), spec, path)


FIGURES = {"fig1": _fig1, "fig4": _fig4, "fig5": _fig5}
