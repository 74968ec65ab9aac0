"""The Kang study's long frames -> the tidy frames of :mod:`.figures` (Figs. 2-7).

Means are over seeds (the figure functions take the std over the ``seed`` column where they show
error bars). Fig. 5 shows the configured ``figure_shift``, Fig. 2 the shift its claim can be
read on (:func:`fig2_shift`: ``figure_shift`` unless the discriminator does not separate it from
clean or it moves no decision; also rotation), on the configured ``figure_class``; Fig. 3 greys
the shifts the discriminator does not separate from clean and leaves out the far sets the far
trend excludes; Fig. 4 the mechanism models; Fig. 3 one representative shift type
per family (``fig3_full``: every shift type, the appendix figure); Figs. 6 and 7 every shift
type, one panel each. Levels dropped as no-ops (the ``changes`` premise) are left out of every
figure, as out of every claim.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import figures
from .tables import FAR, by_shift, main_runs, mechanism_runs
from .tables import graded_shifts as graded

__all__ = ["FAMILIES", "FIGURES", "draw", "representatives"]

#: shift families of Hendrycks & Dietterich (2019) plus rotation; Fig. 3 shows one member each
FAMILIES = {
    "noise": ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise"),
    "blur": ("gaussian_blur", "defocus_blur", "motion_blur"),
    "weather": ("brightness",),
    "digital": ("contrast", "pixelate", "jpeg_compression", "elastic_transform"),
    "geometric": ("rotation",),
}
FIG2_ROTATIONS = (0.0, 45.0, 90.0, 135.0, 180.0)  #: Fig. 2's rotation row (where kept)


def _level_name(shift: str, level: float) -> str:
    if shift == "rotation":
        return f"{level:g}°"
    return "clean" if level == 0 else f"s{level:g}"


def _kept(frames: dict, spec: dict) -> dict[str, list[float]] | None:
    if "levels" not in frames or frames["levels"] is None or frames["levels"].empty:
        return None
    from .claims import kept_levels

    return kept_levels(frames["levels"], spec)


def _drop_noops(frame: pd.DataFrame, kept: dict | None) -> pd.DataFrame:
    """Rows of graded shift types at levels whose ``changes`` premise failed, removed."""
    if kept is None:
        return frame
    keep = [
        (sh not in kept) or (lv in kept[sh])
        for sh, lv in zip(frame["shift"], frame["level"], strict=True)
    ]
    return frame[keep]


def _figure_series(frame: pd.DataFrame, spec: dict, shift: str, kept=None) -> pd.DataFrame:
    sub = _drop_noops(by_shift(frame, spec), kept)
    sub = sub[sub["shift"] == shift].sort_values("level", kind="stable")
    return sub.assign(level=[_level_name(shift, lv) for lv in sub["level"]])


def representatives(spec: dict, kept: dict | None) -> list[str]:
    """One shift type per family: the first configured member with at least two kept shifted
    levels (else the first configured member), then the far OOD series."""
    out = []
    for members in FAMILIES.values():
        present = [
            m
            for m in members
            if m in spec["corruptions"] or (m == "rotation" and spec["rotations"])
        ]
        if not present:
            continue
        good = [m for m in present if kept is None or len(kept.get(m, [])) >= 3]
        out.append((good or present)[0])
    return out + ([FAR] if spec["far_ood"] else [])


def fig2_shift(frames: dict, spec: dict) -> str:
    """The shift Fig. 2 shows: the configured ``figure_shift`` when the claim it illustrates
    (``ocs_trend``) can be read on it -- the discriminator separates its top level from clean and
    that level moves more than ``prediction_epsilon`` of the classifier's decisions -- else the
    first configured shift type where both hold (else ``figure_shift``). Both gates are premises
    of the claims table, independent of the trend the figure shows."""
    wanted = spec["figure_shift"]
    kept = _kept(frames, spec)
    if kept is None or frames.get("ood_scores") is None or "grid" not in frames:
        return wanted
    from .claims import _top_level, unresolved_shifts

    greyed = unresolved_shifts(frames, spec)
    grid = main_runs(frames["grid"], spec)
    clf = grid[grid["loss"] == spec["roles"]["classifier"]]
    scores = frames["ood_scores"].set_index("eval_set")
    order = [wanted] + [s for s in graded(spec) if s != wanted]
    for s in order:
        top = _top_level(spec, s, kept.get(s, [0.0]), scores)
        name = f"{s}@{top:g}"
        changed = clf.loc[clf["eval_set"] == name, "changed"] if "changed" in clf else []
        moves = len(changed) and float(changed.mean()) > float(spec["prediction_epsilon"])
        if s not in greyed and top > 0 and moves:
            return s
    return wanted


def fig2(frames: dict, spec: dict, path) -> None:
    comp = main_runs(frames["components"], spec)
    kept = _kept(frames, spec)
    pred = comp[comp["kind"] == "mean_prediction"]
    shown = fig2_shift(frames, spec)
    parts = [_figure_series(pred, spec, shown, kept)]
    if spec["rotations"] and shown != "rotation":
        rot = _figure_series(pred, spec, "rotation", kept)
        angles = {_level_name("rotation", a) for a in FIG2_ROTATIONS}
        parts.append(rot[rot["level"].isin(angles)])
    ocs = comp[(comp["kind"] == "ocs")]
    rows = []
    for part in parts:
        if part.empty:
            continue
        shift = part["shift"].iloc[0]
        rows.append(part)
        rows.append(ocs.assign(level=figures.OCS_LEVEL, shift=shift))
    rows = pd.concat(rows, ignore_index=True)
    rows = rows[rows["family"].isin(["ce", "gaussian_nll"])]
    mean = (
        rows.groupby(["family", "shift", "level", "component"], sort=False)["value"]
        .mean()
        .reset_index()
    )
    mean["row"] = [
        f"{figures.LOSS_LABELS.get(f, f)}\n{s}"
        for f, s in zip(mean["family"], mean["shift"], strict=True)
    ]
    mean = mean.sort_values(
        ["family", "shift"],
        key=lambda c: c.map({v: i for i, v in enumerate(dict.fromkeys(mean[c.name]))}),
        kind="stable",
    )
    figures.fig2(mean.rename(columns={"family": "loss"}), path)


def _fig3_frame(frames: dict, spec: dict) -> pd.DataFrame:
    """Fig. 3's rows: no-op levels and the far sets the far trend leaves out (their
    ``far_nontrivial`` premise fails, e.g. ``glyphs_boxed``) dropped; ``ood_score_std`` the
    std of each set's OOD score over the discriminator repeats (the x error bars)."""
    from .far import excluded_far

    grid = _drop_noops(main_runs(frames["grid"], spec), _kept(frames, spec))
    scores = frames.get("ood_scores")
    cols = ["loss", "shift", "eval_set", "seed", "ood_score", "distance", "is_id"]
    if scores is not None and len(scores) and "per_repeat" in scores.columns:
        out_sets = {f"far:{n}" for n in excluded_far(scores, spec)}
        grid = grid[~grid["eval_set"].isin(out_sets)]
        std = {
            e: float(pd.Series(r, dtype=float).std(ddof=1)) if len(r) > 1 else 0.0
            for e, r in zip(scores["eval_set"], scores["per_repeat"], strict=True)
        }
        grid = grid.assign(ood_score_std=grid["eval_set"].map(std).fillna(0.0))
        cols.append("ood_score_std")
    return grid.assign(loss=grid["family"])[cols]


