"""The LogitNorm paper's Tables 1-6 (Wei et al. 2022) rebuilt from the study's long frames.

Inputs are the aggregated ``runs`` and ``ood`` frames (see :mod:`softmax_ood.aggregate`; all
rates are fractions) and the study spec (the ``logitnorm`` config section with the tau-ablation
loss variants spelled out). Every table is a flat ("tidy wide") frame: string key columns
(``row``, ``loss`` and, where it varies, ``score``), then numeric ``<metric>_mean`` /
``<metric>_std`` pairs and ``n_seeds``. Percent metrics (FPR95, AUROC, AUPR, accuracy, ECE) are
multiplied by 100 like the paper; temperatures and logit norms are not.

Seed handling: a metric is first averaged over the OOD *test* sets within each seed (the paper's
"average" row), then summarised over seeds as mean and sample std (``ddof=1``; NaN with a single
seed, rendered as "± n/a"). Validation OOD sets (``split == "val"``) never enter a test table.

The paper's "AUPR" is AUPR-In (average precision with ID as the positive class); here it is the
``aupr`` column, computed from the ``aupr_in`` input column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "METRIC_LABELS",
    "TABLES",
    "render_markdown",
    "seed_average",
    "seed_values",
    "study_frames",
    "summarise",
    "table1",
    "table2",
    "table3",
    "table4",
    "table5",
    "table6",
    "tau_ablation",
]

#: OOD metrics of the paper's tables -> input column in ``ood``.
OOD_METRICS = {"fpr95": "fpr95", "auroc": "auroc", "aupr": "aupr_in"}

#: Column headers used by :func:`render_markdown`.
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


# --------------------------------------------------------------------------- selection helpers
def _one_sentence_missing(what: str, missing: Iterable, where: str) -> ValueError:
    items = ", ".join(repr(m) for m in missing)
    return ValueError(f"The {where} frame has no rows for {what} {items}.")


def _require(frame: pd.DataFrame, column: str, values: Sequence, where: str, what: str) -> None:
    present = set(frame[column].dropna().unique()) if column in frame else set()
    missing = [v for v in values if v not in present]
    if missing:
        raise _one_sentence_missing(what, missing, where)


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The {where} frame lacks the column(s) {', '.join(missing)}.")


def _one_dataset(frame: pd.DataFrame, spec: dict, where: str) -> pd.DataFrame:
    """Restrict to ``spec['dataset']`` if given; otherwise insist on a single ID dataset."""
    if "dataset" not in frame.columns:
        return frame
    if spec.get("dataset") is not None:
        _require(frame, "dataset", [spec["dataset"]], where, "dataset")
        return frame[frame["dataset"] == spec["dataset"]]
    names = sorted(frame["dataset"].dropna().unique())
    if len(names) > 1:
        raise ValueError(f"The {where} frame mixes ID datasets {names}; set spec['dataset'].")
    return frame


def study_frames(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict):
    """``runs`` and ``ood`` restricted to the study's ID dataset (checked, not copied)."""
    return _one_dataset(runs, spec, "runs"), _one_dataset(ood, spec, "ood")


def _check_unique(frame: pd.DataFrame, keys: list[str], where: str) -> None:
    dup = frame.duplicated(keys)
    if dup.any():
        first = frame.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(f"The {where} frame has duplicate rows for {first}.")


def seed_values(
    runs: pd.DataFrame, arch: str, loss: str, column: str, *, scale: float = 1.0
) -> pd.Series:
    """A ``runs`` column for one (arch, loss), indexed by seed (one model per seed)."""
    sel = runs[(runs["arch"] == arch) & (runs["loss"] == loss)]
    if sel.empty:
        _require(runs, "arch", [arch], "runs", "architecture")
        raise ValueError(f"The runs frame has no rows for loss {loss!r} on architecture {arch!r}.")
    _check_unique(sel, ["seed"], "runs")
    return sel.set_index("seed")[column].sort_index().astype(float) * scale


