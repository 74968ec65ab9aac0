"""The LogitNorm study's claims beyond the MSP comparison with CE, each one claim: its spec beside
its named measurement: calibration after TS (``C4``), LogitPenalty (``C5-norm``, ``C5``), GODIN
(``C6``), each architecture (``C7``), CE's logit norm growing after the fit (``C8``).
LogitPenalty's and GODIN's rows exist where the config trains them (the 28x28 default does not:
a declared departure, logitnorm.main_losses)."""

from __future__ import annotations

import math

import numpy as np

from ....analysis.claims import (
    Claim,
    ClaimSpec,
    Measurement,
    fmt_mean_std,
    one_sided_t,
    paired,
    t_power,
)
from ....analysis.seeds import seed_values
from ....calibration import ece
from ..evidence import has_scores, msp_arrays, two_stage
from ..shared import trained_on_main
from .comparisons import DIFF, NO_FAR_SET, REGIME
from .evidence import Evidence, capped
from .paper import FIXED_DEFAULT, PAPER_EFFECTS, bootstrap_confirmation, seeds_only

__all__ = ["architecture_claims", "calibration_and_penalty_claims", "norm_growth_claims"]


def ece_ts_difference(ev: Evidence) -> Measurement:
    """C4: ECE after TS, CE - LogitNorm (pp): seeds and a bootstrap of the ID test images (the ECE
    recomputed on each resample from the per-image confidence after TS and correctness); seeds
    only when the samples frame lacks those."""
    runs, samples, spec = ev.runs, ev.samples, ev.section
    arch, ce, ln, alpha = spec["main_arch"], spec["baseline"], spec["method"], spec["alpha"]
    recipe, seeds = spec["recipe"], sorted(int(s) for s in spec["seeds"])
    bins = int(spec.get("ece_bins", 15))
    raw = (
        f"; without TS: {ce} {fmt_mean_std(seed_values(runs, arch, ce, 'ece', scale=100.0), ' %')}"
        f", {ln} {fmt_mean_std(seed_values(runs, arch, ln, 'ece', scale=100.0), ' %')}"
    )
    need = ("msp_ts", "correct")
    if not all(
        has_scores(samples, recipe, arch, loss, seeds, sc) for loss in (ce, ln) for sc in need
    ):
        per_seed = paired(
            seed_values(runs, arch, ce, "ece_ts", scale=100.0),
            seed_values(runs, arch, ln, "ece_ts", scale=100.0),
            names=(ce, ln),
            percent=True,
        )
        return Measurement(
            per_seed.value,
            per_seed.detail + raw + " (seeds only: no per-image confidences)",
            samples=per_seed.samples,
        )
    arr = {
        loss: {
            s: tuple(msp_arrays(samples, recipe, arch, loss, s, sc)["id"] for sc in need)
            for s in seeds
        }
        for loss in (ce, ln)
    }
    res = ev.res

    def ece_of(loss, seed, b):
        conf, correct = arr[loss][seed]
        rows = res.id_rows(b)
        conf, correct = conf[rows], correct[rows]
        return 100.0 * ece(conf, correct.astype(np.int64), np.ones(len(conf), np.int64), bins)

    ts = two_stage(lambda s, b: ece_of(ce, s, b) - ece_of(ln, s, b), seeds, res)
    power = ts.power(PAPER_EFFECTS["C4"], alpha)
    return Measurement(
        ts.mean,
        f"{ce} - {ln}: {ts.describe()}; power to detect the paper's "
        f"{PAPER_EFFECTS['C4']:.2f} pp: {power:.2f}" + raw,
        ts.p_value(0.0, ">"),
        n=ts.n,
        power=power,
        method="two-stage t",
    )


def penalty_norm_shrink(ev: Evidence) -> Measurement:
    """C5-norm: CE - LogitPenalty ID logit norm, paired by seed."""
    return paired(
        seed_values(ev.runs, ev.arch, ev.ce, "logit_norm_id"),
        seed_values(ev.runs, ev.arch, ev.pen, "logit_norm_id"),
        names=(ev.ce, ev.pen),
    )


def penalty_minus_logitnorm(ev: Evidence) -> Measurement:
    """C5: LogitPenalty - LogitNorm MSP FPR95 on the headline sets (pp; seeds and test images)."""
    if not ev.heads:
        return Measurement(math.nan, ev.no_heads)
    c5 = two_stage(ev.diff_stat(ev.pen, ev.ln, ev.heads), ev.seeds, ev.res)
    return Measurement(
        c5.mean,
        f"LogitPenalty - LogitNorm: {c5.describe()}",
        c5.p_value(0.0, ">"),
        n=c5.n,
        power=c5.power(PAPER_EFFECTS["C5"], ev.alpha),
        method="two-stage t",
    )


