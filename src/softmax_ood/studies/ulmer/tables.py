"""Tables of the Ulmer & Cinà study: per-seed frames -> mean ± std over seeds, with the shared
seed aggregation (:mod:`softmax_ood.analysis.seeds`) and table rendering
(:mod:`softmax_ood.analysis.render`).

:see Paper: Ulmer & Cinà, "Know your limits", Theorem 1 (metrics and their gradient norms as a
    feature is scaled by alpha).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from softmax_ood.analysis.render import render_markdown
from softmax_ood.analysis.seeds import cells, check_unique, frame, require_columns

__all__ = ["fit_table", "scaling_table", "render_fit", "render_scaling", "decade_alphas"]

_FIT_LABELS = {"accuracy": "held-out accuracy (%) ↑", "chance": "chance: majority class (%)"}


def _per_seed(sel: pd.DataFrame, column: str) -> pd.Series:
    return sel.set_index("seed")[column].sort_index().astype(float)


def fit_table(fit: pd.DataFrame) -> pd.DataFrame:
    """Held-out accuracy per model (mean ± std over seeds, %) next to chance (majority class)."""
    require_columns(fit, ["dataset", "model", "kind", "seed", "accuracy", "chance"], "fit")
    check_unique(fit, ["dataset", "model", "seed"], "fit")
    rows = []
    for (dataset, model), sel in fit.groupby(["dataset", "model"], sort=False):
        rows.append(
            {
                "dataset": dataset,
                "model": model,
                "scaled feature": str(sel["feature"].iloc[0]),
                **cells(
                    {
                        "accuracy": _per_seed(sel, "accuracy") * 100,
                        "chance": _per_seed(sel, "chance") * 100,
                    }
                ),
            }
        )
    return frame(rows)


def decade_alphas(alphas) -> list[float]:
    """The grid's scales that are powers of ten (1, 10, ..., the largest), in order."""
    a = np.unique(np.asarray(alphas, dtype=np.float64))
    return [float(x) for x in a if np.isclose(np.log10(x), round(np.log10(x)), atol=1e-9)]


def scaling_table(scaling: pd.DataFrame) -> pd.DataFrame:
    """Each metric, its input-gradient norm and the share of certain points at the decades of
    alpha: mean ± std over seeds (per seed: the mean over the scaled points)."""
    require_columns(
        scaling,
        ["dataset", "model", "seed", "alpha", "metric", "value", "grad_norm", "share_confident"],
        "scaling",
    )
    check_unique(scaling, ["dataset", "model", "metric", "alpha", "seed"], "scaling")
    keep = decade_alphas(scaling["alpha"])
    sub = scaling[scaling["alpha"].isin(keep)]
    rows = []
    for (dataset, model, metric, alpha), sel in sub.groupby(
        ["dataset", "model", "metric", "alpha"], sort=False
    ):
        rows.append(
            {
                "dataset": dataset,
                "model": model,
                "metric": metric,
                "alpha": float(alpha),
                **cells(
                    {
                        "value": _per_seed(sel, "value"),
                        "grad_norm": _per_seed(sel, "grad_norm"),
                        "share_certain": _per_seed(sel, "share_confident"),
                    }
                ),
            }
        )
    return frame(rows)


def render_fit(table: pd.DataFrame, title: str) -> str:
    return render_markdown(table, title, labels=_FIT_LABELS)


def _sci(mean: float, std: float) -> str:
    if math.isnan(mean):
        return "n/a"
    s = "n/a" if math.isnan(std) else f"{std:.2g}"
    return f"{mean:.3g} ± {s}"


def render_scaling(table: pd.DataFrame, title: str) -> str:
    """Markdown of :func:`scaling_table` (3 significant digits: gradient norms span 1e-300..1)."""
    lines = [
        f"### {title}",
        "",
        "| model | metric | alpha | value | ‖∇x value‖₂ | share certain | n_seeds |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['model']} | {r['metric']} | {r['alpha']:g} | "
            f"{_sci(r['value_mean'], r['value_std'])} | "
            f"{_sci(r['grad_norm_mean'], r['grad_norm_std'])} | "
            f"{_sci(r['share_certain_mean'], r['share_certain_std'])} | {int(r['n_seeds'])} |"
        )
    return "\n".join(lines) + "\n"
