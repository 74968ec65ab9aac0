"""Power: of the one-sided t-test (noncentral t), of the TOST, and of a rank correlation's test
(Fisher z), each at the effect a claim's power is computed at (:func:`effect_used`: the paper's,
or a power target, capped at what the baseline can lose here)."""

from __future__ import annotations

import math

from .spec import ClaimSpec, Measurement


def t_power(effect: float, sd: float, n: int, alpha: float) -> float:
    """Power of the one-sided one-sample t-test at level ``alpha`` with ``n`` samples of spread
    ``sd`` to detect a true mean ``effect`` away from the threshold (noncentral t)."""
    from scipy import stats

    if n < 2 or effect is None or not math.isfinite(effect) or effect == 0:
        return math.nan
    if sd <= 0 or not math.isfinite(sd):
        return 1.0
    df = n - 1
    crit = stats.t.ppf(1 - alpha, df)
    return float(stats.nct.sf(crit, df, abs(effect) / sd * math.sqrt(n)))


def tost_power(margin: float, sd: float, n: int, alpha: float, true_diff: float = 0.0) -> float:
    """Power of the paired/one-sample t equivalence test (TOST) at level ``alpha``: the
    probability that *both* one-sided tests reject, i.e. that the mean of ``n`` samples of
    spread ``sd`` falls within ``±(margin − t_crit · s / √n)``, when the true mean is
    ``true_diff`` (default 0: the paper's claim exactly true). Exact: integrates the normal
    probability of the mean over the chi-square distribution of the sample spread ``s``. Always
    below the one-sided :func:`t_power` for the same margin (both halves must reject)."""
    from scipy import integrate, stats

    if n < 2 or margin is None or not math.isfinite(margin) or margin <= 0:
        return math.nan
    if sd <= 0 or not math.isfinite(sd):
        return 1.0 if abs(true_diff) < margin else 0.0
    df = n - 1
    crit = stats.t.ppf(1 - alpha, df)
    se = sd / math.sqrt(n)

    def given_v(v: float) -> float:
        half = margin - crit * se * math.sqrt(v / df)  # the acceptance half-width given s
        if half <= 0:
            return 0.0
        inside = stats.norm.cdf((half - true_diff) / se) - stats.norm.cdf((-half - true_diff) / se)
        return inside * stats.chi2.pdf(v, df)

    v_max = df * (margin / (crit * se)) ** 2  # beyond it the acceptance region is empty
    value, _ = integrate.quad(given_v, 0.0, v_max, limit=200)
    return float(min(max(value, 0.0), 1.0))


def _rho_power(effect: float, n: int, alpha: float) -> float:
    from scipy import stats

    if n < 4 or effect is None or not (0 < abs(effect) < 1):
        return math.nan
    z = math.atanh(abs(effect)) * math.sqrt((n - 3) / 1.06)  # Spearman's variance factor
    return float(stats.norm.sf(stats.norm.ppf(1 - alpha) - z))


def effect_used(spec: ClaimSpec, m: Measurement) -> tuple[float, str]:
    """The effect a claim's power is computed at, and why: the spec's ``effect`` (the paper's,
    or a power target), capped at the measurement's ``effect_cap`` (the most the baseline can
    lose here, e.g. CE's own FPR95 for an FPR95 reduction) when it is larger. (NaN, "") for a
    claim without an effect size."""
    if spec.effect is None or not math.isfinite(spec.effect):
        return math.nan, ""
    eff = float(spec.effect)
    source = "the paper's effect" if spec.effect_source == "paper" else "the power target"
    if spec.test == "equivalence":
        return eff, f"{eff:.4g}: the true difference the TOST power assumes ({source})"
    cap = float(m.effect_cap)
    if math.isfinite(cap) and abs(eff) > cap:
        what = m.effect_cap_why or "the most the baseline can lose here"
        return math.copysign(cap, eff), (
            f"{cap:.4g}: capped at {what} ({source}, {abs(eff):.4g}, is more than it can lose)"
        )
    return eff, f"{eff:.4g}: {source}"
