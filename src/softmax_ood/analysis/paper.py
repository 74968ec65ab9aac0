"""Paper-vs-ours side by side, shared by every study.

A study's printed values are a long frame ``table, id_dataset, row, loss, metric, value`` (the
paper's loss ids); ours are a tidy-wide table (``row``, ``loss``, ``<m>_mean``/``<m>_std``,
``n_seeds``). Our loss names map to the paper's through ``roles``: ``{paper_loss: spec_key}``.
"""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["render_side_by_side_markdown", "side_by_side"]


def _our_loss_names(spec: dict | None, roles: dict) -> dict[str, str]:
    """Our loss name -> the paper's loss id, through the spec's roles (identity without spec)."""
    if spec is None:
        return {k: k for k in roles}
    return {spec[role]: paper for paper, role in roles.items() if role in spec}


def _ours_long(ours: pd.DataFrame, spec: dict | None, roles: dict) -> pd.DataFrame:
    metrics = [c[:-5] for c in ours.columns if c.endswith("_mean") and f"{c[:-5]}_std" in ours]
    to_paper = _our_loss_names(spec, roles)
    rows = []
    for _, r in ours.iterrows():
        for m in metrics:
            rows.append(
                {
                    "row": str(r["row"]),
                    "loss": to_paper.get(r["loss"], r["loss"]),
                    "our_loss": r["loss"],
                    "score": r["score"] if "score" in ours else None,
                    "metric": m,
                    "mean": float(r[f"{m}_mean"]),
                    "std": float(r[f"{m}_std"]),
                    "n_seeds": float(r["n_seeds"]),
                }
            )
    return pd.DataFrame(rows)


def side_by_side(
    ours: pd.DataFrame,
    paper: pd.DataFrame,
    table: str,
    *,
    roles: dict,
    spec: dict | None = None,
    id_dataset: str = "cifar10",
) -> pd.DataFrame:
    """Our table (long: one line per row x loss x metric) stacked on the paper's printed values.

    Columns: ``source`` (``ours``/``paper``), ``table, row, loss, our_loss, score, metric, mean,
    std, n_seeds, aligned``. The paper's value is in ``mean`` (``std``/``n_seeds`` NaN: the paper
    prints means of five runs without a spread). ``aligned`` is True where the same
    ``(row, loss, metric)`` exists in both sources, i.e. where a direct comparison is meaningful
    (for Table 1 only the ``average`` row; for Table 3 none, the architectures differ). Losses
    are matched through the spec's roles (``baseline`` <-> paper ``ce`` ...) when ``spec`` is
    given.
    """
    mine = _ours_long(ours, spec, roles).assign(source="ours")
    theirs = paper[(paper["table"] == table) & (paper["id_dataset"] == id_dataset)]
    theirs = pd.DataFrame(
        {
            "row": theirs["row"].astype(str),
            "loss": theirs["loss"].astype(str),
            "our_loss": None,
            "score": None,
            "metric": theirs["metric"].astype(str),
            "mean": theirs["value"].astype(float),
            "std": math.nan,
            "n_seeds": math.nan,
            "source": "paper",
        }
    )
    both = pd.concat([mine, theirs], ignore_index=True)
    key = ["row", "loss", "metric"]
    common = set(map(tuple, mine[key].to_numpy())) & set(map(tuple, theirs[key].to_numpy()))
    both["aligned"] = [tuple(k) in common for k in both[key].to_numpy()]
    both.insert(1, "table", table)
    cols = [
        "source",
        "table",
        "row",
        "loss",
        "our_loss",
        "score",
        "metric",
        "mean",
        "std",
        "n_seeds",
        "aligned",
    ]
    return both[cols].reset_index(drop=True)


def _fmt(mean: float, std: float, ours: bool) -> str:
    if math.isnan(mean):
        return "n/a"
    if not ours:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± " + ("n/a" if math.isnan(std) else f"{std:.2f}")


def render_side_by_side_markdown(frame: pd.DataFrame, title: str) -> str:
    """The aligned cells of :func:`side_by_side` as a markdown table: ours vs the paper."""
    al = frame[frame["aligned"]]
    lines = [f"### {title}", ""]
    if al.empty:
        return "\n".join(lines + ["No row of ours corresponds to a row of the paper's table.", ""])
    lines += ["| row | loss | metric | ours (mean ± std) | paper |", "|---|---|---|---:|---:|"]
    paper = al[al["source"] == "paper"].set_index(["row", "loss", "metric"])["mean"]
    for _, r in al[al["source"] == "ours"].iterrows():
        p = paper.get((r["row"], r["loss"], r["metric"]), math.nan)
        lines.append(
            f"| {r['row']} | {r['our_loss']} | {r['metric']} | "
            f"{_fmt(r['mean'], r['std'], True)} | {_fmt(float(p), math.nan, False)} |"
        )
    return "\n".join(lines) + "\n"
