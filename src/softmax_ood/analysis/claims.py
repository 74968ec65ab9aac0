"""The claims engine: a paper's claims declared as data, measured by the study, judged here.

A study declares each claim as a :class:`ClaimSpec` (what the paper says, the statistic, a
threshold, a direction, its kind, the premises it rests on and, where the paper reports one, the
paper's own effect size) and supplies one :class:`Measurement` per claim id.
:func:`evaluate_claims` applies one decision rule to all rows.

Kinds:

* ``premise``: the regime the paper's claims assume (the model fitted; the task is not trivial;
  the baseline behaves as in the paper). Listed first. Tested like a claim.
* ``claim``: a statement of the paper. **Never judged by the sign of a statistic alone**: it holds
  iff the statistic lies on the claimed side of the threshold *and* a one-sided test rejects the
  null "not on the claimed side" at the configured ``alpha``.
* ``sanity``: a statement true by construction (e.g. a ReLU network's logits grow linearly along a
  ray). Shown with "sanity check passes/fails", judged by the comparison alone, and never counted
  as support for the paper (``supports`` is False).

The test: a measurement either carries ``samples`` (per-seed values of the statistic, or per-seed
paired differences from :func:`paired`), and the engine runs the one-sided one-sample t-test of
the samples against the threshold in the claim's direction; or it carries its own one-sided
``p_value`` (e.g. :func:`spearman` with the claim's alternative). A claim or premise with neither
(one seed) reads "cannot test: no significance test".

Power: where the spec gives the paper's ``effect`` (in the statistic's units, measured from the
threshold), the engine reports the power of the test to detect that effect at the measured spread
and sample count (noncentral t; Fisher z for a rank correlation). A claim that is not significant
reads "too few seeds to tell (power P)" when that power is below :data:`POWER_TARGET` and the
opposite one-sided test is not significant either; it reads "does not hold" when the test had the
power to see the paper's effect, when the paper gives no effect size (the power column is n/a),
or when the data are significantly on the other side (whatever the power).

A claim whose premise (``requires``) does not hold gets ``cannot test: premise X does not hold``;
an undefined statistic (NaN) gets ``cannot test: the statistic is undefined``. ``all_of``: a
headline that holds only if every listed claim holds too.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .seeds import summarise

__all__ = [
    "COLUMNS",
    "KINDS",
    "POWER_TARGET",
    "ClaimSpec",
    "Measurement",
    "evaluate_claims",
    "fmt_mean_std",
    "one_sided_t",
    "paired",
    "render_claims_markdown",
    "spearman",
    "t_power",
    "tost_power",
]

COLUMNS = [
    "paper",
    "claim_id",
    "kind",
    "claim",
    "statistic",
    "value",
    "threshold",
    "direction",
    "p_value",
    "alpha",
    "n",
    "effect",
    "power",
    "detail",
    "holds",
    "supports",
    "verdict",
]
KINDS = ("premise", "claim", "sanity")
POWER_TARGET = 0.8
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper as data.

    :param direction: ``">"``, ``">="``, ``"<"`` or ``"<="``: the side of ``threshold`` the
        statistic must lie on (and the alternative of the one-sided test).
    :param kind: ``"premise"``, ``"claim"`` or ``"sanity"`` (see the module docstring).
    :param requires: ids of premises; if one fails this claim cannot be tested.
    :param all_of: ids of claims that must all hold too (a headline made of parts).
    :param effect: the paper's own effect size in the statistic's units, as a distance from the
        threshold (e.g. the paper's FPR95 reduction in points); ``None`` when the paper gives none.
    :param premise: alias of ``kind="premise"`` (older spelling).
    :param test: accepted for compatibility and ignored: every claim and premise is tested.
    """

    id: str
    text: str
    statistic: str
    threshold: float = 0.0
    direction: str = ">"
    kind: str = "claim"
    requires: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()
    effect: float | None = None
    premise: bool = field(default=False, repr=False)
    test: str | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.premise:
            object.__setattr__(self, "kind", "premise")
        object.__setattr__(self, "premise", self.kind == "premise")
        if self.direction not in _OPS:
            raise ValueError(
                f"claim {self.id}: direction {self.direction!r} is not one of {list(_OPS)}"
            )
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {list(KINDS)}")


@dataclass(frozen=True)
class Measurement:
    """A claim's statistic on this run's results.

    :param value: the statistic (for ``samples``: their mean unless given otherwise).
    :param samples: per-seed values (or per-seed paired differences); the engine tests them.
    :param p_value: a one-sided p for the claim's direction computed by the study (NaN: none).
    :param n: sample count behind ``p_value`` (filled from ``samples`` when those are given).
    :param power: power computed by the study (NaN: the engine computes it where it can).
    :param method: ``"t"`` (samples), ``"spearman"`` (rank correlation, n points) or ``""``.
    :param p_opposite: the study's one-sided p for the opposite direction (NaN: ``1 - p_value``,
        exact for a continuous test statistic).
    """

    value: float
    detail: str = ""
    p_value: float = math.nan
    samples: tuple[float, ...] = ()
    n: int = 0
    power: float = math.nan
    method: str = ""
    p_opposite: float = math.nan

    def __post_init__(self):
        if self.samples:
            object.__setattr__(self, "samples", tuple(float(x) for x in self.samples))
            object.__setattr__(self, "n", len(self.samples))
            if not self.method:
                object.__setattr__(self, "method", "t")


