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

__all__ = [
    "fit_table",
    "scaling_table",
    "directions_table",
    "kstability_table",
    "render_fit",
    "render_scaling",
    "render_directions",
    "render_kstability",
    "decade_alphas",
]

_FIT_LABELS = {
    "accuracy": "held-out accuracy (%) ↑",
    "chance": "chance: majority class (%)",
    "loss_ratio": "train loss / constant solution's ↓",
}


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
                        "loss_ratio": _per_seed(sel, "train_loss") / _per_seed(sel, "ocs_loss"),
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


def directions_table(directions: pd.DataFrame) -> pd.DataFrame:
    """Certainty at the largest alpha per direction and model at the sample count ``K``: mean
    max probability, vote share and share of certain points, mean ± std over seeds (per seed: the
    mean over the scaled points), with each direction's type, ``min |cos|`` with a class pair's
    LDA slope and its degenerate label."""
    require_columns(
        directions,
        [
            "dataset",
            "model",
            "kind",
            "seed",
            "direction",
            "direction_type",
            "degenerate",
            "min_cos",
            "k_role",
            "k",
            "mean_max_prob",
            "vote_share",
            "share_certain",
        ],
        "directions",
    )
    sub = directions[directions["k_role"] == "K"]
    check_unique(sub, ["dataset", "model", "direction", "seed"], "directions")
    rows = []
    for (dataset, direction, model), sel in sub.groupby(
        ["dataset", "direction", "model"], sort=False
    ):
        first = sel.iloc[0]
        rows.append(
            {
                "dataset": dataset,
                "direction": direction,
                "type": first["direction_type"],
                "degenerate": bool(first["degenerate"]),
                "min_cos": float(first["min_cos"]),
                "paper_direction": bool(first.get("paper_direction", False)),
                "model": model,
                "kind": first["kind"],
                "k": int(first["k"]),
                **cells(
                    {
                        "mean_max_prob": _per_seed(sel, "mean_max_prob"),
                        "vote_share": _per_seed(sel, "vote_share"),
                        "share_certain": _per_seed(sel, "share_certain"),
                    }
                ),
            }
        )
    return frame(rows)


def kstability_table(directions: pd.DataFrame, k_margin: float) -> pd.DataFrame:
    """Per stochastic model: the certainty statistic (mean max probability over points and
    non-degenerate directions, per seed) and the vote share at ``K`` and ``2K``, the per-seed
    change and the fixed equivalence margin ``k_margin`` (the premise K-* tests it; here
    ``within_margin`` says whether every seed's change lies inside it)."""
    from softmax_ood.studies.ulmer.claims import certainty_per_seed, k_stability

    rows = []
    doubled = directions[directions["k_role"] == "2K"]
    for (dataset, kind), sel in doubled.groupby(["dataset", "kind"], sort=False):
        a, b, _, margin = k_stability(directions, dataset, kind, k_margin)
        va = certainty_per_seed(directions, dataset, kind, "K", "vote_share")
        vb = certainty_per_seed(directions, dataset, kind, "2K", "vote_share")
        k2 = int(sel["k"].iloc[0])
        change = b - a
        rows.append(
            {
                "dataset": dataset,
                "model": sel["model"].iloc[0],
                "kind": kind,
                "K": k2 // 2,
                "2K": k2,
                **cells(
                    {
                        "max_prob_K": a,
                        "max_prob_2K": b,
                        "change": change,
                        "vote_share_K": va,
                        "vote_share_2K": vb,
                    }
                ),
                "max_abs_change": float(change.abs().max()),
                "margin": margin,
                "within_margin": bool((change.abs() < margin).all()),
            }
        )
    return frame(rows)


def _pm(r, name: str, digits: int = 3) -> str:
    mean, std = r[f"{name}_mean"], r[f"{name}_std"]
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.{digits}f} ± {'n/a' if math.isnan(std) else f'{std:.{digits}f}'}"


def render_directions(table: pd.DataFrame, title: str) -> str:
    """Markdown of :func:`directions_table`; degenerate directions are marked."""
    lines = [
        f"### {title}",
        "",
        r"| direction | type | min \|cos\| | model | K | mean max prob | vote share | share certain | n_seeds |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for _, r in table.iterrows():
        name = r["direction"] + (" (paper's feature)" if r["paper_direction"] else "")
        kind = r["type"] + (", **degenerate**" if r["degenerate"] else "")
        lines.append(
            f"| {name} | {kind} | {r['min_cos']:.3f} | {r['model']} | {int(r['k'])} | "
            f"{_pm(r, 'mean_max_prob')} | {_pm(r, 'vote_share')} | {_pm(r, 'share_certain')} | "
            f"{int(r['n_seeds'])} |"
        )
    return "\n".join(lines) + "\n"


def render_kstability(table: pd.DataFrame, title: str) -> str:
    """Markdown of :func:`kstability_table`."""
    lines = [
        f"### {title}",
        "",
        r"| model | K | 2K | mean max prob at K | at 2K | change 2K - K | largest \|change\| | "
        "margin | within | vote share at K | at 2K | n_seeds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['model']} | {int(r['K'])} | {int(r['2K'])} | {_pm(r, 'max_prob_K')} | "
            f"{_pm(r, 'max_prob_2K')} | {_pm(r, 'change', 4)} | {r['max_abs_change']:.4f} | "
            f"{r['margin']:.4f} | {'yes' if r['within_margin'] else '**no**'} | "
            f"{_pm(r, 'vote_share_K')} | {_pm(r, 'vote_share_2K')} | {int(r['n_seeds'])} |"
        )
    return "\n".join(lines) + "\n"
