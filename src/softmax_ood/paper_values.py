"""The LogitNorm paper's printed numbers (Wei et al. 2022, Tables 1-6) and a side-by-side view.

``config/paper_values/logitnorm.csv`` holds the CIFAR-10 and CIFAR-100 columns of Tables 1-6
exactly as printed, one value a line: ``table, id_dataset, row, loss, metric, value``.

Conventions of the CSV (chosen so that rows line up with :mod:`softmax_ood.tables`):

* ``loss`` is the role in this study's spec: ``ce`` (baseline), ``logitnorm`` (method, tau 0.04
  on CIFAR-10), ``logitpenalty`` (penalty, lambda 0.05), ``godin``.
* ``row``: Table 1 the paper's OOD set names (``Texture``, ``SVHN``, ..., ``average``); Table 2
  the score ids (``msp`` = the paper's "Softmax", ``odin``, ``energy``, ``gradnorm``); Table 3 the
  paper's architectures; Table 4 ``w/o TS`` / ``w/ TS``; Tables 5 and 6 ``average`` (their
  numbers are averages over the six OOD test sets).
* ``metric``: ``fpr95``, ``auroc``, ``aupr`` (AUPR-In), ``accuracy``, ``ece``, ``norm_id``,
  ``norm_ood`` (L2 logit norm on SVHN), all percentages except the norms.

See :data:`PAPER_NOTES` for inconsistencies in the printed tables.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

__all__ = [
    "COLUMNS",
    "PAPER_NOTES",
    "load_paper_values",
    "render_paper_markdown",
    "render_side_by_side_markdown",
    "side_by_side",
]

COLUMNS = ["table", "id_dataset", "row", "loss", "metric", "value"]
TABLE_NAMES = {f"table{i}" for i in range(1, 7)}
ID_DATASETS = {"cifar10", "cifar100"}
PERCENT_METRICS = {"fpr95", "auroc", "aupr", "accuracy", "ece"}
METRICS = PERCENT_METRICS | {"norm_id", "norm_ood"}
#: spec key of each paper loss id (the loss names of this study are looked up through these)
ROLES = {"ce": "baseline", "logitnorm": "method", "logitpenalty": "penalty", "godin": "godin"}

PAPER_NOTES = {
    "table1": "OOD test sets are CIFAR-scale (Texture, SVHN, LSUN-C, LSUN-R, iSUN, Places365); "
    "only the 'average' row corresponds to a row of ours.",
    "table2": "The CIFAR-100 Softmax row (LogitNorm 58.35 / 85.75 / 96.44) differs from "
    "Table 1's CIFAR-100 average (58.49 / 85.73 / 96.42); both are kept as printed.",
    "table3": "CIFAR-10 only; the paper's architectures (WRN-40-2, ResNet-34, DenseNet) have "
    "no counterpart among ours, so the table is shown separately.",
    "table4": "ECE with 15 bins; the paper does not print the fitted temperature.",
    "table5": "Logit norms are on SVHN as OOD set (ours: the configured norm_ood_set).",
    "table6": "The caption says LogitNorm uses the ODIN score, but the printed LogitNorm row "
    "(15.65 / 96.91 / 99.31) equals the MSP average of Tables 1-3, and the text says "
    "'LogitNorm with the MSP score'; Table 2's ODIN row for LogitNorm is "
    "12.95 / 97.37 / 99.40.",
}


def load_paper_values(path: str | Path) -> pd.DataFrame:
    """Read and validate the paper-values CSV (columns :data:`COLUMNS`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Paper values file {path} does not exist.")
    df = pd.read_csv(path, dtype={c: str for c in COLUMNS[:-1]}, keep_default_na=False)
    if list(df.columns) != COLUMNS:
        raise ValueError(f"{path} has columns {list(df.columns)}, expected {COLUMNS}.")
    value = pd.to_numeric(df["value"], errors="coerce")
    checks = [
        (~df["table"].isin(TABLE_NAMES), "an unknown table"),
        (~df["id_dataset"].isin(ID_DATASETS), "an unknown id_dataset"),
        (~df["metric"].isin(METRICS), "an unknown metric"),
        (df["row"].str.strip() == "", "an empty row name"),
        (~df["loss"].isin(ROLES), "an unknown loss"),
        (~value.map(lambda v: isinstance(v, float) and math.isfinite(v)), "a non-numeric value"),
        (df["metric"].isin(PERCENT_METRICS) & ~value.between(0, 100), "a percentage outside 0-100"),
        (
            df.duplicated(COLUMNS[:-1], keep=False),
            "a duplicate (table, id_dataset, row, loss, metric)",
        ),
    ]
    for bad, what in checks:
        if bad.any():
            first = df.loc[bad].iloc[0].to_dict()
            raise ValueError(f"{path} has {what} in line {first}.")
    df["value"] = value.astype(float)
    return df


def _our_loss_names(spec: dict | None) -> dict[str, str]:
    """Our loss name -> the paper's loss id, through the spec's roles (identity without spec)."""
    if spec is None:
        return {k: k for k in ROLES}
    return {spec[role]: paper for paper, role in ROLES.items() if role in spec}


def _ours_long(ours: pd.DataFrame, spec: dict | None) -> pd.DataFrame:
    metrics = [c[:-5] for c in ours.columns if c.endswith("_mean") and f"{c[:-5]}_std" in ours]
    to_paper = _our_loss_names(spec)
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
    mine = _ours_long(ours, spec).assign(source="ours")
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


def render_paper_markdown(paper: pd.DataFrame, table: str) -> str:
    """The paper's printed table: one line per row x loss, ``<dataset> <metric>`` columns."""
    sel = paper[paper["table"] == table]
    if sel.empty:
        raise ValueError(f"The paper values have no rows for {table!r}.")
    wide = sel.pivot_table(
        index=["row", "loss"], columns=["id_dataset", "metric"], values="value", sort=False
    )
    header = [f"{ds} {m}" for ds, m in wide.columns]
    lines = [
        f"### Paper, {table} (Wei et al. 2022, as printed)",
        "",
        "| row | loss | " + " | ".join(header) + " |",
        "|---|---|" + "---:|" * len(header),
    ]
    for (row, loss), r in wide.iterrows():
        cells = ["" if math.isnan(v) else f"{v:.2f}" for v in r]
        lines.append(f"| {row} | {loss} | " + " | ".join(cells) + " |")
    if table in PAPER_NOTES:
        lines += ["", f"Note: {PAPER_NOTES[table]}"]
    return "\n".join(lines) + "\n"