def calibration_and_penalty_claims(spec: dict) -> list[Claim]:
    """C4; C5-norm and C5 where the config trains LogitPenalty."""
    boot = bootstrap_confirmation(spec)
    claims = [
        Claim(
            ClaimSpec(
                "C4",
                "With temperature scaling, LogitNorm is better calibrated (lower ECE) than CE",
                DIFF.format(what="ECE-after-TS", a="CE", b="LogitNorm")
                + " (pp; seeds and ID test images)",
                # Table 4 compares the models at the logit scale their training reached: it
                # speaks for the paper's LogitNorm only where that scale is the paper's (issue 26)
                requires=("P-ln-norm", "P0-ln"),
                effect=PAPER_EFFECTS["C4"],
                selection=FIXED_DEFAULT,
                confirmation=boot,
            ),
            ece_ts_difference,
        )
    ]
    if spec["penalty"] not in trained_on_main(spec):
        return claims
    return claims + [
        Claim(
            ClaimSpec(
                "C5-norm",
                "LogitPenalty shrinks the ID logit norm relative to CE (its loss penalises that "
                "norm: true by construction)",
                DIFF.format(what="ID logit-norm", a="CE", b="LogitPenalty"),
                kind="sanity",
                selection=FIXED_DEFAULT,
                confirmation=seeds_only(spec, "all ID test images (seeds only, no bootstrap)"),
            ),
            penalty_norm_shrink,
        ),
        Claim(
            ClaimSpec(
                "C5",
                "LogitPenalty does not match LogitNorm's average FPR95 (MSP)",
                DIFF.format(what="FPR95", a="LogitPenalty", b="LogitNorm")
                + " (pp; seeds and test images)",
                requires=REGIME,
                effect=PAPER_EFFECTS["C5"],
                selection=FIXED_DEFAULT,
                confirmation=boot,
            ),
            penalty_minus_logitnorm,
        ),
    ]


def godin_minus_logitnorm(ev: Evidence) -> Measurement:
    """C6: GODIN (its own score) - LogitNorm (``godin_compare_score``) FPR95 (pp)."""
    if not ev.heads:
        return Measurement(math.nan, NO_FAR_SET)
    godin, ln, cmp_score = ev.godin, ev.ln, ev.section["godin_compare_score"]
    return capped(
        ev,
        ev.fpr_pair(
            godin,
            ln,
            "godin",
            cmp_score,
            names=(f"{godin} (godin score)", f"{ln} ({cmp_score} score)"),
        ),
        PAPER_EFFECTS["C6"].get(cmp_score, math.nan),
        "godin",
        who="GODIN",
    )


def _arch_reduction(ev: Evidence, a: str) -> tuple:
    """One architecture of C7: (holds, p, power function, CE's own FPR95, its detail part,
    how it was judged)."""
    alpha = ev.alpha
    c, _, own = ev.fpr_pair(ev.ce, ev.ln, a=a)
    if isinstance(c, Measurement):  # seeds only
        how = "paired over seeds, fixed test images"
        value, p = c.value, one_sided_t(c.samples, 0.0, ">")
        sd = float(np.std(c.samples, ddof=1)) if len(c.samples) > 1 else math.nan
        n_c = len(c.samples)

        def power_fn(eff, level, sd=sd, n_c=n_c):
            return t_power(eff, sd, n_c, level)

        se = ""
    else:
        how = "seeds and test images"
        value, p, power_fn = c.mean, c.p_value(0.0, ">"), c.power
        se = f", SE {c.se:.2f} = seeds {c.se_seed:.2f} (+) images {c.se_images:.2f}"
    ok = value > 0 and p < alpha
    # the power at the paper's reduction, or at CE's own FPR95 on this architecture if less
    power = power_fn(min(PAPER_EFFECTS["C7"], own), alpha)
    part = (
        f"{a}: {value:.2f} pp{se}, CE's own MSP FPR95 {own:.2f} % (p = {p:.3g}, power "
        f"{power:.2f}, {'holds' if ok else 'fails'})"
    )
    return ok, p, power_fn, own, part, how


def each_architecture(ev: Evidence) -> Measurement:
    """C7: the architectures with a significant paired MSP FPR95 reduction CE -> LogitNorm;
    p the largest per-architecture p (intersection-union test)."""
    if not ev.heads:
        return Measurement(math.nan, NO_FAR_SET)
    alpha, archs = ev.alpha, ev.section["arch_table"]
    per_arch = [_arch_reduction(ev, a) for a in archs]
    n_ok = sum(ok for ok, *_ in per_arch)
    ps = [p for _, p, *_ in per_arch]
    power_fns = [fn for _, _, fn, *_ in per_arch]
    caps = [own for *_, own, _, _ in per_arch]
    how = {h for *_, h in per_arch}

    def c7_power(eff: float, level: float) -> float:
        """Every architecture must reject: the product of the per-architecture powers
        (independent trainings), each at ``eff`` or its CE's own FPR95 if less."""
        return float(
            np.prod([f(min(eff, cap), level) for f, cap in zip(power_fns, caps, strict=True)])
        )

    n_archs = len(archs)
    return Measurement(
        float(n_ok),
        "; ".join(part for *_, part, _ in per_arch)
        + f" ({'; '.join(sorted(how))}); {n_archs} architecture"
        + ("s" if n_archs != 1 else "")
        + " here (the paper's Table 3: three)",
        float(np.nanmax(ps)) if ps else math.nan,
        n=len(ev.seeds),
        power=c7_power(PAPER_EFFECTS["C7"], alpha) if power_fns else math.nan,
        method="intersection-union",
        effect_cap=float(min(caps)) if caps else math.nan,
        effect_cap_why="CE's own MSP FPR95 on its weakest architecture here",
        power_at=c7_power if power_fns else None,
    )


