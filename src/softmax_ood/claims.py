"""Paper claims tested on a study's results: one row per claim with a statistic and a verdict.

A claims table has the columns ``paper, claim_id, claim, statistic, value, detail, holds``.
Each study contributes an evaluator ``(runs, ood, curves, spec) -> DataFrame`` to
:data:`CLAIM_SETS`; evaluators build :class:`Claim` rows and call :func:`claims_frame`.

Decision rule for comparative claims ("A lowers X vs B"): the paired per-seed differences
``B - A`` (seeds present for both) must have a positive mean and a one-sided paired t-test
(``scipy.stats.ttest_rel(B, A, alternative="greater")``) must give ``p < alpha``. With a single
common seed there is no test: the claim holds iff the one difference is positive, and the detail
says so. Seeds enter as pairs, so a claim never rests on one run unless only one seed exists.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd
from scipy import stats

from .tables import seed_average, seed_values, study_frames, summarise

__all__ = [
    "CLAIM_SETS",
    "COLUMNS",
    "Claim",
    "PairedComparison",
    "claims_frame",
    "evaluate_logitnorm_claims",
    "paired_greater",
    "render_claims_markdown",
]

COLUMNS = ["paper", "claim_id", "claim", "statistic", "value", "detail", "holds"]
PAPER = "Wei et al. 2022 (LogitNorm)"


@dataclass(frozen=True)
class Claim:
    """One tested claim (``value`` in the unit the ``statistic`` text names)."""

    id: str
    paper: str
    text: str
    statistic: str
    value: float
    detail: str
    holds: bool


def claims_frame(rows: Iterable[Claim]) -> pd.DataFrame:
    """Claims -> the shared claims-table frame (columns :data:`COLUMNS`)."""
    recs = [
        {
            "paper": c.paper,
            "claim_id": c.id,
            "claim": c.text,
            "statistic": c.statistic,
            "value": float(c.value),
            "detail": c.detail,
            "holds": bool(c.holds),
        }
        for c in rows
    ]
    df = pd.DataFrame(recs, columns=COLUMNS)
    df["value"] = df["value"].astype("float64")
    df["holds"] = df["holds"].astype(bool)
    return df


@dataclass(frozen=True)
class PairedComparison:
    """``high - low`` over paired seeds: mean difference, p-value, verdict and a detail text."""

    mean_diff: float
    p_value: float
    n: int
    holds: bool
    detail: str


def _fmt_ms(values: pd.Series, unit: str = "") -> str:
    mean, std, _ = summarise(values)
    s = "n/a" if math.isnan(std) else f"{std:.2f}"
    return f"{mean:.2f} ± {s}{unit}"


def paired_greater(
    high: pd.Series,
    low: pd.Series,
    alpha: float,
    *,
    names: tuple[str, str] = ("A", "B"),
    percent: bool = False,
) -> PairedComparison:
    """Is ``high`` greater than ``low`` over paired seeds (indexes are seeds)?

    ``percent`` labels the values "%" and their difference "pp" in the detail text. When all
    paired differences are equal (zero variance) the t statistic is +-infinite: p is taken as 0
    for a positive and 1 for a non-positive difference, and the detail says so.
    """
    seeds = sorted(set(high.dropna().index) & set(low.dropna().index))
    if not seeds:
        raise ValueError(f"{names[0]} and {names[1]} share no seed, so no paired comparison.")
    a, b = high.loc[seeds].astype(float), low.loc[seeds].astype(float)
    diff = a - b
    mean_diff, n = float(diff.mean()), len(seeds)
    unit, dunit = (" %", " pp") if percent else ("", "")
    base = (
        f"{names[0]} {_fmt_ms(a, unit)} vs {names[1]} {_fmt_ms(b, unit)}; "
        f"paired difference {mean_diff:.2f}{dunit} over {n} seed(s)"
    )
    if n == 1:
        return PairedComparison(mean_diff, math.nan, 1, mean_diff > 0, base + "; no test, 1 seed")
    spread = float(diff.max() - diff.min())
    if spread <= 1e-9 * max(1.0, abs(mean_diff)):
        p = 0.0 if mean_diff > 0 else 1.0
        ptxt = f"{p:g} (all paired differences equal)"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(stats.ttest_rel(a.to_numpy(), b.to_numpy(), alternative="greater").pvalue)
        ptxt = "n/a" if math.isnan(p) else f"{p:.3g}"
    holds = bool(mean_diff > 0 and not math.isnan(p) and p < alpha)
    return PairedComparison(
        mean_diff, p, n, holds, base + f"; one-sided paired t-test p = {ptxt} (alpha {alpha:g})"
    )


def _avg_fpr(ood, arch, loss, score) -> pd.Series:
    return seed_average(ood, arch, loss, score, "fpr95")


def _ratio_growth(curves: pd.DataFrame, arch: str, loss: str, column: str) -> tuple[float, str]:
    sel = curves[(curves["arch"] == arch) & (curves["loss"] == loss)]
    if sel.empty:
        raise ValueError(
            f"The curves frame has no rows for loss {loss!r} on architecture {arch!r}."
        )
    first, last = int(sel["epoch"].min()), int(sel["epoch"].max())
    per_epoch = sel.groupby("epoch")[column].mean()
    ratio = float(per_epoch.loc[last] / per_epoch.loc[first])
    n = sel.loc[sel["epoch"] == last, "seed"].nunique()
    return ratio, (
        f"{loss}: mean {column} {per_epoch.loc[first]:.3g} at epoch {first} -> "
        f"{per_epoch.loc[last]:.3g} at epoch {last} (ratio {ratio:.3g}, {n} seed(s))"
    )


def evaluate_logitnorm_claims(
    runs: pd.DataFrame, ood: pd.DataFrame, curves: pd.DataFrame, spec: dict
) -> pd.DataFrame:
    """The LogitNorm paper's claims (C1-C8, see the module docstring for the decision rule)."""
    runs, ood = study_frames(runs, ood, spec)
    arch, alpha = spec["main_arch"], float(spec["alpha"])
    ce, ln, pen, godin = spec["baseline"], spec["method"], spec["penalty"], spec["godin"]
    rows: list[Claim] = []

    def claim(cid, text, statistic, value, detail, holds):
        rows.append(Claim(cid, PAPER, text, statistic, float(value), detail, bool(holds)))

    # C1: headline FPR95 with MSP
    c1 = paired_greater(
        _avg_fpr(ood, arch, ce, "msp"),
        _avg_fpr(ood, arch, ln, "msp"),
        alpha,
        names=(ce, ln),
        percent=True,
    )
    # C2: similar accuracy
    tol = float(spec["accuracy_tolerance"])
    acc_ce = seed_values(runs, arch, ce, "accuracy", scale=100.0)
    acc_ln = seed_values(runs, arch, ln, "accuracy", scale=100.0)
    gap = abs(acc_ce.mean() - acc_ln.mean())
    c2_holds = gap <= tol * 100.0 + 1e-9
    c2_detail = (
        f"accuracy {ce} {_fmt_ms(acc_ce, ' %')} vs {ln} {_fmt_ms(acc_ln, ' %')}; "
        f"tolerance {tol * 100:.2f} pp"
    )
    claim(
        "headline",
        f"LogitNorm lowers average FPR95 vs CE at similar accuracy ({arch}, MSP)",
        "mean paired FPR95 difference CE - LogitNorm (pp), averaged over OOD test sets",
        c1.mean_diff,
        f"C1: {'holds' if c1.holds else 'fails'}; C2: {'holds' if c2_holds else 'fails'}",
        c1.holds and c2_holds,
    )
    claim(
        "C1",
        f"LogitNorm lowers average FPR95 (MSP) vs CE on {arch}",
        "mean paired FPR95 difference CE - LogitNorm (pp)",
        c1.mean_diff,
        c1.detail,
        c1.holds,
    )
    claim(
        "C2",
        f"LogitNorm keeps ID accuracy similar to CE on {arch}",
        "|mean accuracy CE - mean accuracy LogitNorm| (pp)",
        gap,
        c2_detail,
        c2_holds,
    )

    # C3: other scores
    for score in [s for s in spec["scores"] if s != "msp"]:
        c = paired_greater(
            _avg_fpr(ood, arch, ce, score),
            _avg_fpr(ood, arch, ln, score),
            alpha,
            names=(ce, ln),
            percent=True,
        )
        claim(
            f"C3-{score}",
            f"LogitNorm also lowers average FPR95 with the {score} score",
            f"mean paired FPR95 difference CE - LogitNorm, {score} (pp)",
            c.mean_diff,
            c.detail,
            c.holds,
        )

    # C4: calibration after temperature scaling
    c = paired_greater(
        seed_values(runs, arch, ce, "ece_ts", scale=100.0),
        seed_values(runs, arch, ln, "ece_ts", scale=100.0),
        alpha,
        names=(ce, ln),
        percent=True,
    )
    raw = (
        f"; without TS: {ce} {_fmt_ms(seed_values(runs, arch, ce, 'ece', scale=100.0), ' %')}"
        f", {ln} {_fmt_ms(seed_values(runs, arch, ln, 'ece', scale=100.0), ' %')}"
    )
    claim(
        "C4",
        "With temperature scaling, LogitNorm is better calibrated (lower ECE) than CE",
        "mean paired ECE-after-TS difference CE - LogitNorm (pp)",
        c.mean_diff,
        c.detail + raw,
        c.holds,
    )

    # C5: logit penalty
    n_ce = seed_values(runs, arch, ce, "logit_norm_id")
    n_pen = seed_values(runs, arch, pen, "logit_norm_id")
    c = paired_greater(n_ce, n_pen, alpha, names=(ce, pen))
    claim(
        "C5-norm",
        "LogitPenalty shrinks the ID logit norm relative to CE",
        "mean paired ID logit-norm difference CE - LogitPenalty",
        c.mean_diff,
        c.detail,
        c.holds,
    )
    c = paired_greater(
        _avg_fpr(ood, arch, pen, "msp"),
        _avg_fpr(ood, arch, ln, "msp"),
        alpha,
        names=(pen, ln),
        percent=True,
    )
    claim(
        "C5",
        "LogitPenalty does not match LogitNorm's average FPR95 (MSP)",
        "mean paired FPR95 difference LogitPenalty - LogitNorm (pp)",
        c.mean_diff,
        c.detail,
        c.holds,
    )

    # C6: GODIN
    cmp_score = spec["godin_compare_score"]
    c = paired_greater(
        _avg_fpr(ood, arch, godin, "godin"),
        _avg_fpr(ood, arch, ln, cmp_score),
        alpha,
        names=(f"{godin} (godin score)", f"{ln} ({cmp_score} score)"),
        percent=True,
    )
    claim(
        "C6",
        f"LogitNorm ({cmp_score} score) has lower average FPR95 than GODIN",
        "mean paired FPR95 difference GODIN - LogitNorm (pp)",
        c.mean_diff,
        c.detail,
        c.holds,
    )

    # C7: across architectures
    archs = list(spec["arch_table"])
    parts, n_ok = [], 0
    for a in archs:
        c = paired_greater(
            _avg_fpr(ood, a, ce, "msp"),
            _avg_fpr(ood, a, ln, "msp"),
            alpha,
            names=(ce, ln),
            percent=True,
        )
        n_ok += c.holds
        p = "no test" if math.isnan(c.p_value) else f"p = {c.p_value:.3g}"
        parts.append(f"{a}: {c.mean_diff:.2f} pp ({p}, {'holds' if c.holds else 'fails'})")
    claim(
        "C7",
        "LogitNorm lowers average FPR95 (MSP) on every architecture",
        f"number of architectures (of {len(archs)}) where the C1 rule holds",
        n_ok,
        "; ".join(parts),
        n_ok == len(archs),
    )

    # C8: Figure 1, CE logit norm grows during training
    r_ce, d_ce = _ratio_growth(curves, arch, ce, "logit_norm_id")
    _, d_ce_ood = _ratio_growth(curves, arch, ce, "logit_norm_ood")
    _, d_ln = _ratio_growth(curves, arch, ln, "logit_norm_id")
    claim(
        "C8",
        "Under CE the ID logit norm keeps growing during training (Fig. 1)",
        "last-epoch / first-epoch mean ID logit norm, CE",
        r_ce,
        f"{d_ce}; OOD monitor set: {d_ce_ood}; {d_ln}",
        r_ce > 1,
    )
    return claims_frame(rows)


CLAIM_SETS = {"logitnorm": evaluate_logitnorm_claims}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_claims_markdown(df: pd.DataFrame, title: str = "Claims") -> str:
    """The claims table as markdown (value with 3 significant digits, holds as yes/no)."""
    lines = [
        f"### {title}",
        "",
        "| paper | id | claim | statistic | value | holds | detail |",
        "|---|---|---|---|---:|---|---|",
    ]
    for _, r in df.iterrows():
        v = "n/a" if math.isnan(r["value"]) else f"{r['value']:.3g}"
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    r["paper"],
                    r["claim_id"],
                    r["claim"],
                    r["statistic"],
                    v,
                    "yes" if r["holds"] else "no",
                    r["detail"],
                )
            )
            + " |"
        )
    return "\n".join(lines) + "\n"
