"""The LogitNorm paper's claims (Wei et al. 2022), declared as data and measured on this run.

:func:`claim_specs` lists the claims (text, statistic, threshold, direction, test);
:func:`measure` computes each one's statistic from the study's frames; the shared engine
(:mod:`softmax_ood.analysis.claims`) judges them all with one rule. Comparative claims ("A lowers
X vs B") use per-seed values paired by seed and a one-sided paired t-test (p < alpha).

OOD averages are over the far sets (the paper's); the near sets (``spec['near_ood']``, held-out
classes) have their own claim row. The premise rows come first: when the CE baseline is not
overconfident (P1), the OOD comparisons read "cannot test" rather than "does not hold".
"""

from __future__ import annotations

import math

import pandas as pd

from ...analysis.claims import (
    ClaimSpec,
    Measurement,
    evaluate_claims,
    fmt_mean_std,
    paired,
)
from ...analysis.seeds import seed_average, seed_values, study_frames
from .shifts import far_near

__all__ = ["PAPER", "claim_specs", "evaluate_logitnorm_claims", "measure"]

PAPER = "Wei et al. 2022 (LogitNorm)"


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


def claim_specs(spec: dict) -> list[ClaimSpec]:
    """The claims, as data (thresholds in the statistic's unit)."""
    arch, tol = spec["main_arch"], float(spec["accuracy_tolerance"]) * 100.0
    archs, cmp_score = list(spec["arch_table"]), spec["godin_compare_score"]
    diff = "mean paired {what} difference {a} - {b}"
    ood = ("P1",)  # the OOD comparisons assume the paper's regime: an overconfident baseline
    specs = [
        ClaimSpec(
            "P1",
            "Premise: the cross-entropy baseline is overconfident, as in the paper (its CE logit "
            "norm is 12.8 on CIFAR-10)",
            f"mean temperature fitted on the validation split, CE on {arch} (> 1 = overconfident)",
            threshold=1.0,
            direction=">",
            premise=True,
        ),
        ClaimSpec(
            "P2",
            "Premise: the CE baseline's logits are larger on ID than on OOD data (paper: 12.8 "
            "ID vs 10.9 OOD)",
            f"mean paired difference CE logit norm ID test - {spec['norm_ood_set']}",
            test="paired",
            premise=True,
        ),
        ClaimSpec(
            "headline",
            f"LogitNorm lowers average FPR95 vs CE at similar accuracy ({arch}, MSP)",
            "mean paired FPR95 difference CE - LogitNorm (pp), averaged over the far OOD sets",
            test="paired",
            all_of=("C1", "C2"),
            requires=ood,
        ),
        ClaimSpec(
            "C1",
            f"LogitNorm lowers average FPR95 (MSP) vs CE on {arch}",
            diff.format(what="FPR95", a="CE", b="LogitNorm") + " (pp)",
            test="paired",
            requires=ood,
        ),
        ClaimSpec(
            "C2",
            f"LogitNorm keeps ID accuracy similar to CE on {arch}",
            "|mean accuracy CE - mean accuracy LogitNorm| (pp)",
            threshold=tol,
            direction="<=",
        ),
    ]
    if spec.get("near_ood"):
        specs.append(
            ClaimSpec(
                "C1-near",
                f"LogitNorm also lowers FPR95 (MSP) on near OOD ({', '.join(spec['near_ood'])}; "
                "not in the paper)",
                diff.format(what="FPR95", a="CE", b="LogitNorm") + " on the near sets (pp)",
                test="paired",
                requires=ood,
            )
        )
    specs += [
        ClaimSpec(
            f"C3-{score}",
            f"LogitNorm also lowers average FPR95 with the {score} score",
            diff.format(what="FPR95", a="CE", b="LogitNorm") + f", {score} (pp)",
            test="paired",
            requires=ood,
        )
        for score in spec["scores"]
        if score != "msp"
    ]
    specs += [
        ClaimSpec(
            "C4",
            "With temperature scaling, LogitNorm is better calibrated (lower ECE) than CE",
            diff.format(what="ECE-after-TS", a="CE", b="LogitNorm") + " (pp)",
            test="paired",
        ),
        ClaimSpec(
            "C5-norm",
            "LogitPenalty shrinks the ID logit norm relative to CE",
            diff.format(what="ID logit-norm", a="CE", b="LogitPenalty"),
            test="paired",
        ),
        ClaimSpec(
            "C5",
            "LogitPenalty does not match LogitNorm's average FPR95 (MSP)",
            diff.format(what="FPR95", a="LogitPenalty", b="LogitNorm") + " (pp)",
            test="paired",
            requires=ood,
        ),
        ClaimSpec(
            "C6",
            f"LogitNorm ({cmp_score} score) has lower average FPR95 than GODIN",
            diff.format(what="FPR95", a="GODIN", b="LogitNorm") + " (pp)",
            test="paired",
            requires=ood,
        ),
        ClaimSpec(
            "C7",
            "LogitNorm lowers average FPR95 (MSP) on every architecture",
            f"number of architectures (of {len(archs)}) where the C1 rule holds",
            threshold=float(len(archs)),
            direction=">=",
            requires=ood,
        ),
        ClaimSpec(
            "C8",
            "Under CE the ID logit norm keeps growing during training (Fig. 1)",
            "last-epoch / first-epoch mean ID logit norm, CE",
            threshold=1.0,
            direction=">",
        ),
    ]
    return specs


