"""Kang et al. Figures 2-7 from tidy data frames.

Drawn with the shared style (:mod:`softmax_ood.analysis.style`: Agg canvas per figure, no pyplot,
fixed sizes, fonts and DPI, PNG/SVG without time or version metadata), so drawing the same frame
twice gives the same bytes. Row and panel orders follow the first appearance of each value in the
frame; means and standard deviations (``ddof=1``, 0 for a single value) are taken over the
``seed`` column where there is one. Every function is ``f(frame(s), path)`` and raises a
one-sentence ``ValueError`` naming missing columns.

Frames
------
``fig2(frame)`` -- mean prediction vs the OCS as the shift grows (paper Fig. 2):
    ``loss``, ``level``, ``component``, ``value``. One row per loss, one column per level; the
    OCS is the level named ``"OCS"`` (drawn last, orange). ``component`` is the class (or
    action) label for ``ce`` / ``reward_mse`` (bars) and ``"mean"`` / ``"std"`` for
    ``gaussian_nll`` (drawn as the Gaussian density).
``fig3(frame, greyed=None)`` -- OOD score vs distance to the OCS (paper Fig. 3):
    ``loss``, ``shift``, ``eval_set``, ``seed``, ``ood_score``, ``distance``, ``is_id`` and an
    optional ``ood_score_std``. One panel per (loss, shift), every panel on one x-axis (the OOD
    score) and the panels of one loss on one y-axis, so panels compare; each evaluation set is a
    point at its mean OOD score and mean distance; y error bars the std over seeds; x error bars
    the std over the discriminator repeats (``ood_score_std``; without that column none: the
    score is one number per set, the same for every seed); ``is_id`` rows (the held-out ID
    split) are a red star in every panel of their loss. ``greyed`` maps a shift to a note: its
    panels are drawn grey with the note inside the panel (a shift the discriminator does not
    separate from clean: the order of its points is noise).
``fig4(norms, subspace, constants)`` -- the mechanism (paper Fig. 4):
    ``norms``: ``level``, ``layer``, ``name``, ``ratio_mean``, ``ratio_std`` (one line per level
    over the layers, :func:`~softmax_ood.studies.kang.features.norm_ratios` rows);
    ``subspace``: ``level``, ``share_mean``, ``share_std``; ``constants``: ``loss``,
    ``component``, ``value``, ``source`` (``"constants"`` or ``"OCS"``), one panel per loss.
``fig5(frame)`` -- reward model predictions and chosen actions (paper Fig. 5):
    ``level``, ``action``, ``predicted_reward``, ``action_fraction``; the ``"OCS"`` level holds
    the OCS and the OCS policy's actions.
``fig6(frame)`` / ``fig7(frame)`` -- abstain ratio / mean reward per shift level and policy
    (paper Figs. 6-7): ``level``, ``policy``, ``seed``, ``abstain_ratio`` / ``mean_reward`` and
    an optional ``panel`` column (e.g. dataset or shift type), one panel per value. Bars are means
    over seeds; error bars the 95 % bootstrap percentile interval of that mean (inside the seed
    values' range, so inside [0, 1] for an abstain ratio).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import seaborn as sns

from ...analysis.style import REPORT_WIDTH_IN, color_of, new_figure, save_figure, style

__all__ = [
    "DISTANCE_LABELS",
    "FIGURES",
    "LOSS_LABELS",
    "POLICY_LABELS",
    "fig2",
    "fig3",
    "fig4",
    "fig5",
    "fig6",
    "fig7",
]

OCS_LEVEL = "OCS"
LOSS_LABELS = {"ce": "cross-entropy", "reward_mse": "reward MSE", "gaussian_nll": "Gaussian NLL"}
DISTANCE_LABELS = {
    "ce": "KL(prediction || OCS)",
    "gaussian_nll": "KL(prediction || OCS)",
    "reward_mse": "squared distance to OCS",
}
POLICY_LABELS = {
    "reward_prediction": "reward prediction",
    "classification": "classification (abstain if p < 4/5)",
    "classification_argmax": "classification (arg-max)",
    "oracle_eval_temperature": "oracle (T fit on eval split)",
}
_BLUE, _ORANGE = color_of("ce"), color_of("ocs")
_RED = color_of("far")
#: policy -> palette role (analysis.style)
POLICY_ROLES = {
    "reward_prediction": "reward_mse",
    "classification": "practice",
    "classification_argmax": "ce",
    "oracle_eval_temperature": "oracle",
}


# --------------------------------------------------------------------------- helpers
def _require(frame: pd.DataFrame, columns, figure: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{figure} needs column(s) {missing}; the frame has {list(frame.columns)}."
        )
    if frame.empty:
        raise ValueError(f"{figure} got an empty frame.")


def _order(values) -> list:
    return list(dict.fromkeys(values))


def _std(v: pd.Series) -> float:
    return float(v.std(ddof=1)) if len(v) > 1 else 0.0


def _agg(frame: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    g = frame.groupby(keys, sort=False)[value]
    return pd.DataFrame({"mean": g.mean(), "std": g.agg(_std)}).reset_index()


def _label(mapping: dict, key) -> str:
    return mapping.get(key, str(key))


def _grouped_bars(ax, table: pd.DataFrame, x_order, hue_order, palette, labels) -> None:
    """Bars of ``table`` (``x``, ``hue``, ``mean``, ``std``) grouped by ``x``, with error bars
    where ``std`` is not all zero."""
    width = 0.8 / max(len(hue_order), 1)
    for j, hue in enumerate(hue_order):
        sub = table[table["hue"] == hue].set_index("x").reindex(x_order)
        pos = np.arange(len(x_order)) - 0.4 + width * (j + 0.5)
        ax.bar(pos, sub["mean"], width=width, color=palette[hue], label=labels.get(hue, hue))
        if "lo" in sub.columns:  # an interval (e.g. bootstrap percentiles), drawn as it is
            yerr = np.vstack([sub["mean"] - sub["lo"], sub["hi"] - sub["mean"]]).clip(min=0)
            if (yerr > 0).any():
                ax.errorbar(
                    pos, sub["mean"], yerr=yerr, fmt="none", ecolor="black", lw=0.6, capsize=1.5
                )
        elif (sub["std"].fillna(0) > 0).any():
            ax.errorbar(
                pos, sub["mean"], yerr=sub["std"], fmt="none", ecolor="black", lw=0.8, capsize=2
            )
    ax.set_xticks(np.arange(len(x_order)), [str(x) for x in x_order])


# --------------------------------------------------------------------------- Fig. 2
def fig2(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 2: the average prediction per shift level (blue) and the OCS (orange). One row per
    ``row`` (default: per loss; e.g. "cross-entropy, rotation"), each with its own levels."""
    _require(frame, ["loss", "level", "component", "value"], "fig2")
    frame = frame if "row" in frame.columns else frame.assign(row=frame["loss"])
    rows = _order(frame["row"])
    per_row = {
        r: [lv for lv in _order(frame.loc[frame["row"] == r, "level"]) if lv != OCS_LEVEL]
        + [OCS_LEVEL]
        for r in rows
    }
    ncols = max(len(v) for v in per_row.values())
    width = min(REPORT_WIDTH_IN, 1.05 * ncols)
    with style():
        fig, axes = new_figure((width, 1.25 * len(rows)), ncols, len(rows))
        for ax in axes:
            ax.set_visible(False)
        for r, row in enumerate(rows):
            sub = frame[frame["row"] == row]
            loss = sub["loss"].iloc[0]
            levels = per_row[row]
            if OCS_LEVEL not in set(sub["level"]):
                raise ValueError(f"fig2 needs an {OCS_LEVEL!r} level for row {row!r}.")
            comps = [str(c) for c in _order(sub["component"])]
            if loss == "gaussian_nll":
                stats = {
                    lv: sub[sub["level"] == lv].set_index("component")["value"] for lv in levels
                }
                lo = min(s["mean"] - 4 * s["std"] for s in stats.values() if len(s))
                hi = max(s["mean"] + 4 * s["std"] for s in stats.values() if len(s))
                grid = np.linspace(lo, hi, 200)
            for c, level in enumerate(levels):
                ax = axes[r * ncols + c]
                ax.set_visible(True)
                cell = sub[sub["level"] == level]
                color = _ORANGE if level == OCS_LEVEL else color_of(str(loss))
                if loss == "gaussian_nll":
                    if len(cell):
                        m, s = stats[level]["mean"], stats[level]["std"]
                        pdf = np.exp(-0.5 * ((grid - m) / s) ** 2) / (s * np.sqrt(2 * np.pi))
                        ax.fill_between(grid, pdf, color=color, alpha=0.8, lw=0)
                else:
                    values = cell.assign(component=cell["component"].astype(str))
                    sns.barplot(
                        data=values,
                        x="component",
                        y="value",
                        order=comps,
                        color=color,
                        ax=ax,
                        errorbar=None,
                    )
                    ax.set_xlabel("")
                ax.tick_params(labelsize=5)
                ax.set_ylabel(str(row) if c == 0 else "", fontsize=6)
                ax.set_title(str(level), fontsize=7)
        save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 3