def architecture_claims(spec: dict) -> list[Claim]:
    """C6 where the config trains GODIN; C7."""
    archs, cmp_score = list(spec["arch_table"]), spec["godin_compare_score"]
    boot = bootstrap_confirmation(spec)
    claims = []
    if spec["godin"] in trained_on_main(spec):
        claims.append(
            Claim(
                ClaimSpec(
                    "C6",
                    f"LogitNorm ({cmp_score} score) has lower average FPR95 than GODIN",
                    DIFF.format(what="FPR95", a="GODIN", b="LogitNorm")
                    + " (pp; seeds and test images)",
                    requires=REGIME,
                    effect=PAPER_EFFECTS["C6"].get(cmp_score),
                    selection=FIXED_DEFAULT,
                    confirmation=boot,
                ),
                godin_minus_logitnorm,
            )
        )
    return claims + [
        Claim(
            ClaimSpec(
                "C7",
                "LogitNorm lowers average FPR95 (MSP) on "
                + (
                    f"the one architecture run here ({archs[0]}"
                    if len(archs) == 1
                    else f"each of the {len(archs)} architectures run here ({', '.join(archs)}"
                )
                + "; the paper's Table 3: three)",
                f"architectures (of {len(archs)}) with a significant paired reduction (seeds and "
                "test images); p = the largest per-architecture p (intersection-union test)",
                threshold=float(len(archs)),
                direction=">=",
                requires=REGIME,
                effect=PAPER_EFFECTS["C7"],
                selection=FIXED_DEFAULT,
                confirmation=boot,
            ),
            each_architecture,
        )
    ]


def logit_norm_slope_after_fit(ev: Evidence) -> Measurement:
    """C8: CE's mean log logit-norm slope per 10 epochs once it fits the training data."""
    curves, spec = ev.curves, ev.section
    arch, ce = spec["main_arch"], spec["baseline"]
    fit = float(spec.get("fit_accuracy", 0.99))
    sel = curves[(curves["arch"] == arch) & (curves["loss"] == ce)]
    slopes, parts = {}, []
    for seed, g in sel.groupby("seed"):
        g = g.sort_values("epoch")
        reached = g[g["train_acc"] >= fit]
        if reached.empty:
            parts.append(f"seed {seed}: never reached {100 * fit:g} % training accuracy")
            continue
        after = g[g["epoch"] >= int(reached["epoch"].iloc[0])]
        if len(after) < 3:
            parts.append(f"seed {seed}: fewer than 3 epochs after the fit")
            continue
        x = after["epoch"].to_numpy(float)
        y = np.log(after["logit_norm_id"].to_numpy(float))
        slope = float(np.polyfit(x, y, 1)[0]) * 10.0
        slopes[int(seed)] = slope
        ood = ""
        if "logit_norm_ood" in after and after["logit_norm_ood"].notna().all():
            o = after["logit_norm_ood"].to_numpy(float)
            ood = f", OOD ({spec.get('monitor_set') or 'monitor set'}) {o[0]:.2f} -> {o[-1]:.2f}"
        parts.append(
            f"seed {seed}: epochs {int(x[0])}-{int(x[-1])}, ID norm {math.exp(y[0]):.2f} -> "
            f"{math.exp(y[-1]):.2f}{ood}, slope {slope:.4f}"
        )
    detail = "log-norm slope per 10 epochs after the fit; " + "; ".join(parts)
    if not slopes:
        return Measurement(math.nan, detail)
    return Measurement(
        float(np.mean(list(slopes.values()))), detail, samples=tuple(slopes.values())
    )


def norm_growth_claims(spec: dict) -> list[Claim]:
    """C8."""
    fit = 100 * float(spec.get("fit_accuracy", 0.99))
    return [
        Claim(
            ClaimSpec(
                "C8",
                f"Under CE the ID logit norm keeps growing once training accuracy reaches "
                f"{fit:g} % (Fig. 1's ID curve; its OOD curve is drawn in Fig. 1 and its norms "
                "are printed here, not tested)",
                f"per-seed slope of log ID logit norm per 10 epochs, from the first epoch with "
                f"training accuracy >= {fit:g} % ({spec.get('recipe', 'headline')} recipe, CE)",
                threshold=0.0,
                direction=">",
                selection="fixed in advance: the training-accuracy level the slope starts at "
                "(config)",
                confirmation=seeds_only(
                    spec, "the training curves, every epoch after the fit (seeds only)"
                ),
            ),
            logit_norm_slope_after_fit,
        )
    ]