def _greyed(frames: dict, spec: dict) -> dict[str, str]:
    from .claims import unresolved_shifts

    if frames.get("ood_scores") is None or _kept(frames, spec) is None:
        return {}
    return unresolved_shifts(frames, spec)


def fig3(frames: dict, spec: dict, path) -> None:
    out = _fig3_frame(frames, spec)
    shown = representatives(spec, _kept(frames, spec))
    out = out[out["shift"].isin(shown) | out["is_id"].astype(bool)]
    figures.fig3(out, path, greyed=_greyed(frames, spec))


def fig3_full(frames: dict, spec: dict, path) -> None:
    figures.fig3(_fig3_frame(frames, spec), path, max_cols=5, greyed=_greyed(frames, spec))


def fig4(frames: dict, spec: dict, path) -> None:
    mech = mechanism_runs(frames["mechanism"], spec)
    first = spec["mechanism"]["losses"][0]
    shift = spec["mechanism"]["shift"]
    m0 = mech[mech["loss"] == first]
    levels = frames["grid"].drop_duplicates("eval_set").set_index("eval_set")
    name = {e: _level_name(shift, float(levels.loc[e, "level"])) for e in levels.index}
    nr = m0[m0["kind"] == "norm_ratio"].assign(level=lambda d: d["eval_set"].map(name))
    nr = nr.sort_values(["eval_set"], key=lambda s: s.map(levels["level"]), kind="stable")
    norms = (
        nr.groupby(["level", "layer", "name"], sort=False)
        .agg(ratio_mean=("mean", "mean"), ratio_std=("std", "mean"))
        .reset_index()
    )
    ss = m0[m0["kind"] == "subspace_share"].assign(level=lambda d: d["eval_set"].map(name))
    ss = ss.sort_values(["eval_set"], key=lambda s: s.map(levels["level"]), kind="stable")
    subspace = (
        ss.groupby("level", sort=False)
        .agg(share_mean=("mean", "mean"), share_std=("std", "mean"))
        .reset_index()
    )
    const = mech[mech["kind"] == "constants"]
    layer_name = const.groupby("family", sort=False)["eval_set"].first()
    const = const.groupby(["family", "name"], sort=False)["mean"].mean().reset_index()
    comp = mechanism_runs(frames["components"], spec)
    ocs = comp[comp["kind"] == "ocs"]
    ocs = ocs.groupby(["family", "component"], sort=False)["value"].mean().reset_index()
    constants = pd.concat(
        [
            const.rename(columns={"family": "loss", "name": "component", "mean": "value"}).assign(
                source="constants"
            ),
            ocs.rename(columns={"family": "loss"}).assign(source="OCS"),
        ],
        ignore_index=True,
    )
    constants["layer_name"] = constants["loss"].map(layer_name).fillna("")
    figures.fig4(norms, subspace, constants, path)