def _limits(values: pd.Series) -> tuple[float, float]:
    lo, hi = float(values.min()), float(values.max())
    pad = 0.05 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
    return lo - pad, hi + pad


def _fig3_limits(frame: pd.DataFrame) -> tuple[tuple[float, float], dict]:
    """``(x limits, {loss: y limits})`` of Fig. 3: one OOD-score axis for every panel, one
    distance axis per loss wide enough for every set's mean ± std over seeds."""
    xlim = _limits(frame["ood_score"].astype(float))
    means = frame.groupby(["loss", "eval_set"], sort=False)["distance"].agg(["mean", "std"])
    span = means.assign(
        lo=means["mean"] - means["std"].fillna(0.0), hi=means["mean"] + means["std"].fillna(0.0)
    )
    ylims = {
        loss: _limits(pd.concat([g["lo"], g["hi"]]))
        for loss, g in span.groupby(level="loss", sort=False)
    }
    return xlim, ylims


def _fig3_panel(ax, sub, idf, loss, shift, greyed: dict, xlim, ylim) -> None:
    """One Fig. 3 panel: the shifted sets ``sub`` of one (loss, shift) and the held-out ID sets
    ``idf`` of that loss (red stars); a ``greyed`` shift drawn grey with its note inside."""
    x = _agg(sub, ["eval_set"], "ood_score")
    y = _agg(sub, ["eval_set"], "distance")
    grey = shift in greyed
    ax.errorbar(
        x["mean"],
        y["mean"],
        yerr=y["std"],
        xerr=_x_err(sub, x),
        fmt="o",
        color="0.6" if grey else (color_of(str(loss)) if str(loss) in LOSS_LABELS else _BLUE),
        ms=3,
        lw=0.6,
        capsize=1.5,
        label="not separated from clean (greyed)" if grey else "shifted sets",
    )
    if len(idf):
        xi = _agg(idf, ["eval_set"], "ood_score")
        yi = _agg(idf, ["eval_set"], "distance")
        ax.errorbar(
            xi["mean"],
            yi["mean"],
            yerr=yi["std"],
            xerr=_x_err(idf, xi),
            fmt="*",
            color=_RED,
            ms=7,
            lw=0.6,
            capsize=1.5,
            label="held-out ID",
        )
    ax.tick_params(labelsize=5)
    ax.set_xlabel("OOD score", fontsize=6)
    ax.set_ylabel(_label(DISTANCE_LABELS, loss), fontsize=5)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    if grey:  # the note inside the panel, over its grey points
        ax.text(
            0.5,
            0.97,
            greyed[shift],
            transform=ax.transAxes,
            ha="center",
            va="top",
            fontsize=5,
            color="0.35",
        )
    ax.set_title(f"{_label(LOSS_LABELS, loss)}\n{shift}", fontsize=6)


