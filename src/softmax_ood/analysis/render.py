"""Table rendering shared by every study: a tidy-wide frame (key columns, ``<m>_mean`` /
``<m>_std`` pairs, ``n_seeds``) as a markdown table with "mean ± std" cells."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["METRIC_LABELS", "fmt_mean_std", "metric_names", "render_markdown"]

#: Column headers for common metrics (studies may pass their own ``labels``).
METRIC_LABELS = {
    "fpr95": "FPR95 (%) ↓",
    "auroc": "AUROC (%) ↑",
    "aupr": "AUPR-In (%) ↑",
    "accuracy": "ID accuracy (%) ↑",
    "ece": "ECE (%) ↓",
    "temperature": "temperature T",
    "norm_id": "L2 logit norm, ID",
    "norm_ood": "L2 logit norm, OOD",
    "val_fpr95": "val FPR95 (%) ↓",
}


def fmt_mean_std(mean: float, std: float) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    s = "n/a" if std is None or math.isnan(float(std)) else f"{float(std):.2f}"
    return f"{float(mean):.2f} ± {s}"


def _fmt_key(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, float | np.floating):
        return "n/a" if math.isnan(value) else f"{value:g}"
    return str(value).replace("|", "\\|")


def metric_names(df: pd.DataFrame) -> list[str]:
    return [
        c[: -len("_mean")]
        for c in df.columns
        if c.endswith("_mean") and f"{c[: -len('_mean')]}_std" in df.columns
    ]


def render_markdown(df: pd.DataFrame, title: str, labels: dict | None = None) -> str:
    """A markdown table: key columns as text, each metric as "mean ± std" (2 decimals)."""
    metrics = metric_names(df)
    paired = {f"{m}_{s}" for m in metrics for s in ("mean", "std")}
    keys = [c for c in df.columns if c not in paired and c not in ("n_seeds", "selected")]
    extra = [c for c in ("selected", "n_seeds") if c in df.columns]
    labels = {**METRIC_LABELS, **(labels or {})}
    header = keys + [labels.get(m, m) for m in metrics] + extra
    lines = [
        f"### {title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * len(keys) + ["---:"] * (len(metrics) + len(extra))) + "|",
    ]
    for _, r in df.iterrows():
        cells = [_fmt_key(r[k]) for k in keys]
        cells += [fmt_mean_std(r[f"{m}_mean"], r[f"{m}_std"]) for m in metrics]
        cells += [_fmt_key(bool(r[c])) if c == "selected" else str(int(r[c])) for c in extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
