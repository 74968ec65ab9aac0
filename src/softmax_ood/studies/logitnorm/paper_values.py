"""The LogitNorm paper's printed numbers (Wei et al. 2022, Tables 1-6) and a side-by-side view.

``paper_values.csv`` (beside this module) holds the CIFAR-10 and CIFAR-100 columns of Tables 1-6
exactly as printed, one value a line: ``table, id_dataset, row, loss, metric, value``.

Conventions of the CSV (chosen so that rows line up with :mod:`.tables`):

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

from ...analysis.paper import render_side_by_side_markdown
from ...analysis.paper import side_by_side as _side_by_side

__all__ = [
    "COLUMNS",
    "PAPER_NOTES",
    "load_paper_values",
    "render_paper_markdown",
    "PAPER_VALUES_CSV",
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


def side_by_side(ours: pd.DataFrame, paper: pd.DataFrame, table: str, **kw) -> pd.DataFrame:
    """:func:`softmax_ood.analysis.paper.side_by_side` with this paper's loss roles."""
    return _side_by_side(ours, paper, table, roles=ROLES, **kw)


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


#: the printed values shipped with this study
PAPER_VALUES_CSV = Path(__file__).with_name("paper_values.csv")