def measure(runs: pd.DataFrame, ood: pd.DataFrame, curves: pd.DataFrame, spec: dict) -> dict:
    """Each claim's statistic (a :class:`Measurement`) by claim id."""
    runs, ood = study_frames(runs, ood, spec)
    parts = far_near(ood, spec)
    ood_all, ood = ood, parts["far"]
    arch, alpha = spec["main_arch"], float(spec["alpha"])
    ce, ln, pen, godin = spec["baseline"], spec["method"], spec["penalty"], spec["godin"]
    m: dict[str, Measurement] = {}
    temp = seed_values(runs, arch, ce, "temperature")
    norm = seed_values(runs, arch, ce, "logit_norm_id")
    m["P1"] = Measurement(
        float(temp.mean()),
        f"{ce} on {arch}: fitted T {fmt_mean_std(temp)} over {len(temp)} seeds (per seed "
        + ", ".join(f"{s}: {t:.2f}" for s, t in temp.items())
        + f"); ID logit norm {fmt_mean_std(norm)}",
    )
    norm_ood = (
        ood_all[(ood_all["arch"] == arch) & (ood_all["loss"] == ce)]
        .query("split == 'test' and ood_set == @spec['norm_ood_set']")
        .groupby("seed")["logit_norm_ood"]
        .mean()
    )
    m["P2"] = paired(norm, norm_ood, names=("ID", spec["norm_ood_set"]))

    def fpr_pair(a_loss, b_loss, score_a="msp", score_b=None, a=arch, names=None, sets=ood):
        return paired(
            _avg_fpr(sets, a, a_loss, score_a),
            _avg_fpr(sets, a, b_loss, score_b or score_a),
            names=names or (a_loss, b_loss),
            percent=True,
        )

    m["C1"] = fpr_pair(ce, ln)
    if "near" in parts:
        m["C1-near"] = fpr_pair(ce, ln, sets=parts["near"])
    tol = float(spec["accuracy_tolerance"])
    acc_ce = seed_values(runs, arch, ce, "accuracy", scale=100.0)
    acc_ln = seed_values(runs, arch, ln, "accuracy", scale=100.0)
    m["C2"] = Measurement(
        abs(acc_ce.mean() - acc_ln.mean()),
        f"accuracy {ce} {fmt_mean_std(acc_ce, ' %')} vs {ln} {fmt_mean_std(acc_ln, ' %')}; "
        f"tolerance {tol * 100:.2f} pp",
    )
    m["headline"] = Measurement(
        m["C1"].value, "needs C1 and C2; " + m["C1"].detail, m["C1"].p_value
    )
    for score in [s for s in spec["scores"] if s != "msp"]:
        m[f"C3-{score}"] = fpr_pair(ce, ln, score)
    c4 = paired(
        seed_values(runs, arch, ce, "ece_ts", scale=100.0),
        seed_values(runs, arch, ln, "ece_ts", scale=100.0),
        names=(ce, ln),
        percent=True,
    )
    raw = (
        f"; without TS: {ce} {fmt_mean_std(seed_values(runs, arch, ce, 'ece', scale=100.0), ' %')}"
        f", {ln} {fmt_mean_std(seed_values(runs, arch, ln, 'ece', scale=100.0), ' %')}"
    )
    m["C4"] = Measurement(c4.value, c4.detail + raw, c4.p_value)
    m["C5-norm"] = paired(
        seed_values(runs, arch, ce, "logit_norm_id"),
        seed_values(runs, arch, pen, "logit_norm_id"),
        names=(ce, pen),
    )
    m["C5"] = fpr_pair(pen, ln)
    cmp_score = spec["godin_compare_score"]
    m["C6"] = fpr_pair(
        godin, ln, "godin", cmp_score, names=(f"{godin} (godin score)", f"{ln} ({cmp_score} score)")
    )
    parts, n_ok = [], 0
    for a in spec["arch_table"]:
        c = fpr_pair(ce, ln, a=a)
        ok = c.value > 0 and (math.isnan(c.p_value) or c.p_value < alpha)
        n_ok += ok
        p = "no test" if math.isnan(c.p_value) else f"p = {c.p_value:.3g}"
        parts.append(f"{a}: {c.value:.2f} pp ({p}, {'holds' if ok else 'fails'})")
    m["C7"] = Measurement(float(n_ok), "; ".join(parts))
    r_ce, d_ce = _ratio_growth(curves, arch, ce, "logit_norm_id")
    _, d_ce_ood = _ratio_growth(curves, arch, ce, "logit_norm_ood")
    _, d_ln = _ratio_growth(curves, arch, ln, "logit_norm_id")
    m["C8"] = Measurement(r_ce, f"{d_ce}; OOD monitor set: {d_ce_ood}; {d_ln}")
    return m


def evaluate_logitnorm_claims(
    runs: pd.DataFrame, ood: pd.DataFrame, curves: pd.DataFrame, spec: dict
) -> pd.DataFrame:
    """The claims table of this study (see :mod:`softmax_ood.analysis.claims`)."""
    return evaluate_claims(
        PAPER, claim_specs(spec), measure(runs, ood, curves, spec), alpha=float(spec["alpha"])
    )