def _ood_rows(ood: pd.DataFrame, arch: str, loss: str, score: str | None, split: str):
    sel = ood[(ood["arch"] == arch) & (ood["loss"] == loss) & (ood["split"] == split)]
    if score is not None:
        sel = sel[sel["score"] == score]
    if sel.empty:
        _require(ood, "arch", [arch], "ood", "architecture")
        _require(ood, "loss", [loss], "ood", "loss")
        if score is not None:
            _require(ood, "score", [score], "ood", "score")
        raise ValueError(
            f"The ood frame has no {split}-split rows for loss {loss!r}"
            + (f" with score {score!r}" if score is not None else "")
            + f" on architecture {arch!r}."
        )
    return sel


def _check_complete_sets(sel: pd.DataFrame, what: str) -> None:
    """Every seed must cover the same OOD sets, or the per-seed averages are not comparable."""
    sets = set(sel["ood_set"].unique())
    for seed, g in sel.groupby("seed"):
        missing = sorted(sets - set(g["ood_set"]))
        if missing:
            raise ValueError(f"The ood frame lacks OOD set(s) {missing} for {what}, seed {seed}.")


def seed_average(
    ood: pd.DataFrame,
    arch: str,
    loss: str,
    score: str,
    metric: str,
    *,
    split: str = "test",
    scale: float = 100.0,
    ood_set: str | None = None,
) -> pd.Series:
    """Per-seed value of an OOD metric averaged over the OOD sets of ``split``.

    ``metric`` is an input column of ``ood`` (``fpr95``, ``auroc``, ``aupr_in``, ...). With
    ``ood_set`` only that set is used. Returns a Series indexed by seed.
    """
    sel = _ood_rows(ood, arch, loss, score, split)
    if ood_set is not None:
        sel = sel[sel["ood_set"] == ood_set]
        if sel.empty:
            raise ValueError(
                f"The ood frame has no rows for OOD set {ood_set!r} "
                f"(loss {loss!r}, score {score!r}, architecture {arch!r})."
            )
    _check_unique(sel, ["seed", "ood_set"], "ood")
    _check_complete_sets(sel, f"loss {loss!r}, score {score!r}, architecture {arch!r}")
    return sel.groupby("seed")[metric].mean().sort_index().astype(float) * scale


def summarise(values: pd.Series) -> tuple[float, float, int]:
    """(mean, sample std with ddof=1 or NaN for one seed, number of seeds)."""
    v = pd.Series(values, dtype=float).dropna()
    n = int(v.size)
    if n == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), (float(v.std(ddof=1)) if n > 1 else math.nan), n


def _cells(values: dict[str, pd.Series]) -> dict:
    """``{metric: per-seed Series}`` -> ``{metric_mean, metric_std, ..., n_seeds}``."""
    out, seeds = {}, set()
    for name, series in values.items():
        mean, std, _ = summarise(series)
        out[f"{name}_mean"], out[f"{name}_std"] = mean, std
        seeds |= set(pd.Series(series).dropna().index)
    out["n_seeds"] = len(seeds)
    return out


def _frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["n_seeds"] = df["n_seeds"].astype("int64")
    return df.reset_index(drop=True)


def _ood_cells(ood, arch, loss, score, *, ood_set=None) -> dict:
    return _cells(
        {
            name: seed_average(ood, arch, loss, score, col, ood_set=ood_set)
            for name, col in OOD_METRICS.items()
        }
    )


def _test_sets(ood: pd.DataFrame, arch: str, losses: Sequence[str], score: str) -> list[str]:
    sets = set()
    for loss in losses:
        sets |= set(_ood_rows(ood, arch, loss, score, "test")["ood_set"])
    return sorted(sets)


