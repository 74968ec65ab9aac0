"""The Kang study's long frames -> the tidy frames of :mod:`.figures` (Figs. 2-7).

Means are over seeds (the figure functions take the std over the ``seed`` column where they show
error bars). Figs. 2 and 5 show the configured ``figure_shift``; Fig. 4 the mechanism model;
Figs. 3, 6 and 7 every shift type, one panel each.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import figures
from .tables import by_shift, main_runs, mechanism_runs

__all__ = ["FIGURES", "draw"]


def _level_name(shift: str, level: float) -> str:
    if level == 0:
        return "clean"
    return f"{level:g}°" if shift == "rotation" else f"s{level:g}"


def _figure_series(frame: pd.DataFrame, spec: dict, shift: str) -> pd.DataFrame:
    sub = by_shift(frame, spec)
    sub = sub[sub["shift"] == shift].sort_values("level", kind="stable")
    return sub.assign(level=[_level_name(shift, lv) for lv in sub["level"]])


def fig2(frames: dict, spec: dict, path) -> None:
    comp = main_runs(frames["components"], spec)
    pred = _figure_series(comp[comp["kind"] == "mean_prediction"], spec, spec["figure_shift"])
    ocs = comp[(comp["kind"] == "ocs")].assign(level=figures.OCS_LEVEL)
    rows = pd.concat([pred, ocs], ignore_index=True)
    rows = rows[rows["family"].isin(["ce", "gaussian_nll"])]
    mean = rows.groupby(["family", "level", "component"], sort=False)["value"].mean().reset_index()
    figures.fig2(mean.rename(columns={"family": "loss"}), path)


def fig3(frames: dict, spec: dict, path) -> None:
    grid = main_runs(frames["grid"], spec)
    out = grid.assign(loss=grid["family"])[
        ["loss", "shift", "eval_set", "seed", "ood_score", "distance", "is_id"]
    ]
    figures.fig3(out, path)


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
        series = _figure_series(rows[rows["shift"] != "OCS"], spec, spec["figure_shift"])
        ocs_kind = "ocs" if kind == "mean_prediction" else kind
        ocs = comp[(comp["shift"] == "OCS") & (comp["kind"] == ocs_kind)]
        both = pd.concat([series, ocs.assign(level=figures.OCS_LEVEL)], ignore_index=True)
        parts[col] = both.groupby(["level", "component"], sort=False)["value"].mean().rename(col)
    out = pd.concat(parts.values(), axis=1).reset_index().rename(columns={"component": "action"})
    figures.fig5(out, path)


def _policies(frames: dict, spec: dict) -> pd.DataFrame:
    pol = by_shift(main_runs(frames["policies"], spec), spec)
    pol = pol[pol["shift"] != "far_ood"].sort_values(["level"], kind="stable")
    return pol.assign(
        panel=pol["shift"],
        level=[_level_name(s, lv) for s, lv in zip(pol["shift"], pol["level"], strict=True)],
    )


def fig6(frames: dict, spec: dict, path) -> None:
    figures.fig6(_policies(frames, spec), path)


def fig7(frames: dict, spec: dict, path) -> None:
    figures.fig7(_policies(frames, spec), path)


FIGURES = {"fig2": fig2, "fig3": fig3, "fig4": fig4, "fig5": fig5, "fig6": fig6, "fig7": fig7}


def draw(name: str, frames: dict, spec: dict, path: str | Path) -> None:
    FIGURES[name](frames, spec, path)
