"""What the engine computes for each row before any verdict: the one-sided test of the claim's
side (or the TOST of an equivalence), its power, the opposite's p and the observed side; and the
second, two-sided test of ours against the paper's own number (:func:`versus_paper`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .power import _rho_power, effect_used, t_power, tost_power
from .significance import one_sided_t, sign_test, t_interval
from .spec import _OPS, ClaimSpec, Measurement


@dataclass(frozen=True)
class _Tested:
    """What the engine computed for one row: the claim's one-sided (or TOST) p, its power, the
    one-sided p of the opposite, the observed side, and (equivalence) the interval."""

    p: float = math.nan
    power: float = math.nan
    p_opposite: float = math.nan
    observed: str = ""
    interval: tuple[float, float] = (math.nan, math.nan)


_FLIP = {">": "<", ">=": "<", "<": ">", "<=": ">"}


def _directional(spec: ClaimSpec, m: Measurement, alpha: float) -> _Tested:
    p, power, p_opp = m.p_value, m.power, m.p_opposite
    effect, _ = effect_used(spec, m)
    capped = spec.effect is not None and effect != spec.effect
    if m.power_at is not None and math.isfinite(effect):
        power = float(m.power_at(effect, alpha))
    elif capped and not m.samples and m.method != "spearman":
        raise ValueError(
            f"claim {spec.id}: its effect is capped at {effect:g} but its measurement gives "
            "no power_at to recompute the power there"
        )
    if m.samples:
        test = sign_test if m.method == "sign" else one_sided_t
        p = test(m.samples, spec.threshold, spec.direction)
        p_opp = test(m.samples, spec.threshold, _FLIP[spec.direction])
        if (math.isnan(power) or capped) and m.power_at is None and math.isfinite(effect):
            sd = float(np.std(m.samples, ddof=1)) if len(m.samples) > 1 else math.nan
            power = t_power(effect, sd, len(m.samples), alpha)
    else:
        if m.method == "spearman" and (math.isnan(power) or capped) and math.isfinite(effect):
            power = _rho_power(effect, m.n, alpha)
        if math.isnan(p_opp) and not math.isnan(p):
            p_opp = 1.0 - p  # exact for a continuous statistic
    observed = ""
    if not math.isnan(m.value):
        side = bool(_OPS[spec.direction](m.value, spec.threshold))
        observed = "as claimed" if side else "opposite"
    return _Tested(p, power, p_opp, observed)


def _equivalence(spec: ClaimSpec, m: Measurement, alpha: float) -> _Tested:
    """TOST of the signed difference against ``± bar``: from the samples (t interval, two
    one-sided t-tests) or from the study's ``interval`` (and its ``p_value``)."""
    bar = spec.threshold
    p, power, p_opp, point = m.p_value, m.power, m.p_opposite, m.value
    interval = m.interval or (math.nan, math.nan)
    if m.interval is None and m.samples:
        x = np.asarray(m.samples, dtype=float)
        interval = t_interval(x, alpha)
        point = float(x.mean())
        p = max(one_sided_t(x, -bar, ">"), one_sided_t(x, bar, "<"))
        p_opp = one_sided_t(x, bar, ">") if point >= 0 else one_sided_t(x, -bar, "<")
        if math.isnan(power) and len(x) > 1:
            true_diff = 0.0 if spec.effect is None else float(spec.effect)
            power = tost_power(bar, float(x.std(ddof=1)), len(x), alpha, true_diff)
    observed = "" if math.isnan(point) else ("as claimed" if abs(point) < bar else "opposite")
    return _Tested(p, power, p_opp, observed, interval)


def _test(spec: ClaimSpec, m: Measurement, alpha: float) -> _Tested:
    if spec.test == "equivalence":
        return _equivalence(spec, m, alpha)
    return _directional(spec, m, alpha)


def _fmt_p(p: float) -> str:
    return f"{p:.2g}"


def versus_paper(spec: ClaimSpec, m: Measurement, alpha: float) -> tuple[float, str]:
    """The second test of a claim that declares the paper's number (``paper_value``): the
    two-sided p that ours equals it (twice the smaller one-sided p, from the samples' t or sign
    test or the study's ``p_at``) and the words "smaller than the paper's (p = …)", "larger than
    the paper's (p = …)" or "consistent with the paper's (p = …)" (not significant at
    ``alpha``: the data cannot tell ours from the paper's). (NaN, "") without a paper value,
    and "" words where no test can be run."""
    if spec.paper_value is None or spec.kind != "claim" or spec.test != "one-sided":
        return math.nan, ""
    ref = float(spec.paper_value)
    if m.samples:
        test = sign_test if m.method == "sign" else one_sided_t
        lo, hi = test(m.samples, ref, "<"), test(m.samples, ref, ">")
    elif m.p_at is not None:
        lo, hi = float(m.p_at(ref, "<")), float(m.p_at(ref, ">"))
    else:
        return math.nan, ""
    if math.isnan(lo) or math.isnan(hi) or math.isnan(m.value):
        return math.nan, ""
    p = min(1.0, 2.0 * min(lo, hi))
    if p >= alpha:
        words = "consistent with"
    else:
        words = "smaller than" if m.value < ref else "larger than"
    return p, f"{words} the paper's {ref:.4g} (two-sided p = {_fmt_p(p)})"