def fig5(frames: dict, spec: dict, path) -> None:
    comp = main_runs(frames["components"], spec)
    comp = comp[comp["family"] == "reward_mse"]
    parts = {}
    for kind, col in (
        ("mean_prediction", "predicted_reward"),
        ("action_fraction", "action_fraction"),
    ):
        rows = comp[comp["kind"] == kind]
        series = _figure_series(
            rows[rows["shift"] != "OCS"], spec, spec["figure_shift"], _kept(frames, spec)
        )
        ocs_kind = "ocs" if kind == "mean_prediction" else kind
        ocs = comp[(comp["shift"] == "OCS") & (comp["kind"] == ocs_kind)]
        both = pd.concat([series, ocs.assign(level=figures.OCS_LEVEL)], ignore_index=True)
        parts[col] = both.groupby(["level", "component"], sort=False)["value"].mean().rename(col)
    out = pd.concat(parts.values(), axis=1).reset_index().rename(columns={"component": "action"})
    figures.fig5(out, path)


#: Figs. 6-7 show rotation at these angles only (every angle is in the ``selective`` table):
#: 13 angles x 4 policies do not read at a glance beside the corruptions' 6 levels
FIGURE_ANGLES = (0.0, 45.0, 90.0, 135.0, 180.0)


def _policies(frames: dict, spec: dict) -> pd.DataFrame:
    pol = _drop_noops(by_shift(main_runs(frames["policies"], spec), spec), _kept(frames, spec))
    pol = pol[pol["shift"] != "far_ood"].sort_values(["level"], kind="stable")
    pol = pol[(pol["shift"] != "rotation") | pol["level"].isin(FIGURE_ANGLES)]
    return pol.assign(
        panel=pol["shift"],
        level=[_level_name(s, lv) for s, lv in zip(pol["shift"], pol["level"], strict=True)],
    )


def fig6(frames: dict, spec: dict, path) -> None:
    figures.fig6(_policies(frames, spec), path)


def fig7(frames: dict, spec: dict, path) -> None:
    figures.fig7(_policies(frames, spec), path)


FIGURES = {
    "fig2": fig2,
    "fig3": fig3,
    "fig3_full": fig3_full,
    "fig4": fig4,
    "fig5": fig5,
    "fig6": fig6,
    "fig7": fig7,
}


def draw(name: str, frames: dict, spec: dict, path: str | Path) -> None:
    FIGURES[name](frames, spec, path)
