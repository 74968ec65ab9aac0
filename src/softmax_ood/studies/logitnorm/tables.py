"""The LogitNorm paper's Tables 1-9 (Wei et al. 2022) rebuilt from the study's long frames
(Tables 7-9, its appendix E: Tables 2, 3 and 5/6 per OOD test set).

Inputs are the aggregated ``runs`` and ``ood`` frames (see :mod:`softmax_ood.aggregate`; all
rates are fractions) and the study spec (the ``logitnorm`` config section with the tau-ablation
loss variants spelled out). Every table is a flat ("tidy wide") frame: string key columns
(``row``, ``loss`` and, where it varies, ``score``), then numeric ``<metric>_mean`` /
``<metric>_std`` pairs and ``n_seeds``. Percent metrics (FPR95, AUROC, AUPR, accuracy, ECE) are
multiplied by 100 like the paper; temperatures and logit norms are not.

Seed handling: a metric is first averaged over the OOD *test* sets within each seed (the paper's
"average" row), then summarised over seeds as mean and sample std (``ddof=1``; NaN with a single
seed, rendered as "± n/a"). Validation OOD sets (``split == "val"``) never enter a test table.

Near and far OOD: the sets in ``spec['near_ood']`` (held-out classes) are never averaged with the
far sets. Every OOD table is computed once on the far sets (the paper's "average") and once on
the near sets, with a ``shift`` column (``far`` / ``near``).

The paper's "AUPR" is AUPR-In (average precision with ID as the positive class); here it is the
``aupr`` column, computed from the ``aupr_in`` input column.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...analysis.seeds import (
    cells,
    frame,
    ood_rows,
    require,
    seed_average,
    seed_values,
    study_frames,
)
from .ablation import OOD_METRICS, tau_ablation
from .shared import trained_on_main
from .shifts import far_near

__all__ = [
    "TABLES",
    "premise",
    "table1",
    "table2",
    "table3",
    "table4",
    "table5",
    "table6",
    "table7",
    "table8",
    "table9",
    "tau_ablation",
]


def _by_shift(table):
    """``table`` on the far sets, then on the near sets, stacked with a ``shift`` column."""

    def wrapped(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
        parts = [table(runs, sub, spec).assign(shift=s) for s, sub in far_near(ood, spec).items()]
        out = pd.concat(parts, ignore_index=True)
        return out[["shift"] + [c for c in out.columns if c != "shift"]]

    wrapped.__name__, wrapped.__doc__ = table.__name__, table.__doc__
    return wrapped


def _ood_cells(ood, arch, loss, score, *, ood_set=None) -> dict:
    return cells(
        {
            name: seed_average(ood, arch, loss, score, col, ood_set=ood_set)
            for name, col in OOD_METRICS.items()
        }
    )


def _test_sets(ood: pd.DataFrame, arch: str, losses: Sequence[str], score: str) -> list[str]:
    sets = set()
    for loss in losses:
        sets |= set(ood_rows(ood, arch, loss, score, "test")["ood_set"])
    return sorted(sets)


# --------------------------------------------------------------------------- the tables
def table1(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 1: MSP on the main architecture, CE vs LogitNorm, per OOD test set, the average
    over the headline far sets (the paper's "average"), then each near set and each trivial far
    set the selection-half floor test left out (``shift`` column: far / near / not kept; never
    averaged). Column ``fpr95_ref``: FPR95 in the reference code's convention (the point
    closest to 95 % TPR), where the frame has it."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    parts = far_near(ood, spec)
    rows = []
    for shift, sub in parts.items():
        sets = _test_sets(sub, arch, losses, "msp")
        for row in [*sets, "average"] if shift == "far" else sets:
            for loss in losses:
                one = None if row == "average" else row
                ref = {}
                if "fpr95_ref" in sub.columns:
                    ref = cells(
                        {
                            "fpr95_ref": seed_average(
                                sub, arch, loss, "msp", "fpr95_ref", ood_set=one
                            )
                        }
                    )
                    ref.pop("n_seeds")
                rows.append(
                    {
                        # a far set the selection-half floor test left out is "not kept"
                        # (.floor.set_status names the ones the floor solves)
                        "shift": "not kept" if shift == "trivial" else shift,
                        "row": row,
                        "loss": loss,
                        **_ood_cells(sub, arch, loss, "msp", ood_set=one),
                        **ref,
                    }
                )
    return frame(rows)


def table2(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 2: each OOD score in ``spec['scores']``, CE vs LogitNorm, OOD-set averages."""
    runs, ood = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    require(ood, "score", list(spec["scores"]), "ood", "score(s)")
    rows = [
        {"row": score, "loss": loss, **_ood_cells(ood, arch, loss, score)}
        for score in spec["scores"]
        for loss in losses
    ]
    return frame(rows)