def fig3(
    frame: pd.DataFrame, path: str | Path, max_cols: int = 6, greyed: dict | None = None
) -> None:
    """Fig. 3: OOD score (x) vs distance to the OCS (y), mean ± std over seeds. One row of
    panels per loss (wrapped every ``max_cols`` shift types), at most the report's width; one
    x-axis for every panel, one y-axis per loss; ``greyed`` shifts drawn grey with their note."""
    cols = ["loss", "shift", "eval_set", "seed", "ood_score", "distance", "is_id"]
    _require(frame, cols, "fig3")
    greyed = greyed or {}
    xlim, ylims = _fig3_limits(frame)
    ood = frame[~frame["is_id"].astype(bool)]
    ident = frame[frame["is_id"].astype(bool)]
    panels = _order(zip(ood["loss"], ood["shift"], strict=True))
    if not panels:
        raise ValueError("fig3 needs at least one evaluation set with is_id False.")
    losses = _order(ood["loss"])
    shifts = _order(ood["shift"])
    ncols = min(len(shifts), max_cols)
    wraps = -(-len(shifts) // ncols)
    with style():
        # per loss: rows of up to ncols shift types
        fig, axes = new_figure(
            (min(REPORT_WIDTH_IN, 1.25 * ncols), 1.3 * wraps * len(losses)),
            ncols,
            wraps * len(losses),
        )
        for ax in axes:
            ax.set_visible(False)
        for loss, shift in panels:
            i = shifts.index(shift)
            ax = axes[(losses.index(loss) * wraps + i // ncols) * ncols + i % ncols]
            ax.set_visible(True)
            sub = ood[(ood["loss"] == loss) & (ood["shift"] == shift)]
            idf = ident[ident["loss"] == loss]
            _fig3_panel(ax, sub, idf, loss, shift, greyed, xlim, ylims[loss])
        seen: dict = {}
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                seen.setdefault(lab, h)
        fig.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=3, fontsize=6)
        save_figure(fig, path)


def _x_err(sub: pd.DataFrame, x: pd.DataFrame):
    """x error bars of Fig. 3: the std of each set's OOD score over the discriminator repeats
    (``ood_score_std``), or none (the score is one number per set, the same for every seed)."""
    if "ood_score_std" not in sub.columns:
        return None
    std = sub.groupby("eval_set", sort=False)["ood_score_std"].first()
    return std.reindex(x.index if "eval_set" not in x.columns else x["eval_set"]).to_numpy(float)


# --------------------------------------------------------------------------- Fig. 4
def _norm_panel(ax, norms: pd.DataFrame, levels: list, colors: dict) -> None:
    """Fig. 4, left: the norm ratio per affine layer, one line per shift level."""
    for level in levels:
        sub = norms[norms["level"] == level].sort_values("layer")
        ax.errorbar(
            sub["layer"],
            sub["ratio_mean"],
            yerr=sub["ratio_std"],
            marker="o",
            ms=3,
            lw=1,
            capsize=2,
            color=colors[level],
            label=str(level),
        )
    names = norms.drop_duplicates("layer").sort_values("layer")
    ax.set_xticks(names["layer"], names["name"], rotation=45)
    ax.set_ylabel("E ||W phi||^2 relative to train", fontsize=7)
    ax.set_title("feature norm ratio (cross-entropy)", fontsize=8)
    ax.legend(
        title="shift",
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=5,
        title_fontsize=6,
    )


def _subspace_panel(ax, subspace: pd.DataFrame, colors: dict) -> None:
    """Fig. 4, right: the top-subspace share per shift level."""
    sub = subspace.set_index("level").reindex(_order(subspace["level"]))
    pos = np.arange(len(sub))
    ax.bar(pos, sub["share_mean"], color=[colors.get(lv, _BLUE) for lv in sub.index])
    ax.errorbar(
        pos,
        sub["share_mean"],
        yerr=sub["share_std"],
        fmt="none",
        ecolor="black",
        lw=0.8,
        capsize=2,
    )
    ax.set_xticks(pos, [str(lv) for lv in sub.index], rotation=90, fontsize=6)
    ax.set_ylabel("share of ||phi||^2 in top subspace", fontsize=7)
    ax.set_title("top singular subspace (cross-entropy)", fontsize=8)


def _constants_panel(ax, constants: pd.DataFrame, loss) -> None:
    """Fig. 4, below: one loss's accumulated constants beside its OCS."""
    sub = constants[constants["loss"] == loss].assign(
        x=lambda d: d["component"].astype(str),
        hue=lambda d: d["source"],
        mean=lambda d: d["value"],
        std=0.0,
    )
    palette = {"constants": color_of(str(loss)), "OCS": _ORANGE}
    _grouped_bars(
        ax,
        sub,
        _order(sub["x"]),
        ["constants", "OCS"],
        palette,
        {"constants": "accumulated constants", "OCS": "OCS"},
    )
    layer = sub["layer_name"].iloc[0] if "layer_name" in sub.columns else ""
    ax.set_title(
        f"{_label(LOSS_LABELS, loss)}: constants from {layer} on vs OCS"
        if layer
        else f"{_label(LOSS_LABELS, loss)}: constants vs OCS",
        fontsize=8,
    )
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=5)


def fig4(
    norms: pd.DataFrame, subspace: pd.DataFrame, constants: pd.DataFrame, path: str | Path
) -> None:
    """Fig. 4: per-layer norm ratios, top-subspace share, accumulated constants vs OCS."""
    _require(norms, ["level", "layer", "name", "ratio_mean", "ratio_std"], "fig4 (norms)")
    _require(subspace, ["level", "share_mean", "share_std"], "fig4 (subspace)")
    _require(constants, ["loss", "component", "value", "source"], "fig4 (constants)")
    levels = _order(norms["level"])
    losses = _order(constants["loss"])
    colors = dict(zip(levels, sns.color_palette("viridis", len(levels)), strict=True))
    with style():
        fig, axes = new_figure(
            (REPORT_WIDTH_IN, 2.4 * -(-(2 + len(losses)) // 2)), 2, -(-(2 + len(losses)) // 2)
        )
        for ax in axes[2 + len(losses) :]:
            ax.set_visible(False)
        _norm_panel(axes[0], norms, levels, colors)
        _subspace_panel(axes[1], subspace, colors)
        for ax, loss in zip(axes[2 : 2 + len(losses)], losses, strict=True):
            _constants_panel(ax, constants, loss)
        save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 5
def fig5(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 5: mean predicted reward per action (top) and fraction of chosen actions (bottom)
    per shift level, with the OCS and the OCS policy last."""
    _require(frame, ["level", "action", "predicted_reward", "action_fraction"], "fig5")
    levels = [lv for lv in _order(frame["level"]) if lv != OCS_LEVEL]
    if OCS_LEVEL in set(frame["level"]):
        levels.append(OCS_LEVEL)
    actions = [str(a) for a in _order(frame["action"])]
    with style():
        fig, axes = new_figure((min(REPORT_WIDTH_IN, 1.1 * len(levels)), 3.0), len(levels), 2)
        for c, level in enumerate(levels):
            cell = frame[frame["level"] == level].assign(action=lambda d: d["action"].astype(str))
            color = _ORANGE if level == OCS_LEVEL else color_of("reward_mse")
            for r, (col, label) in enumerate(
                (("predicted_reward", "predicted reward"), ("action_fraction", "fraction chosen"))
            ):
                ax = axes[r * len(levels) + c]
                sns.barplot(
                    data=cell, x="action", y=col, order=actions, color=color, ax=ax, errorbar=None
                )
                ax.tick_params(labelsize=5)
                ax.set_xlabel("action" if r == 1 else "", fontsize=6)
                ax.set_ylabel(label if c == 0 else "", fontsize=6)
                if r == 0:
                    ax.set_title(str(level), fontsize=7)
                else:
                    ax.set_ylim(0, 1)
        save_figure(fig, path)


# --------------------------------------------------------------------------- Figs. 6-7
#: bootstrap resamples of the seeds behind Figs. 6-7's intervals (fixed generator: same bytes)
N_BOOT = 2000


def _boot(values: pd.Series) -> tuple[float, float]:
    """95 % bootstrap percentile interval of the mean over seeds: inside the range of the
    seed values, so an abstain ratio's interval stays inside [0, 1]."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return float(v.mean()), float(v.mean())
    rng = np.random.default_rng(0)
    means = v[rng.integers(0, len(v), size=(N_BOOT, len(v)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _agg_interval(frame: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    g = frame.groupby(keys, sort=False)[value]
    iv = g.agg(_boot)
    out = pd.DataFrame({"mean": g.mean(), "std": g.agg(_std)})
    out["lo"] = [a for a, _ in iv]
    out["hi"] = [b for _, b in iv]
    return out.reset_index()


def _policy_bars(frame: pd.DataFrame, value: str, ylabel: str, figure: str, path) -> None:
    _require(frame, ["level", "policy", "seed", value], figure)
    frame = frame.copy()
    if "panel" not in frame.columns:
        frame["panel"] = ""
    panels = _order(frame["panel"])
    policies = _order(frame["policy"])
    palette = {p: color_of(POLICY_ROLES.get(p, "control")) for p in policies}
    ncols = min(len(panels), 3)
    nrows = -(-len(panels) // ncols)
    with style():
        fig, axes = new_figure((REPORT_WIDTH_IN, 1.9 * nrows + 0.4), ncols, nrows)
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        for ax, panel in zip(axes, panels, strict=False):
            sub = frame[frame["panel"] == panel]
            table = _agg_interval(sub, ["level", "policy"], value).rename(
                columns={"level": "x", "policy": "hue"}
            )
            x_order = _order(sub["level"])
            _grouped_bars(ax, table, x_order, policies, palette, POLICY_LABELS)
            crowded = len(x_order) > 7
            ax.tick_params(axis="x", labelsize=5 if crowded else 6, rotation=90 if crowded else 0)
            ax.tick_params(axis="y", labelsize=6)
            ax.set_xlabel("rotation angle" if str(panel) == "rotation" else "level", fontsize=6)
            ax.set_ylabel(ylabel, fontsize=6)
            if value == "abstain_ratio":
                ax.set_ylim(0, 1)
            if panel != "":
                ax.set_title(str(panel), fontsize=7)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(policies), fontsize=6)
        save_figure(fig, path)


def fig6(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 6: ratio of abstain actions per shift level and policy, mean over seeds with a 95 %
    bootstrap interval."""
    _policy_bars(frame, "abstain_ratio", "abstain ratio", "fig6", path)


def fig7(frame: pd.DataFrame, path: str | Path) -> None:
    """Fig. 7: mean reward per shift level and policy, mean over seeds with a 95 % bootstrap
    interval."""
    _policy_bars(frame, "mean_reward", "mean reward", "fig7", path)


FIGURES = {"fig2": fig2, "fig3": fig3, "fig4": fig4, "fig5": fig5, "fig6": fig6, "fig7": fig7}
