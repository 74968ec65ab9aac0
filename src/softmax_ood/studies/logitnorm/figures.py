"""The LogitNorm paper's Figures 1-5 (Wei et al. 2022) from the study's long frames.

Drawn with the shared style (:mod:`softmax_ood.analysis.style`): Agg canvas, fixed sizes,
fonts and DPI, PNGs without time or version metadata, so the same figure twice is the same bytes.

Registry :data:`FIGURES` maps names to ``f(frames, spec, path)`` where ``frames`` holds the
``runs``, ``ood``, ``curves`` and ``samples`` frames, and for Figs. 2 and 3 the ``softmax``
frame of one model per loss (:mod:`.outputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ...analysis.seeds import one_recipe
from ...analysis.style import color_of, legend_below, new_figure, palette, save_figure, style
from .ablation import tau_ablation
from .shared import prob_columns
from .shifts import far_near

__all__ = ["FIGURES", "fig1", "fig2", "fig2_examples", "fig3", "fig4", "fig5", "ood_groups"]

BINS = np.linspace(0.0, 1.0, 51)


def _palette(spec: dict) -> dict[str, str]:
    return {spec["baseline"]: color_of("ce"), spec["method"]: color_of("logitnorm")}


def _require(frame: pd.DataFrame, column: str, values, where: str) -> None:
    missing = [v for v in values if v not in set(frame[column])]
    if missing:
        raise ValueError(f"The {where} frame has no rows for {column} {missing}.")


def fig1(curves: pd.DataFrame, spec: dict, path: str | Path) -> None:
    """Fig. 1: mean L2 logit norm vs epoch (ID val solid, OOD monitor dashed), mean ± std over
    seeds, on a log axis (bands clipped to positive values), headline recipe only."""
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
                low = np.where(m - s > 0, m - s, m / 10)
                ax.fill_between(x, low, m + s, color=colors[loss], alpha=0.18, linewidth=0)
        n = sel.groupby("loss")["seed"].nunique().reindex(losses).min()
        ax.set_yscale("log")
        ax.set(
            xlabel="epoch",
            ylabel="mean L2 norm of logits (log)",
            title=f"Logit norm in training\n({arch}, {spec.get('recipe')}; mean ± std, {n} seeds)",
        )
        legend_below(fig, [ax])
        save_figure(fig, path)


def ood_groups(softmax: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> dict[str, list[str]]:
    """The OOD sets of the ``softmax`` frame that Figs. 2 and 3 draw, by group (label -> sets in
    the frame's order; empty groups left out): the headline far sets (:func:`.shifts.far_near`),
    the far sets the pixel floor solves (labelled so: never a headline) and the near sets."""
    parts = far_near(ood, spec)
    test = {k: set(v.loc[v["split"] == "test", "ood_set"]) for k, v in parts.items() if k != "near"}
    near = set(spec.get("near_ood") or [])
    present = [s for s in pd.unique(softmax["set"]) if s != "id"]
    groups = {
        "far OOD (headline)": [s for s in present if s in test.get("far", ())],
        "far OOD, floor-solved": [s for s in present if s in test.get("trivial", ())],
        "near OOD": [s for s in present if s in near],
    }
    return {label: sets for label, sets in groups.items() if sets}


def _softmax(softmax: pd.DataFrame, spec: dict) -> tuple[pd.DataFrame, list[str]]:
    """The frame's rows of the main architecture's baseline and method (checked), and the
    losses in that order."""
    losses = [spec["baseline"], spec["method"]]
    sel = one_recipe(softmax, spec, "softmax")
    _require(sel, "arch", [spec["main_arch"]], "softmax")
    sel = sel[sel["arch"] == spec["main_arch"]]
    _require(sel, "loss", losses, "softmax")
    _require(sel, "set", ["id"], "softmax")
    return sel, losses


def _class_names(sel: pd.DataFrame, k: int) -> list[str]:
    """Class ``c``'s name where an ID row of the frame names it, else ``str(c)``."""
    named = sel[(sel["label"] >= 0) & (sel["class_name"] != "")]
    known = dict(zip(named["label"].astype(int), named["class_name"], strict=True))
    return [known.get(c, str(c)) for c in range(k)]


def fig2_examples(softmax: pd.DataFrame, spec: dict, groups: dict) -> pd.DataFrame:
    """The rows Fig. 2 draws, fixed by rule before any output is seen (never picked): for the
    baseline and the method, the first image (``order`` 0) of the seeded ID subset and of the
    first set of each OOD group (``groups``: label -> sets, :func:`ood_groups`), with a
    ``group`` column ("ID test" or the group's label); rows in that order, baseline first."""
    sel, losses = _softmax(softmax, spec)
    picks = [("ID test", "id")] + [(label, sets[0]) for label, sets in groups.items()]
    rows = []
    for label, name in picks:
        for loss in losses:
            d = sel[(sel["loss"] == loss) & (sel["set"] == name) & (sel["order"] == 0)]
            if len(d) != 1:
                raise ValueError(
                    f"The softmax frame has {len(d)} first images (order 0) of set {name!r} "
                    f"for loss {loss!r}; it needs one."
                )
            rows.append(d.assign(group=label))
    return pd.concat(rows, ignore_index=True)


def fig2(softmax: pd.DataFrame, spec: dict, path: str | Path, groups: dict) -> None:
    """Fig. 2: the softmax outputs of single images (:func:`fig2_examples`), baseline (left)
    vs method (right), one model each, one row per image; the dotted line is the uniform
    output 1/k."""
    examples = fig2_examples(softmax, spec, groups)
    probs = prob_columns(examples.columns)
    names = _class_names(one_recipe(softmax, spec, "softmax"), len(probs))
    colors, n = _palette(spec), len(examples) // 2
    with style():
        fig, axes = new_figure((7.5, 1.2 + 1.6 * n), ncols=2, nrows=n)
        for i, (ax, (_, first)) in enumerate(zip(axes, examples.iterrows(), strict=True)):
            p = first[probs].to_numpy(dtype=float)
            x = np.arange(len(p))
            ax.bar(x, p, color=colors[first["loss"]])
            ax.axhline(1.0 / len(p), color="0.35", linestyle=":", linewidth=1.0)
            ax.set_ylim(0, 1.05)
            ax.set_xticks(x, names if i >= len(examples) - 2 else [], rotation=90)
            true = f" ({first['class_name']})" if first["class_name"] else ""
            ax.set_title(
                f"{first['loss']}: {first['group']}\n{first['set']} #{int(first['image'])}"
                f"{true}, max softmax {p.max():.2f}"
            )
            ax.set_ylabel("softmax" if i % 2 == 0 else "")
        seed = int(examples["seed"].iloc[0])
        fig.suptitle(
            f"Softmax outputs of single images ({spec['main_arch']}, training seed {seed})"
        )
        save_figure(fig, path)


#: Fig. 3's OOD groups (:func:`ood_groups`): colour and marker (ID classes take a palette)
_OOD_STYLE = {
    "far OOD (headline)": ("#8c564b", "x"),  # the paper's brown
    "far OOD, floor-solved": ("0.45", "+"),
    "near OOD": ("#000000", "^"),
}


def fig3(softmax: pd.DataFrame, spec: dict, path: str | Path, groups: dict) -> None:
    """Fig. 3: the t-SNE of each model's softmax outputs (the frame's ``tsne_x``/``tsne_y``,
    one embedding per loss), baseline (left) vs method (right): ID test images coloured by
    class, each OOD group (``groups``, :func:`ood_groups`) in its own colour and marker; the
    frame's other sets are not drawn (they shaped the embedding like every row)."""
    sel, losses = _softmax(softmax, spec)
    names = _class_names(sel, len(prob_columns(sel.columns)))
    class_colors = palette(names, "husl")
    with style():
        fig, axes = new_figure((7.5, 4.2), ncols=2)
        for ax, loss in zip(axes, losses, strict=True):
            d = sel[sel["loss"] == loss]
            idd = d[d["set"] == "id"]
            for c, name in enumerate(names):
                pts = idd[idd["label"] == c]
                if len(pts):
                    ax.scatter(
                        pts["tsne_x"],
                        pts["tsne_y"],
                        s=5,
                        color=class_colors[name],
                        alpha=0.7,
                        linewidths=0,
                        label=f"ID: {name}",
                    )
            for label, sets in groups.items():
                pts = d[d["set"].isin(sets)]
                color, marker = _OOD_STYLE[label]
                ax.scatter(
                    pts["tsne_x"],
                    pts["tsne_y"],
                    s=9,
                    color=color,
                    marker=marker,
                    linewidths=0.8,
                    label=f"{label} ({len(sets)} set{'s' if len(sets) > 1 else ''})",
                )
            ax.set(
                xticks=[],
                yticks=[],
                xlabel="t-SNE 1",
                ylabel="t-SNE 2",
                title=f"{loss} ({len(idd)} ID, {len(d) - len(idd)} OOD images)",
            )
        seed = int(sel["seed"].iloc[0])
        fig.suptitle(f"t-SNE of the softmax outputs ({spec['main_arch']}, training seed {seed})")
        legend_below(fig, axes, ncol=3, markerscale=2)
        save_figure(fig, path)


def fig4(samples: pd.DataFrame, spec: dict, path: str | Path, headline=None) -> None:
    """Fig. 4: MSP histograms (from the stored log-odds), ID test vs the headline far OOD test sets pooled (over sets and
    seeds; ``headline``: the non-trivial far sets, default every far set), and the near sets
    (``spec['near_ood']``) pooled on their own."""
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    samples = one_recipe(samples, spec, "samples")
    near = set(spec.get("near_ood") or [])
    sel = samples[(samples["arch"] == arch) & (samples["score"] == "msp")]
    # the per-image MSP is stored as its float64 log-odds (ties-free ranking); the histogram
    # shows the probability itself, 1 / (1 + e^-log_odds)
    sel = sel.assign(value=1.0 / (1.0 + np.exp(-sel["value"].to_numpy(dtype=np.float64))))
    _require(samples, "arch", [arch], "samples")
    _require(sel, "loss", losses, "samples")
    exclude = set(spec.get("ood_val", []))
    sel = sel[~sel["set"].isin(exclude)]
    colors = {0: color_of("id"), 3: color_of("far"), 2: color_of("near")}
    far_label = "far OOD (headline)"
    if headline is not None and not len(headline) and not near:
        # no far set passes its pixel-statistics floor and no near set is tested: draw the
        # floor-solved far sets, labelled as such (never a headline), rather than no figure
        headline, far_label = None, "far OOD, floor-solved sets only"
    with style():
        fig, axes = new_figure((7.5, 3.2), ncols=2)
        for ax, loss in zip(axes, losses, strict=True):
            d = sel[sel["loss"] == loss]
            id_v = d.loc[d["set"] == "id", "value"].to_numpy(dtype=float)
            far = (d["set"] != "id") & ~d["set"].isin(near)
            if headline is not None:
                far &= d["set"].isin(set(headline))
            ood_v = d.loc[far, "value"].to_numpy(dtype=float)
            near_v = d.loc[d["set"].isin(near), "value"].to_numpy(dtype=float)
            if id_v.size == 0 or ood_v.size + near_v.size == 0:
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
            if ood_v.size:
                ax.hist(
                    ood_v,
                    bins=BINS,
                    density=True,
                    alpha=0.55,
                    color=colors[3],
                    label=f"{far_label}, {len(ood_sets)} sets (n={ood_v.size})",
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
        legend_below(fig, axes, ncol=1)
        save_figure(fig, path)


def fig5(
    tau_frames: Mapping[str, pd.DataFrame],
    spec: dict,
    path: str | Path,
    labels: Mapping[str, str] | None = None,
) -> None:
    """Fig. 5: average FPR95 (MSP) vs tau, one line per shift (``far``: the headline sets;
    ``near``), test split, mean ± std over seeds; the tau selected on the validation set marked.
    ``labels`` overrides a line's legend text (default ``"<shift> OOD (test, average)"``)."""
    labels = dict(labels or {})
    if not tau_frames or all(f.empty for f in tau_frames.values()):
        raise ValueError("The tau-ablation frame is empty.")
    with style():
        fig, (ax,) = new_figure((5.0, 3.4))
        selected = None
        for shift, df in tau_frames.items():
            df = df.sort_values("tau")
            ax.errorbar(
                df["tau"],
                df["fpr95_mean"],
                yerr=np.nan_to_num(df["fpr95_std"]),
                marker="o" if shift == "far" else "s",
                capsize=3,
                linestyle="-" if shift == "far" else "--",
                color=color_of(shift),
                label=labels.get(shift, f"{shift} OOD (test, average)"),
            )
            if "selected" in df and df["selected"].any():
                selected = float(df.loc[df["selected"], "tau"].iloc[0])
        if selected is not None:
            ax.axvline(
                selected,
                color="0.35",
                linestyle=":",
                linewidth=1.2,
                label=f"selected on val: tau = {selected:g}",
            )
        taus = sorted({float(t) for f in tau_frames.values() for t in f["tau"]})
        n = min(int(f["n_seeds"].min()) for f in tau_frames.values())
        ax.set_xscale("log")
        ax.set_xticks(taus, [f"{t:g}" for t in taus])
        ax.minorticks_off()
        ax.set(
            xlabel="tau (log scale)",
            ylabel="FPR95 (%), MSP",
            title=f"Effect of tau ({spec['main_arch']}; mean ± std, {n} seeds)",
        )
        legend_below(fig, [ax])
        save_figure(fig, path)


def _fig1(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig1(frames["curves"], spec, path)


def _headline(ood: pd.DataFrame, spec: dict) -> list[str]:
    far = far_near(ood, spec).get("far")
    if far is None:
        return []
    return sorted(far.loc[far["split"] == "test", "ood_set"].unique())


def _fig4(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig4(frames["samples"], spec, path, headline=_headline(frames["ood"], spec))


def _fig5(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    parts = far_near(frames["ood"], spec)
    labels = {}
    if "far" not in parts and "near" not in parts and "trivial" in parts:
        # no far set passes its pixel-statistics floor and no near set is configured: draw the
        # floor-solved sets, labelled as such, rather than no figure (they are never a headline)
        parts = {"far": parts["trivial"]}
        labels["far"] = "far OOD, floor-solved sets only (test, average)"
    taus = {s: tau_ablation(frames["runs"], parts[s], spec) for s in ("far", "near") if s in parts}
    fig5(taus, spec, path, labels)


def _fig2(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig2(frames["softmax"], spec, path, ood_groups(frames["softmax"], frames["ood"], spec))


def _fig3(frames: Mapping[str, pd.DataFrame], spec: dict, path) -> None:
    fig3(frames["softmax"], spec, path, ood_groups(frames["softmax"], frames["ood"], spec))


FIGURES = {"fig1": _fig1, "fig2": _fig2, "fig3": _fig3, "fig4": _fig4, "fig5": _fig5}