def table3(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 3: each architecture of ``spec['arch_table']``: ID accuracy and MSP averages."""
    runs, ood = study_frames(runs, ood, spec)
    archs, losses = list(spec["arch_table"]), [spec["baseline"], spec["method"]]
    require(runs, "arch", archs, "runs", "architecture(s)")
    require(ood, "arch", archs, "ood", "architecture(s)")
    rows = []
    for arch in archs:
        for loss in losses:
            acc = seed_values(runs, arch, loss, "accuracy", scale=100.0)
            ood_vals = {n: seed_average(ood, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
            rows.append({"row": arch, "loss": loss, **cells({"accuracy": acc, **ood_vals})})
    return frame(rows)


def table4(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 4: ECE (%, 15 bins) without / with temperature scaling, and the fitted T.

    Rows ``w/o TS`` and ``w/ TS`` as in the paper; ``temperature`` is NaN in the ``w/o TS``
    row (no temperature is fitted there).
    """
    runs, _ = study_frames(runs, ood, spec)
    arch, losses = spec["main_arch"], [spec["baseline"], spec["method"]]
    require(runs, "loss", losses, "runs", "loss(es)")
    rows = []
    for loss in losses:
        nan = pd.Series(dtype=float)
        rows.append(
            {
                "row": "w/o TS",
                "loss": loss,
                **cells(
                    {"ece": seed_values(runs, arch, loss, "ece", scale=100.0), "temperature": nan}
                ),
            }
        )
    for loss in losses:
        rows.append(
            {
                "row": "w/ TS",
                "loss": loss,
                **cells(
                    {
                        "ece": seed_values(runs, arch, loss, "ece_ts", scale=100.0),
                        "temperature": seed_values(runs, arch, loss, "temperature"),
                    }
                ),
            }
        )
    return frame(rows)


def _norm_ood(ood: pd.DataFrame, arch: str, loss: str, ood_set: str) -> pd.Series:
    sel = ood_rows(ood, arch, loss, None, "test")
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
    # LogitPenalty only where the config trains it (not on the 28x28 default)
    losses = [loss for loss in losses if loss in trained_on_main(spec)]
    require(runs, "loss", losses, "runs", "loss(es)")
    require(ood, "loss", losses, "ood", "loss(es)")
    rows = []
    for shift, sub in far_near(ood, spec).items():
        for loss in losses:
            vals = {n: seed_average(sub, arch, loss, "msp", c) for n, c in OOD_METRICS.items()}
            vals["norm_id"] = seed_values(runs, arch, loss, "logit_norm_id")
            vals["norm_ood"] = _norm_ood(ood, arch, loss, spec["norm_ood_set"])
            rows.append(
                {
                    "shift": shift,
                    "row": "average",
                    "loss": loss,
                    "norm_ood_set": spec["norm_ood_set"],
                    **cells(vals),
                }
            )
    return frame(rows)


def table6(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 6: GODIN (its own score) vs LogitNorm with MSP (the paper's text) and with
    ``spec['godin_compare_score']`` (its table's caption: ODIN)."""
    runs, ood = study_frames(runs, ood, spec)
    arch = spec["main_arch"]
    if spec["godin"] not in trained_on_main(spec):
        return frame(
            [
                {
                    "row": "not run",
                    "loss": spec["godin"],
                    "score": "godin",
                    "n_seeds": 0,
                    "note": "GODIN is not trained on this config (logitnorm.main_losses, a "
                    "declared departure); config/digits.yaml trains it",
                }
            ]
        )
    pairs = [(spec["godin"], "godin"), (spec["method"], "msp")]
    if spec["godin_compare_score"] != "msp":
        pairs.append((spec["method"], spec["godin_compare_score"]))
    require(ood, "loss", [p[0] for p in pairs], "ood", "loss(es)")
    rows = [
        {"row": "average", "loss": loss, "score": score, **_ood_cells(ood, arch, loss, score)}
        for loss, score in pairs
    ]
    return frame(rows)


# ---------------------------------------------------- the per-set tables (the paper's App. E)
def _per_set(ood: pd.DataFrame, arch: str, pairs, spec: dict) -> list[dict]:
    """Rows of a per-OOD-set table on ``arch``: each OOD test set of each shift (far; near; the
    far sets the floor solves, ``shift`` "not kept" as in Table 1), then each ``(loss, score)``
    of ``pairs``: the same per-seed values the averaged tables summarise, one set at a time."""
    rows = []
    for shift, sub in far_near(ood, spec).items():
        for name in sorted(set(sub.loc[sub["split"] == "test", "ood_set"])):
            for loss, score in pairs:
                rows.append(
                    {
                        "shift": "not kept" if shift == "trivial" else shift,
                        "row": name,
                        "loss": loss,
                        "score": score,
                        **_ood_cells(sub, arch, loss, score, ood_set=name),
                    }
                )
    return rows


def table7(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 7 (App. E): Table 2 per OOD test set: each score of ``spec['scores']``, CE vs
    LogitNorm, on the main architecture."""
    runs, ood = study_frames(runs, ood, spec)
    losses = [spec["baseline"], spec["method"]]
    require(ood, "score", list(spec["scores"]), "ood", "score(s)")
    pairs = [(loss, score) for score in spec["scores"] for loss in losses]
    return frame(_per_set(ood, spec["main_arch"], pairs, spec))


def table8(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 8 (App. E): Table 3 per OOD test set: MSP, CE vs LogitNorm, on each architecture
    of ``spec['arch_table']`` (column ``arch``; the paper's table omits its main WRN, printed in
    Table 7's MSP rows, ours keeps every architecture Table 3 has)."""
    runs, ood = study_frames(runs, ood, spec)
    archs, losses = list(spec["arch_table"]), [spec["baseline"], spec["method"]]
    require(ood, "arch", archs, "ood", "architecture(s)")
    rows = []
    for arch in archs:
        for r in _per_set(ood, arch, [(loss, "msp") for loss in losses], spec):
            del r["score"]  # MSP throughout, as Table 3
            rows.append({"shift": r.pop("shift"), "arch": arch, **r})
    return frame(rows)


def table9(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """Table 9 (App. E): Tables 5 and 6 per OOD test set, on the main architecture: CE,
    LogitPenalty and LogitNorm with MSP (Table 5), GODIN with its own score and LogitNorm with
    ``spec['godin_compare_score']`` (Table 6). The paper prints LogitPenalty and GODIN only;
    CE and LogitNorm stand beside them here. A loss the config does not train has one row
    ``not run`` saying so (column ``note``); the 28x28 default trains CE and LogitNorm only."""
    runs, ood = study_frames(runs, ood, spec)
    trained = trained_on_main(spec)
    base, method, penalty, godin = (spec[k] for k in ("baseline", "method", "penalty", "godin"))
    pairs = [(base, "msp"), (penalty, "msp"), (method, "msp")]
    if godin in trained:
        pairs += [(godin, "godin"), (method, spec["godin_compare_score"])]
    pairs = [p for p in dict.fromkeys(pairs) if p[0] in trained]
    require(ood, "loss", [p[0] for p in pairs], "ood", "loss(es)")
    rows = [{**r, "note": ""} for r in _per_set(ood, spec["main_arch"], pairs, spec)]
    for loss, score in ((penalty, "msp"), (godin, "godin")):
        if loss not in trained:
            rows.append(
                {
                    "shift": "",
                    "row": "not run",
                    "loss": loss,
                    "score": score,
                    "n_seeds": 0,
                    "note": f"{loss} is not trained on this config (logitnorm.main_losses, a "
                    "declared departure); config/digits.yaml trains it",
                }
            )
    return frame(rows)


def premise(runs: pd.DataFrame, ood: pd.DataFrame, spec: dict) -> pd.DataFrame:
    """The study's premise beside Table 1, per recipe (headline first, then the robustness
    variants) and per seed: is the CE baseline overconfident (temperature fitted on the
    validation split > 1) and how large are its logit norms (ID test, ``norm_ood_set``)? Next
    to it, CE and LogitNorm's MSP FPR95 averaged over the far sets and on the near sets, and
    their accuracies. Rows ``seed <k>`` hold one seed (std n/a), row ``mean`` all seeds."""
    arch, ce, ln = spec["main_arch"], spec["baseline"], spec["method"]
    rows = []
    headline = spec.get("recipe")
    for recipe in [headline, *spec.get("robustness_recipes", [])]:
        s = {**spec, "recipe": recipe}
        r, o = study_frames(runs, ood, s)
        parts = far_near(o, s)
        vals = {
            "ce_temperature": seed_values(r, arch, ce, "temperature"),
            "ce_norm_id": seed_values(r, arch, ce, "logit_norm_id"),
            "ce_norm_ood": _norm_ood(o, arch, ce, spec["norm_ood_set"]),
            "ln_norm_id": seed_values(r, arch, ln, "logit_norm_id"),
            "ce_accuracy": seed_values(r, arch, ce, "accuracy", scale=100.0),
            "ln_accuracy": seed_values(r, arch, ln, "accuracy", scale=100.0),
        }
        for shift, sub in parts.items():
            for key, loss in (("ce", ce), ("ln", ln)):
                vals[f"{key}_fpr95_{shift}"] = seed_average(sub, arch, loss, "msp", "fpr95")
        label = str(recipe) if recipe == headline else f"{recipe} (robustness variant)"
        rows.append({"recipe": label, "row": "mean", **cells(vals)})
        for seed in sorted(vals["ce_temperature"].index):
            one = {k: v.loc[[seed]] if seed in v.index else v.iloc[:0] for k, v in vals.items()}
            rows.append({"recipe": label, "row": f"seed {seed}", **cells(one)})
    return frame(rows)


TABLES = {
    "tau_ablation": _by_shift(tau_ablation),
    "table1": table1,
    "table2": _by_shift(table2),
    "table3": _by_shift(table3),
    "table4": table4,
    "table5": table5,
    "table6": _by_shift(table6),
    "table7": table7,
    "table8": table8,
    "table9": table9,
    "premise": premise,
}

#: Column headers of the premise table.
PREMISE_LABELS = {
    "ce_temperature": "CE fitted T (>1 = overconfident)",
    "ce_norm_id": "CE logit norm, ID",
    "ce_norm_ood": "CE logit norm, OOD",
    "ln_norm_id": "LogitNorm raw logit norm, ID",
    "ce_accuracy": "CE accuracy (%)",
    "ln_accuracy": "LogitNorm accuracy (%)",
    "ce_fpr95_far": "CE FPR95 far (%)",
    "ln_fpr95_far": "LogitNorm FPR95 far (%)",
    "ce_fpr95_near": "CE FPR95 near (%)",
    "ln_fpr95_near": "LogitNorm FPR95 near (%)",
    "ce_fpr95_trivial": "CE FPR95 sets not kept (%)",
    "fpr95_ref": "FPR95 (%), reference code's convention (TPR closest to 95 %)",
    "ln_fpr95_trivial": "LogitNorm FPR95 sets not kept (%)",
}


def _of_frames(table):
    """``table(runs, ood, spec)`` as a function of the frames (the shared table rule's form)."""

    def build(frames, spec: dict) -> pd.DataFrame:
        return table(frames["runs"], frames["ood"], spec)

    return build


#: Each table as a function of the study's frames and section (``study.table_job``).
FRAME_TABLES = {name: _of_frames(table) for name, table in TABLES.items()}