def fmt_mean_std(values: pd.Series, unit: str = "") -> str:
    mean, std, _ = summarise(values)
    s = "n/a" if math.isnan(std) else f"{std:.2f}"
    return f"{mean:.2f} ± {s}{unit}"


def one_sided_t(samples: Sequence[float], threshold: float, direction: str) -> float:
    """p of the one-sample t-test of ``samples`` against ``threshold``, alternative: the mean
    lies on the ``direction`` side. With all samples equal there is no t statistic: the exact
    sign test's ``0.5 ** n`` when they lie strictly on the claimed side (a sample equal to the
    threshold is not on it), 1 otherwise. NaN for fewer than 2 samples."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    if len(x) < 2 or not np.all(np.isfinite(x)):
        return math.nan
    greater = direction in (">", ">=")
    if float(x.max() - x.min()) <= 1e-12 * max(1.0, float(np.abs(x).max())):
        # no spread, no t statistic: the exact sign test (every sample strictly on the side)
        strictly = x[0] > threshold if greater else x[0] < threshold
        return 0.5 ** len(x) if strictly else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_1samp(x, threshold, alternative="greater" if greater else "less")
    return float(r.pvalue)


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


def paired(
    high: pd.Series, low: pd.Series, *, names: tuple[str, str] = ("A", "B"), percent: bool = False
) -> Measurement:
    """``high - low`` over the seeds both have (indexes are seeds): the mean difference, with the
    per-seed differences as ``samples`` (the engine tests them against the claim's threshold,
    usually 0 with direction ``">"``: "high > low")."""
    seeds = sorted(set(high.dropna().index) & set(low.dropna().index))
    if not seeds:
        raise ValueError(f"{names[0]} and {names[1]} share no seed, so no paired comparison.")
    a, b = high.loc[seeds].astype(float), low.loc[seeds].astype(float)
    diff = a - b
    mean_diff, n = float(diff.mean()), len(seeds)
    unit, dunit = (" %", " pp") if percent else ("", "")
    per_seed = ", ".join(f"{s}: {d:.2f}" for s, d in zip(seeds, diff, strict=True))
    detail = (
        f"{names[0]} {fmt_mean_std(a, unit)} vs {names[1]} {fmt_mean_std(b, unit)}; "
        f"paired difference {mean_diff:.2f}{dunit} over {n} seed(s) (per seed {per_seed})"
    )
    return Measurement(mean_diff, detail, samples=tuple(diff.to_numpy()))


def spearman(x, y, *, what: str = "", alternative: str = "greater") -> Measurement:
    """Spearman rank correlation of ``x`` and ``y`` with its one-sided p (``alternative``:
    ``"greater"`` for a claimed rise, ``"less"`` for a claimed fall), ``n`` points."""
    from scipy import stats

    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative {alternative!r} is not 'greater' or 'less'")
    x, y = pd.Series(x, dtype=float).to_numpy(), pd.Series(y, dtype=float).to_numpy()
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return Measurement(math.nan, f"{what}too few distinct points ({len(x)}) for Spearman")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.spearmanr(x, y, alternative=alternative)
    return Measurement(
        float(r.statistic),
        f"{what}Spearman rho {r.statistic:.3f} over {len(x)} points "
        f"(one-sided p = {r.pvalue:.3g}, alternative rho {'>' if alternative == 'greater' else '<'} 0)",
        float(r.pvalue),
        n=len(x),
        method="spearman",
    )


def _test(spec: ClaimSpec, m: Measurement, alpha: float) -> tuple[float, float]:
    """(p, power) of a claim or premise's measurement."""
    p, power = m.p_value, m.power
    if m.samples:
        p = one_sided_t(m.samples, spec.threshold, spec.direction)
        if math.isnan(power) and spec.effect is not None:
            sd = float(np.std(m.samples, ddof=1)) if len(m.samples) > 1 else math.nan
            power = t_power(spec.effect, sd, len(m.samples), alpha)
    elif m.method == "spearman" and math.isnan(power) and spec.effect is not None:
        power = _rho_power(spec.effect, m.n, alpha)
    return p, power


def _opposite_p(spec: ClaimSpec, m: Measurement, p: float) -> float:
    """p of the one-sided test in the opposite direction (the claim is false)."""
    if m.samples:
        flip = {">": "<", ">=": "<", "<": ">", "<=": ">"}[spec.direction]
        return one_sided_t(m.samples, spec.threshold, flip)
    if not math.isnan(m.p_opposite):
        return m.p_opposite
    return 1.0 - p if not math.isnan(p) else math.nan