# --------------------------------------------------------------------------- the tables
def table1(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 1: MSP on the main architecture, CE vs LogitNorm, per OOD test set + average."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    sets = _test_sets(ood, arch, losses, "msp")
    rows = []
    for row in [*sets, "average"]:
        for loss in losses:
            cells = _ood_cells(ood, arch, loss, "msp", ood_set=None if row == "average" else row)
            rows.append({"row": row, "loss": loss, **cells})
    return _frame(rows)


def table2(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 2: each OOD score in ``spec['scores']``, CE vs LogitNorm, OOD-set averages."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    _require(ood, "score", list(spec["scores"]), "ood", "score(s)")
    rows = [
        {"row": score, "loss": loss, **_ood_cells(ood, arch, loss, score)}
        for score in spec["scores"]
        for loss in losses
    ]
    return _frame(rows)


def table3(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 3: each architecture of ``spec['arch_table']``: ID accuracy and MSP averages."""
    runs, ood = study_frames(runs, ood, spec)
    archs, losses = list(spec["arch_table"]), [spec["baseline"], spec["method"]]
    _require(runs, "arch", archs, "runs", "architecture(s)")
    _require(ood, "arch", archs, "ood", "architecture(s)")
    rows = []
    for arch in archs:
        for loss in losses:
            acc = seed_values(runs, arch, loss, "accuracy", scale=100.0)
            ood_vals = {n: seed_average(ood, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
            rows.append({"row": arch, "loss": loss, **_cells({"accuracy": acc, **ood_vals})})
    return _frame(rows)


def table4(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 4: ECE (%, 15 bins) without / with temperature scaling, and the fitted T.

    Rows ``w/o TS`` and ``w/ TS`` as in the paper; ``temperature`` is NaN in the ``w/o TS``
    row (no temperature is fitted there).
    """
    runs, _ = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    _require(runs, "loss", losses, "runs", "loss(es)")
    rows = []
    for loss in losses:
        nan = pd.Series(dtype=float)
        rows.append(
            {
                "row": "w/o TS",
                "loss": loss,
                **_cells(
                    {"ece": seed_values(runs, arch, loss, "ece", scale=100.0), "temperature": nan}
                ),
            }
        )
    for loss in losses:
        rows.append(
            {
                "row": "w/ TS",
                "loss": loss,
                **_cells(
                    {
                        "ece": seed_values(runs, arch, loss, "ece_ts", scale=100.0),
                        "temperature": seed_values(runs, arch, loss, "temperature"),
                    }
                ),
            }
        )
    return _frame(rows)


def _norm_ood(ood: pd.DataFrame, arch: str, loss: str, ood_set: str) -> pd.Series:
    sel = _ood_rows(ood, arch, loss, None, "test")
    sel = sel[sel["ood_set"] == ood_set]
    if sel.empty:
        raise ValueError(
            f"The ood frame has no test rows for OOD set {ood_set!r} "
            f"(loss {loss!r}, architecture {arch!r})."
        )
    # the logit norm is a property of the model and the set; it repeats across scores
    return sel.groupby("seed")["logit_norm_ood"].mean().sort_index().astype(float)


def table5(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 5: CE, LogitPenalty, LogitNorm: MSP averages and L2 logit norms (ID / OOD set).

    ``norm_id`` is the mean L2 logit norm on the ID test split (``runs.logit_norm_id``),
    ``norm_ood`` the one on ``spec['norm_ood_set']`` (named in the ``norm_ood_set`` column).
    """
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    losses = [spec["baseline"], spec["penalty"], spec["method"]]
    _require(runs, "loss", losses, "runs", "loss(es)")
    _require(ood, "loss", losses, "ood", "loss(es)")
    rows = []
    for loss in losses:
        vals = {n: seed_average(ood, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
        vals["norm_id"] = seed_values(runs, arch, loss, "logit_norm_id")
        vals["norm_ood"] = _norm_ood(ood, arch, loss, spec["norm_ood_set"])
        rows.append(
            {"row": "average", "loss": loss, "norm_ood_set": spec["norm_ood_set"], **_cells(vals)}
        )
    return _frame(rows)


def table6(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 6: GODIN (its own score) vs LogitNorm with ``spec['godin_compare_score']``."""
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    pairs = [(spec["godin"], "godin"), (spec["method"], spec["godin_compare_score"])]
    _require(ood, "loss", [p[0] for p in pairs], "ood", "loss(es)")
    rows = [
        {"row": "average", "loss": loss, "score": score, **_ood_cells(ood, arch, loss, score)}
        for loss, score in pairs
    ]
    return _frame(rows)


def _ablation_losses(ood: pd.DataFrame, spec: dict) -> list[str]:
    """Loss-variant names of the tau ablation (numbers are matched on the method's tau)."""
    arch, names = spec["main_arch"], []
    for entry in spec["tau_ablation"]:
        if isinstance(entry, str):
            names.append(entry)
            continue
        fam = ood.loc[ood["loss"] == spec["method"], "loss_family"]
        family = fam.iloc[0] if len(fam) else "logitnorm"
        sel = ood[
            (ood["arch"] == arch)
            & (ood["loss_family"] == family)
            & np.isclose(ood["tau"].astype(float), float(entry))
        ]
        if sel.empty:
            raise ValueError(
                f"The ood frame has no LogitNorm runs with tau {entry:g} on architecture {arch!r}."
            )
        names.append(sorted(sel["loss"].unique())[0])
    return names


def tau_ablation(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Fig. 5 data: per tau variant, MSP FPR95 (%) averaged over test sets and over val sets.

    Columns: ``loss, tau, fpr95_mean, fpr95_std, val_fpr95_mean, val_fpr95_std, n_seeds,
    selected`` (``selected`` marks the tau with the lowest mean validation FPR95, the paper's
    selection rule; ties go to the smaller tau). Sorted by tau.
    """
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    losses = _ablation_losses(ood, spec)
    _require(ood, "loss", losses, "ood", "tau-ablation loss(es)")
    rows = []
    for loss in losses:
        taus = ood.loc[(ood["loss"] == loss) & (ood["arch"] == arch), "tau"].astype(float)
        taus = taus.dropna().unique()
        if len(taus) != 1:
            raise ValueError(f"The ood frame has no single tau for loss {loss!r} (found {taus}).")
        vals = {
            "fpr95": seed_average(ood, arch, loss, "msp", "fpr95"),
            "val_fpr95": seed_average(ood, arch, loss, "msp", "fpr95", split="val"),
        }
        rows.append({"loss": loss, "tau": float(taus[0]), **_cells(vals)})
    df = _frame(rows).sort_values("tau", kind="stable").reset_index(drop=True)
    best = df["val_fpr95_mean"].idxmin() if df["val_fpr95_mean"].notna().any() else None
    df["selected"] = df.index == best
    return df


TABLES = {
    "table1": table1,
    "table2": table2,
    "table3": table3,
    "table4": table4,
    "table5": table5,
    "table6": table6,
}


# --------------------------------------------------------------------------- markdown
def _fmt_cell(mean: float, std: float) -> str:
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


def _metric_names(df: pd.DataFrame) -> list[str]:
    return [
        c[: -len("_mean")]
        for c in df.columns
        if c.endswith("_mean") and f"{c[: -len('_mean')]}_std" in df.columns
    ]


def render_markdown(df: pd.DataFrame, title: str) -> str:
    """A markdown table: key columns as text, each metric as "mean ± std" (2 decimals)."""
    metrics = _metric_names(df)
    paired = {f"{m}_{s}" for m in metrics for s in ("mean", "std")}
    keys = [c for c in df.columns if c not in paired and c not in ("n_seeds", "selected")]
    extra = [c for c in ("selected", "n_seeds") if c in df.columns]
    header = keys + [METRIC_LABELS.get(m, m) for m in metrics] + extra
    lines = [
        f"### {title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * len(keys) + ["---:"] * (len(metrics) + len(extra))) + "|",
    ]
    for _, r in df.iterrows():
        cells = [_fmt_key(r[k]) for k in keys]
        cells += [_fmt_cell(r[f"{m}_mean"], r[f"{m}_std"]) for m in metrics]
        cells += [_fmt_key(bool(r[c])) if c == "selected" else str(int(r[c])) for c in extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