def evaluate_claims(
    paper: str,
    specs: Iterable[ClaimSpec],
    measurements: Mapping[str, Measurement],
    *,
    alpha: float,
) -> pd.DataFrame:
    """Judge every claim with one rule; returns the claims table (columns :data:`COLUMNS`),
    premises first, then claims and sanity rows in declaration order."""
    specs = list(specs)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids repeat in {ids}")
    missing = [i for i in ids if i not in measurements]
    if missing:
        raise ValueError(f"no measurement for claim(s) {missing}")
    by_id = {s.id: s for s in specs}
    verdict: dict[str, tuple[bool, str]] = {}
    for s in specs:
        if measurements[s.id].method == "spearman" and s.threshold != 0:
            raise ValueError(
                f"claim {s.id}: a rank correlation's p tests rho against 0, not {s.threshold:g}"
            )
    tested: dict[str, tuple[float, float]] = {
        s.id: _test(s, measurements[s.id], alpha) for s in specs
    }

    def decide(cid: str, stack=()) -> tuple[bool, str]:
        if cid in verdict:
            return verdict[cid]
        if cid in stack:
            raise ValueError(f"claim {cid} depends on itself through {stack}")
        s, m = by_id[cid], measurements[cid]
        for pid in s.requires:
            if pid not in by_id:
                raise ValueError(f"claim {cid} requires the unknown premise {pid!r}")
            held, text = decide(pid, (*stack, cid))
            if not held:
                why = (
                    "could not be evaluated" if text.startswith("cannot test") else "does not hold"
                )
                verdict[cid] = (False, f"cannot test: premise {pid} {why}")
                return verdict[cid]
        if math.isnan(m.value):  # e.g. a Spearman rho of a constant series
            verdict[cid] = (False, "cannot test: the statistic is undefined (see detail)")
            return verdict[cid]
        side = bool(_OPS[s.direction](m.value, s.threshold))
        if s.kind == "sanity":
            verdict[cid] = (side, "sanity check passes" if side else "sanity check fails")
            return verdict[cid]
        p, power = tested[cid]
        if math.isnan(p):
            verdict[cid] = (False, "cannot test: no significance test (fewer than 2 samples)")
            return verdict[cid]
        ok = side and p < alpha
        parts_ok = all(decide(part, (*stack, cid))[0] for part in s.all_of)
        opposite = _opposite_p(s, m, p)
        if ok and parts_ok:
            verdict[cid] = (True, "holds")
        elif ok:
            verdict[cid] = (False, "does not hold (a part it needs does not hold)")
        elif opposite < alpha:  # the data speak against the claim, whatever the power
            verdict[cid] = (
                False,
                f"does not hold (the opposite is significant, p = {opposite:.2g})",
            )
        elif not math.isnan(power) and power < POWER_TARGET:
            verdict[cid] = (False, f"too few seeds to tell (power {power:.2f})")
        else:
            verdict[cid] = (False, "does not hold")
        return verdict[cid]

    order = {"premise": 0, "claim": 1, "sanity": 2}
    rows = []
    for s in sorted(specs, key=lambda s: order[s.kind]):
        ok, text = decide(s.id)
        m = measurements[s.id]
        p, power = tested[s.id]
        rows.append(
            {
                "paper": paper,
                "claim_id": s.id,
                "kind": s.kind,
                "claim": s.text,
                "statistic": s.statistic,
                "value": float(m.value),
                "threshold": float(s.threshold),
                "direction": s.direction,
                "p_value": float(p) if s.kind != "sanity" else math.nan,
                "alpha": float(alpha),
                "n": int(m.n),
                "effect": math.nan if s.effect is None else float(s.effect),
                "power": float(power) if s.kind != "sanity" else math.nan,
                "detail": m.detail,
                "holds": bool(ok),
                "supports": bool(ok) and s.kind == "claim",
                "verdict": text,
            }
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["holds"] = df["holds"].astype(bool)
    df["supports"] = df["supports"].astype(bool)
    df["n"] = df["n"].astype("int64")
    return df


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(x, fmt: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def render_claims_markdown(df: pd.DataFrame, title: str = "Claims") -> str:
    """The claims table as markdown: premises, then claims, then sanity rows, each with its value,
    one-sided p, n, power (to detect the paper's effect) and verdict."""
    lines = [
        f"### {title}",
        "",
        "| kind | id | claim | statistic | value | needed | p | n | power | verdict | detail |",
        "|---|---|---|---|---:|---|---:|---:|---:|---|---|",
    ]
    for _, r in df.iterrows():
        lines.append(
            f"| {r['kind']} | {_cell(r['claim_id'])} | {_cell(r['claim'])} | "
            f"{_cell(r['statistic'])} | {_num(r['value'], '.3g')} | "
            f"{r['direction']} {r['threshold']:g} | {_num(r['p_value'], '.3g')} | {r['n']} | "
            f"{_num(r['power'], '.2f')} | **{r['verdict']}** | {_cell(r['detail'])} |"
        )
    return "\n".join(lines) + "\n"
