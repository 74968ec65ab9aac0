"""The claims engine: a paper's claims declared as data, measured by the study, judged here.

A study declares each claim as one :class:`Claim`, readable whole in one place: its
:class:`ClaimSpec` (what the paper says, the statistic, a threshold, a direction, its kind, the
premises it rests on, its effect and where that comes from, what selected its settings and what
confirms it) and its ``measure``, a named function of the study's evidence returning the claim's
:class:`Measurement`. A study's claims module is the list of its claims (a function of its config
section); :func:`judge` measures each and :func:`evaluate_claims` applies one decision rule to
all rows.

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

Attainable effects: a paper's effect larger than the baseline can lose here (e.g. an FPR95
reduction beyond the baseline's own FPR95) is capped at what it can (the measurement's
``effect_cap``; :func:`effect_used`), and the power is computed there; the columns
``effect_used`` and ``effect_note`` say which effect the power column used and why (the paper's,
a power target, or the cap).

A directional claim that is not significant reads "does not hold" only when the test had the
power (at least :data:`POWER_TARGET`) to see the paper's effect, or when the opposite is
significant; otherwise "too few seeds to tell (power P)", or "too few seeds to tell (power n/a)"
when the paper gives no effect size. A *premise* must be shown, not assumed: one that is not
significant reads "not established (p = P)" when its statistic lies on the needed side and "does
not hold" otherwise; either way the rows that require it read "cannot test" (``premise X is not
established`` / ``premise X does not hold``).

A premise that holds with p in [:data:`BORDERLINE_P`, ``alpha``) holds by a hair (unless that p
is the smallest its exact test can give at this n, e.g. ``0.5 ** 5`` for five seeds all on the
side: then it is as shown as the seeds allow): its verdict reads "holds (borderline, p = P)",
and every row resting on it (its ``requires``, those of its ``all_of`` parts, recursively)
carries the mark in its verdict ("— rests on the borderline premise X (p = P)"; a sanity row
keeps its words) and in the column ``borderline`` (the premise ids; "" none). A "too few seeds
to tell" whose estimate lies on the other side says so ("estimate in the opposite direction,
p_opp = P"), and a claim a failed premise leaves untested, whose own test had the power to see
the paper's effect and found nothing on either side, says what it measured ("cannot test:
premise X is not established; measured 1.5 ± 2.4 (SE) at power 1.00").

The paper's number as a second test: a claim that declares ``paper_value`` (the paper's own
number for its statistic) also gets a two-sided test of ours against it (:func:`versus_paper`;
columns ``p_paper`` and ``vs_paper``: "smaller than / larger than / consistent with the
paper's"), beside the verdict on the claim's side of the threshold. It is not in the family and
never changes the verdict.

Every row reports the **observed direction** (column ``observed``: "as claimed" when the
statistic lies on the claimed side, "opposite" otherwise) and the one-sided p of the opposite
direction (``p_opposite``), whatever the verdict. A claim whose premise (``requires``) does not
hold gets ``cannot test: premise X does not hold``; when, there, the opposite of the claim is
significant, it reads ``cannot test as the paper's claim (premise X does not hold) — here the
opposite is significant (p = P)``, so a failed premise never hides a significant opposite
result. An undefined statistic (NaN) gets ``cannot test: the statistic is undefined``.
``all_of``: a headline that holds only if every listed claim holds too.

Equivalence (``test="equivalence"``): the paper claims a difference lies within ``± threshold``
(the bar, > 0). The measurement carries the *signed* differences as ``samples`` (the engine forms
the ``1 − 2·alpha`` t interval of their mean and the two one-sided tests, TOST) or its own
``interval=(lo, hi)`` (a ``1 − 2·alpha`` interval computed by the study, e.g. exact binomial,
with its TOST ``p_value``). Verdicts: "holds" (the interval lies inside ``± bar``), "does not
hold" (the interval lies entirely outside), "not established (interval [lo, hi] straddles the
bar)". The power is the TOST's (:func:`tost_power`) at the samples' spread when the true
difference is ``effect`` (for an equivalence row, ``effect`` is that true difference; 0: the
claim exactly true). ``observed`` is "as claimed" when the point estimate lies inside the bar,
and ``p_opposite`` the one-sided p that the difference lies beyond the bar on its side.

Family control: a study's claims are one family. Every row of kind ``claim`` that is tested
(it has a p, its statistic is defined and its premises hold) gets a Benjamini–Hochberg adjusted
p over that family (column ``p_adjusted``; ``adjustment`` names the method and the family's
size), and its verdict uses the adjusted p in place of the raw one (the raw p stays in
``p_value``). The rows the study names as its headline (``headline``: ids or ``fnmatch``
patterns, the study's ``HEADLINE``) also get Holm's family-wise adjusted p over the tested
headline rows (``p_holm``); a headline row that holds on its BH p but not on Holm's says so
("holds (not after Holm over the headline claims: p = Q)"). Holm does not decide the verdict:
a headline declared as many settings of one claim (Kang's ``ocs_trend:*``, Ulmer's ``C-*``)
could never pass it at 5 seeds with an exact test (smallest p 1/32, times 6 settings > 0.05).
Premises and sanity rows are not in the family (a premise is the regime, tested on its own; a
sanity row has no test). A claim significant alone but not after the adjustment says so in its
verdict ("p = P alone, Q after the family adjustment"). The power stays the power of the
unadjusted test at ``alpha`` (an upper bound once adjusted). The verdict columns (``verdict``, ``holds``, ``supports``) are computed once per
seed set; a second, disjoint seed set adds one more column beside them (``replicates``)
without changing these.

Replication (:func:`claims_with_replication`): where the config names a second, disjoint seed
set for the study (``replication``), the same claim function judges the same claims twice, on
the primary seeds' frames and on the fresh seeds' frames (a frame with a ``seed`` column is
restricted to those seeds), each with its own family adjustment. The primary verdict stays the
verdict; ``replicates`` reads "yes" when the fresh seeds give the same verdict (its words up to
the numbers: :func:`verdict_class`), "no: <the verdict on the fresh seeds>" otherwise, and
:data:`NOT_REPLICATED` for a study (or a row: a frame that is not re-run on fresh seeds) that
does not replicate.

``selection`` and ``confirmation`` (free text, copied to the table): which data decided the
row's settings (e.g. "selection seeds 100-102", "validation split", "fixed in advance: …") and
what the verdict is computed on (e.g. "seeds 0-4 × test images"); see
:mod:`softmax_ood.analysis.selection`.
"""

from __future__ import annotations

import contextvars
import itertools
import math
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd

from .seeds import summarise

__all__ = [
    "COLUMNS",
    "KINDS",
    "effect_used",
    "BORDERLINE_P",
    "POWER_TARGET",
    "Claim",
    "ClaimSpec",
    "Measurement",
    "evaluate_claims",
    "judge",
    "TESTS",
    "NOT_REPLICATED",
    "Replication",
    "bh_adjust",
    "claims_with_replication",
    "family_control",
    "fmt_mean_std",
    "holm_adjust",
    "one_sided_t",
    "sign_test",
    "paired",
    "render_claims_markdown",
    "replication_column",
    "restrict_to_seeds",
    "spearman",
    "spearman_exact_p",
    "t_power",
    "t_interval",
    "tost_power",
    "verdict_class",
    "versus_paper",
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
    "p_adjusted",
    "p_holm",
    "adjustment",
    "alpha",
    "n",
    "effect",
    "paper_value",
    "effect_source",
    "power",
    "effect_used",
    "effect_note",
    "p_paper",
    "vs_paper",
    "detail",
    "test",
    "observed",
    "p_opposite",
    "selection",
    "confirmation",
    "holds",
    "supports",
    "borderline",
    "verdict",
    "replicates",
]
KINDS = ("premise", "claim", "sanity")
TESTS = ("one-sided", "equivalence")
EFFECT_SOURCES = ("paper", "power target")
EXACT_RANK_MAX_N = 10  #: up to this many points a rank correlation's p is exact (permutations)
POWER_TARGET = 0.8
#: a premise that holds with p in [BORDERLINE_P, alpha) holds by a hair: "borderline"
BORDERLINE_P = 0.01
#: the ``replicates`` column of a row (or a study) that no second seed set re-tests
NOT_REPLICATED = "not replicated here"
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_FAMILY = contextvars.ContextVar("family_control", default=True)


@contextmanager
def family_control(on: bool) -> Iterator[None]:
    """Within the block, :func:`evaluate_claims` adjusts each study's family of claims (``on``,
    the default everywhere) or judges every row on its raw p alone (``off``: the per-row rule,
    for the hand-built controls that show one row can hold and can fail; the adjustment only
    ever turns a "holds" into a not-holds, never the reverse)."""
    token = _FAMILY.set(bool(on))
    try:
        yield
    finally:
        _FAMILY.reset(token)


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
        For ``test="equivalence"``: the true difference at which the TOST power is computed
        (0: the claim exactly true).
    :param paper_value: the paper's own number for this statistic, where it is not
        ``threshold ± effect`` (e.g. a claim tested as "reduction > 0" with a power target of
        its own as ``effect``, whose paper printed a different reduction); ``None`` when
        ``threshold ± effect`` is the paper's number or the paper gives none. Copied to the
        table's ``paper_value`` column (NaN when ``None``); the results page prefers it.
    :param effect_source: where ``effect`` comes from: ``"paper"`` (the paper's own effect, the
        default) or ``"power target"`` (a size fixed in the config for the power calculation
        where the paper gives none, or a smaller one than the paper's); the results page then
        never shows ``threshold ± effect`` as the paper's number.
    :param premise: alias of ``kind="premise"`` (older spelling).
    :param test: ``"one-sided"`` (default; ``None`` reads the same) or ``"equivalence"``
        (``threshold`` is the bar, ``direction`` must be ``"<"`` or ``"<="``: |difference|
        below the bar).
    :param selection: which data decided this row's settings (free text; "" unknown/none).
    :param confirmation: what the verdict is computed on (free text).
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
    paper_value: float | None = None
    effect_source: str = "paper"
    premise: bool = field(default=False, repr=False)
    test: str | None = "one-sided"
    selection: str = ""
    confirmation: str = ""

    def __post_init__(self):
        if self.test is None:
            object.__setattr__(self, "test", "one-sided")
        if self.test not in TESTS:
            raise ValueError(f"claim {self.id}: test {self.test!r} is not one of {list(TESTS)}")
        if self.test == "equivalence" and (
            not self.threshold > 0 or self.direction not in ("<", "<=")
        ):
            raise ValueError(
                f"claim {self.id}: an equivalence test needs a bar threshold > 0 and direction "
                f"'<' (|difference| below the bar), not {self.direction} {self.threshold:g}"
            )
        if self.premise:
            object.__setattr__(self, "kind", "premise")
        object.__setattr__(self, "premise", self.kind == "premise")
        if self.direction not in _OPS:
            raise ValueError(
                f"claim {self.id}: direction {self.direction!r} is not one of {list(_OPS)}"
            )
        if self.effect_source not in EFFECT_SOURCES:
            raise ValueError(
                f"claim {self.id}: effect_source {self.effect_source!r} is not one of "
                f"{list(EFFECT_SOURCES)}"
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
    :param method: ``"t"`` (samples), ``"sign"`` (samples, exact sign test), ``"spearman"``
        (rank correlation, n points) or ``""``.
    :param p_opposite: the study's one-sided p for the opposite direction (NaN: ``1 - p_value``,
        exact for a continuous test statistic).
    :param interval: for an equivalence claim, the study's ``1 − 2·alpha`` interval ``(lo, hi)``
        of the signed difference (used instead of ``samples``).
    :param se: the statistic's standard error where the study's own test has one (shown when
        a premise leaves a powered, null claim untested); NaN: none.
    :param effect_cap: the largest effect attainable here, in the statistic's units (e.g. for
        an FPR95 reduction, the baseline's own FPR95: it cannot lose more); the power is
        computed at the smaller of it and the spec's ``effect`` (:func:`effect_used`). NaN: none.
    :param effect_cap_why: what the cap is, in a few words ("CE's own ODIN FPR95 here").
    :param power_at: ``power_at(effect, alpha)``, the power of the study's own test at any
        effect (e.g. a two-stage test's); the engine calls it at the effect it uses. Needed when
        a cap applies to a measurement without samples.
    :param p_at: ``p_at(value, direction)``, the one-sided p of the study's own test that the
        statistic lies on the ``direction`` side of ``value``; the engine uses it to test the
        statistic against the paper's number (``ClaimSpec.paper_value``). Samples need none.
    """

    value: float
    detail: str = ""
    p_value: float = math.nan
    samples: tuple[float, ...] = ()
    n: int = 0
    power: float = math.nan
    method: str = ""
    p_opposite: float = math.nan
    interval: tuple[float, float] | None = None
    se: float = math.nan
    effect_cap: float = math.nan
    effect_cap_why: str = ""
    power_at: Callable[[float, float], float] | None = field(default=None, compare=False)
    p_at: Callable[[float, str], float] | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.interval is not None:
            lo, hi = (float(v) for v in self.interval)
            if lo > hi:
                raise ValueError(f"interval ({lo}, {hi}) has its ends reversed")
            object.__setattr__(self, "interval", (lo, hi))
        if self.samples:
            object.__setattr__(self, "samples", tuple(float(x) for x in self.samples))
            object.__setattr__(self, "n", len(self.samples))
            if not self.method:
                object.__setattr__(self, "method", "t")


@dataclass(frozen=True)
class Claim:
    """One claim whole: what it says and how it is judged (``spec``) and how it is measured
    (``measure``: a named function of the study's evidence, e.g. ``measure(evidence)`` or a
    ``functools.partial`` of one for a claim declared per setting, returning the claim's
    :class:`Measurement`). Changing a claim means editing its one entry in its study's list."""

    spec: ClaimSpec
    measure: Callable[[object], Measurement]

    @property
    def id(self) -> str:
        return self.spec.id


def judge(
    paper: str,
    claims: Iterable[Claim],
    evidence: object,
    *,
    alpha: float,
    headline: Sequence[str] = (),
) -> pd.DataFrame:
    """The claims table of ``claims``: each measured on ``evidence`` (in declaration order, so a
    measurement may reuse what an earlier one cached on the evidence), all judged together by
    :func:`evaluate_claims` (one family)."""
    claims = list(claims)
    measurements = {c.id: c.measure(evidence) for c in claims}
    return evaluate_claims(
        paper, [c.spec for c in claims], measurements, alpha=alpha, headline=headline
    )


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


def sign_test(samples: Sequence[float], threshold: float, direction: str) -> float:
    """Exact one-sided sign test: p of at least as many samples strictly on the ``direction``
    side of ``threshold`` under Binomial(n, 1/2), samples equal to the threshold dropped (the
    usual convention). NaN without samples off the threshold."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    x = x[np.isfinite(x) & (x != threshold)]
    if len(x) == 0:
        return math.nan
    greater = direction in (">", ">=")
    k = int((x > threshold).sum() if greater else (x < threshold).sum())
    return float(stats.binom.sf(k - 1, len(x), 0.5))


def t_interval(samples: Sequence[float], alpha: float) -> tuple[float, float]:
    """The ``1 − 2·alpha`` t interval of the samples' mean (the interval of the TOST at level
    ``alpha``); a point for samples without spread, NaNs for fewer than 2."""
    from scipy import stats

    x = np.asarray(samples, dtype=float)
    if len(x) < 2 or not np.all(np.isfinite(x)):
        return math.nan, math.nan
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    half = float(stats.t.ppf(1 - alpha, len(x) - 1)) * sd / math.sqrt(len(x))
    return mean - half, mean + half


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


@lru_cache(maxsize=4)
def _permutations(n: int) -> np.ndarray:
    """Every permutation of ``range(n)`` as an ``(n!, n)`` int8 array (n ≤ 10: 3.6 M rows)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def spearman_exact_p(x, y, alternative: str = "greater") -> float:
    """Exact one-sided p of Spearman's rho under the permutation null (every pairing of ``y``
    with ``x`` equally likely), by enumerating all ``n!`` permutations (``n`` ≤
    :data:`EXACT_RANK_MAX_N`); ties use average ranks. p = P(rho_perm ≥ rho) (``"greater"``)
    or P(rho_perm ≤ rho) (``"less"``). E.g. n = 4, rho = 1: 1/24; rho = 0.8: 4/24."""
    return _spearman_exact(x, y)[0 if alternative == "greater" else 1]


def _spearman_exact(x, y) -> tuple[float, float]:
    """(P(rho_perm ≥ rho), P(rho_perm ≤ rho)) by enumeration, in chunks (memory stays small)."""
    from scipy import stats

    rx = stats.rankdata(np.asarray(x, dtype=float))
    ry = stats.rankdata(np.asarray(y, dtype=float))
    n = len(rx)
    if n > EXACT_RANK_MAX_N:
        raise ValueError(
            f"exact Spearman p enumerates n! permutations; n = {n} > {EXACT_RANK_MAX_N}"
        )
    cx, cy = rx - rx.mean(), ry - ry.mean()
    denom = math.sqrt(float((cx**2).sum() * (cy**2).sum()))
    if denom == 0:
        return math.nan, math.nan
    observed = float(cx @ cy) / denom
    perms = _permutations(n)
    ge = le = 0
    tol = 1e-9
    for i in range(0, len(perms), 250_000):
        null = (cy[perms[i : i + 250_000]] @ cx) / denom
        ge += int((null >= observed - tol).sum())
        le += int((null <= observed + tol).sum())
    return ge / len(perms), le / len(perms)


def spearman(x, y, *, what: str = "", alternative: str = "greater") -> Measurement:
    """Spearman rank correlation of ``x`` and ``y`` with its one-sided p (``alternative``:
    ``"greater"`` for a claimed rise, ``"less"`` for a claimed fall), ``n`` points. Up to
    :data:`EXACT_RANK_MAX_N` points both one-sided p's are exact (permutation distribution,
    :func:`spearman_exact_p`); beyond, scipy's t approximation."""
    from scipy import stats

    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative {alternative!r} is not 'greater' or 'less'")
    x, y = pd.Series(x, dtype=float).to_numpy(), pd.Series(y, dtype=float).to_numpy()
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return Measurement(math.nan, f"{what}too few distinct points ({len(x)}) for Spearman")
    other = "less" if alternative == "greater" else "greater"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.spearmanr(x, y, alternative=alternative)
        if len(x) <= EXACT_RANK_MAX_N:
            ge, le = _spearman_exact(x, y)
            p, p_opp = (ge, le) if alternative == "greater" else (le, ge)
            how = "exact permutation p"
        else:
            p = float(r.pvalue)
            p_opp = float(stats.spearmanr(x, y, alternative=other).pvalue)
            how = "t-approximate p"
    return Measurement(
        float(r.statistic),
        f"{what}Spearman rho {r.statistic:.3f} over {len(x)} points "
        f"(one-sided {how} = {p:.3g}, alternative rho {'>' if alternative == 'greater' else '<'} 0)",
        p,
        n=len(x),
        method="spearman",
        p_opposite=p_opp,
    )


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


def bh_adjust(p: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p's (step-up, false discovery rate) of ``p`` in its order:
    ``min over j ≥ i of m · p_(j) / j`` for the i-th smallest, capped at 1."""
    x = np.asarray(p, dtype=float)
    m = len(x)
    if m == 0:
        return x
    order = np.argsort(x, kind="stable")
    ranked = x[order] * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def holm_adjust(p: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p's (family-wise error) of ``p`` in its order: ``max over
    j ≤ i of (m − j + 1) · p_(j)`` for the i-th smallest, capped at 1."""
    x = np.asarray(p, dtype=float)
    m = len(x)
    if m == 0:
        return x
    order = np.argsort(x, kind="stable")
    ranked = np.maximum.accumulate(x[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


def _is_headline(cid: str, patterns: Sequence[str]) -> bool:
    from fnmatch import fnmatchcase

    return any(fnmatchcase(cid, pat) for pat in patterns)


def _family(
    ids: Sequence[str], p: Mapping[str, float], headline: Sequence[str]
) -> dict[str, tuple[float, float, str]]:
    """Per tested claim id: (BH adjusted p over every tested claim, Holm adjusted p over the
    tested headline rows or NaN, how)."""
    if not ids:
        return {}
    bh = dict(zip(ids, bh_adjust([p[i] for i in ids]), strict=True))
    how = f"Benjamini–Hochberg over the {len(ids)} tested claims"
    heads = [i for i in ids if _is_headline(i, headline)]
    holm = dict(zip(heads, holm_adjust([p[i] for i in heads]), strict=True))
    return {
        i: (
            float(bh[i]),
            float(holm.get(i, math.nan)),
            f"{how}; Holm over the {len(heads)} tested headline claims" if i in holm else how,
        )
        for i in ids
    }


def evaluate_claims(
    paper: str,
    specs: Iterable[ClaimSpec],
    measurements: Mapping[str, Measurement],
    *,
    alpha: float,
    headline: Sequence[str] = (),
) -> pd.DataFrame:
    """Judge every claim with one rule; returns the claims table (columns :data:`COLUMNS`),
    premises first, then claims and sanity rows in declaration order. ``headline``: the ids (or
    ``fnmatch`` patterns) of the study's headline claims, adjusted by Holm too (see the module
    docstring, family control)."""
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
    tested: dict[str, _Tested] = {s.id: _test(s, measurements[s.id], alpha) for s in specs}
    adjusted: dict[str, tuple[float, float, str]] = {}

    def decide(cid: str, stack=()) -> tuple[bool, str]:
        if cid in verdict:
            return verdict[cid]
        if cid in stack:
            raise ValueError(f"claim {cid} depends on itself through {stack}")
        s, m, t = by_id[cid], measurements[cid], tested[cid]
        for pid in s.requires:
            if pid not in by_id:
                raise ValueError(f"claim {cid} requires the unknown premise {pid!r}")
            held, text = decide(pid, (*stack, cid))
            if not held:
                why = (
                    "could not be evaluated"
                    if text.startswith("cannot test")
                    else "is not established"
                    if text.startswith("not established")
                    else "does not hold"
                )
                if s.kind != "sanity" and t.p_opposite < alpha:
                    # the premise gates the paper's claim, but never hides what the data say
                    verdict[cid] = (
                        False,
                        f"cannot test as the paper's claim (premise {pid} {why}) — here the "
                        f"opposite is significant (p = {_fmt_p(t.p_opposite)})",
                    )
                else:
                    verdict[cid] = (
                        False,
                        f"cannot test: premise {pid} {why}{_measured_null(s, m, t, alpha)}",
                    )
                return verdict[cid]
        if math.isnan(m.value):  # e.g. a Spearman rho of a constant series
            verdict[cid] = (False, "cannot test: the statistic is undefined (see detail)")
            return verdict[cid]
        if s.kind == "sanity":
            side = bool(_OPS[s.direction](m.value, s.threshold))
            verdict[cid] = (side, "sanity check passes" if side else "sanity check fails")
            return verdict[cid]
        parts_ok = all(decide(part, (*stack, cid))[0] for part in s.all_of)
        p_adj, p_holm, _ = adjusted.get(cid, (t.p, math.nan, ""))
        if s.test == "equivalence":
            verdict[cid] = _equivalence_verdict(s, t, parts_ok, alpha, p_adj)
            return verdict[cid]
        if math.isnan(t.p):
            verdict[cid] = (False, "cannot test: no significance test (fewer than 2 samples)")
            return verdict[cid]
        ok = t.observed == "as claimed" and p_adj < alpha
        # significant alone, not after the family adjustment: the verdict says so
        alone = (
            f"p = {_fmt_p(t.p)} alone, {_fmt_p(p_adj)} after the family adjustment"
            if t.observed == "as claimed" and t.p < alpha <= p_adj
            else ""
        )
        if ok and parts_ok and p_holm >= alpha:
            # held in its family (BH) but not family-wise among the headline claims (Holm)
            verdict[cid] = (
                True,
                f"holds (not after Holm over the headline claims: p = {_fmt_p(p_holm)})",
            )
        elif ok and parts_ok:
            verdict[cid] = (True, "holds")
        elif ok:
            verdict[cid] = (False, "does not hold (a part it needs does not hold)")
        elif t.p_opposite < alpha:  # the data speak against the claim, whatever the power
            verdict[cid] = (
                False,
                f"does not hold (the opposite is significant, p = {_fmt_p(t.p_opposite)})",
            )
        elif (not math.isnan(t.power) and t.power < POWER_TARGET) or (
            math.isnan(t.power) and s.kind == "claim"
        ):
            # not significant without the power to see the paper's effect (or with no effect
            # size to power at): not "false"; an estimate on the other side says so
            power = "n/a" if math.isnan(t.power) else f"{t.power:.2f}"
            other = (
                f"estimate in the opposite direction, p_opp = {_fmt_p(t.p_opposite)}"
                if t.observed == "opposite"
                else ""
            )
            notes = "".join(_also(x) for x in (other, alone) if x)
            verdict[cid] = (False, f"too few seeds to tell (power {power}{notes})")
        elif s.kind == "premise" and t.observed == "as claimed":
            # on the needed side but not significant: not shown, and not shown false either
            verdict[cid] = (False, f"not established (p = {_fmt_p(t.p)})")
        else:  # a premise must be shown; a claim with the power to see the paper's effect
            verdict[cid] = (False, f"does not hold ({alone})" if alone else "does not hold")
        return verdict[cid]

    # premises first (never adjusted: the regime is tested on its own), then the family of the
    # claims they leave testable, adjusted together, then the claims on their adjusted p
    for s in specs:
        if s.kind == "premise":
            decide(s.id)

    def testable(s: ClaimSpec) -> bool:
        return (
            s.kind == "claim"
            and not math.isnan(tested[s.id].p)
            and not math.isnan(measurements[s.id].value)
            and all(decide(pid)[0] for pid in s.requires if pid in by_id)
        )

    family = [s.id for s in specs if testable(s)] if _FAMILY.get() else []
    adjusted.update(_family(family, {i: tested[i].p for i in family}, headline))

    # premises that hold by a hair, and every row that rests on one carries the mark
    thin = {
        s.id: tested[s.id].p
        for s in specs
        if s.kind == "premise"
        and decide(s.id)[0]
        and BORDERLINE_P <= tested[s.id].p < alpha
        and not math.isclose(tested[s.id].p, _p_floor(measurements[s.id]), rel_tol=1e-9)
    }

    order = {"premise": 0, "claim": 1, "sanity": 2}
    rows = []
    for s in sorted(specs, key=lambda s: order[s.kind]):
        ok, text = decide(s.id)
        m, t = measurements[s.id], tested[s.id]
        marks = [pid for pid in _rests_on(by_id, s.id) if pid in thin]
        if s.id in thin:
            text = f"{text} (borderline, p = {_fmt_p(t.p)})"
        elif marks and s.kind != "sanity" and not text.startswith("cannot test"):
            text += " — rests on the borderline premise" + ("s " if len(marks) > 1 else " ")
            text += ", ".join(f"{pid} (p = {_fmt_p(thin[pid])})" for pid in marks)
        sanity = s.kind == "sanity"
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
                "p_value": math.nan if sanity else float(t.p),
                "p_adjusted": adjusted.get(s.id, (math.nan,) * 3)[0],
                "p_holm": adjusted.get(s.id, (math.nan,) * 3)[1],
                "adjustment": adjusted.get(s.id, (math.nan, math.nan, ""))[2],
                "alpha": float(alpha),
                "n": int(m.n),
                "effect": math.nan if s.effect is None else float(s.effect),
                "paper_value": math.nan if s.paper_value is None else float(s.paper_value),
                "effect_source": s.effect_source,
                "power": math.nan if sanity else float(t.power),
                "effect_used": math.nan if sanity else effect_used(s, m)[0],
                "effect_note": "" if sanity else effect_used(s, m)[1],
                "p_paper": versus_paper(s, m, alpha)[0],
                "vs_paper": versus_paper(s, m, alpha)[1],
                "detail": m.detail,
                "test": s.test,
                "observed": t.observed,
                "p_opposite": math.nan if sanity else float(t.p_opposite),
                "selection": s.selection,
                "confirmation": s.confirmation,
                "holds": bool(ok),
                "supports": bool(ok) and s.kind == "claim",
                "borderline": ", ".join(([s.id] if s.id in thin else []) + marks),
                "verdict": text,
                "replicates": NOT_REPLICATED,
            }
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["holds"] = df["holds"].astype(bool)
    df["supports"] = df["supports"].astype(bool)
    df["n"] = df["n"].astype("int64")
    return df


def _measured_null(s: ClaimSpec, m: Measurement, t: _Tested, alpha: float) -> str:
    """For a claim its premise leaves untested: what was measured, when the test had the power
    to see the paper's effect and saw nothing on either side ("; measured 1.5 ± 2.4 at power
    1.00"); "" otherwise."""
    if (
        s.kind != "claim"
        or math.isnan(m.value)
        or not t.power >= POWER_TARGET
        or not t.p >= alpha
        or not t.p_opposite >= alpha
    ):
        return ""
    if len(m.samples) > 1:
        spread = f" ± {float(np.std(m.samples, ddof=1)):.3g} (sd over {len(m.samples)})"
    elif math.isfinite(m.se):
        spread = f" ± {m.se:.3g} (SE)"
    else:
        spread = f" (p = {_fmt_p(t.p)})"
    return f"; measured {m.value:.3g}{spread} at power {t.power:.2f}"


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


def _p_floor(m: Measurement) -> float:
    """The smallest p the row's exact test can give (NaN: none): every one of ``n`` samples on
    the side, ``0.5 ** n`` (the sign test, and the t-test of samples without spread); a perfect
    exact rank correlation over ``n`` points, ``1 / n!``. A premise at its test's floor is as
    shown as its seeds allow, not borderline."""
    if m.samples and m.method in ("t", "sign"):
        return 0.5 ** len(m.samples)
    if m.method == "spearman" and 0 < m.n <= EXACT_RANK_MAX_N:
        return 1.0 / math.factorial(m.n)
    return math.nan


def _rests_on(by_id: Mapping[str, ClaimSpec], cid: str) -> list[str]:
    """The premises row ``cid`` rests on: its ``requires`` and those of its ``all_of`` parts
    (and of those premises), each once, in order."""
    out: list[str] = []
    stack = [cid]
    seen = {cid}
    while stack:
        s = by_id.get(stack.pop(0))
        if s is None:
            continue
        for nxt in (*s.requires, *s.all_of):
            if nxt in seen:
                continue
            seen.add(nxt)
            stack.append(nxt)
            if nxt in by_id and by_id[nxt].kind == "premise":
                out.append(nxt)
    return out


def _also(note: str) -> str:
    return f"; {note}" if note else ""


def _equivalence_verdict(
    s: ClaimSpec, t: _Tested, parts_ok: bool, alpha: float, p_adj: float
) -> tuple[bool, str]:
    """holds (interval inside ± bar), does not hold (entirely outside), not established. Where
    a p is known it must agree (samples without spread: the interval is a point and the sign
    test's 0.5 ** n decides), and so must its family-adjusted p (``p_adj``)."""
    lo, hi = t.interval
    bar = s.threshold
    if math.isnan(lo) or math.isnan(hi):
        return False, "cannot test: no significance test (fewer than 2 samples)"
    inner = _OPS[s.direction]
    inside = inner(-lo, bar) and inner(hi, bar) and not t.p >= alpha
    if inside and not p_adj < alpha:
        return False, (
            f"not established (interval [{lo:.3g}, {hi:.3g}] inside ± {bar:g}, but p = "
            f"{_fmt_p(t.p)} alone, {_fmt_p(p_adj)} after the family adjustment)"
        )
    if inside and parts_ok:
        return True, "holds"
    if inside:
        return False, "does not hold (a part it needs does not hold)"
    if (hi < -bar or lo > bar) and not t.p_opposite >= alpha:
        return False, f"does not hold (interval [{lo:.3g}, {hi:.3g}] lies outside ± {bar:g})"
    return False, f"not established (interval [{lo:.3g}, {hi:.3g}] straddles the bar)"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(x, fmt: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _needed(r) -> str:
    if r.get("test") == "equivalence":
        return f"within ± {r['threshold']:g}"
    return f"{r['direction']} {r['threshold']:g}"


def _observed(r) -> str:
    obs = r.get("observed")
    if not isinstance(obs, str) or not obs:
        return "n/a"
    return f"{obs} (p opp. {_num(r.get('p_opposite', math.nan), '.2g')})"


def _detail(r) -> str:
    extra = [
        f"{label}: {r[key]}"
        for key, label in (("selection", "settings chosen on"), ("confirmation", "confirmed on"))
        if isinstance(r.get(key), str) and r.get(key)
    ]
    return "; ".join([str(r["detail"]), *extra]) if extra else str(r["detail"])


def verdict_class(text: str) -> str:
    """A verdict's words without its numbers and notes: what two seed sets must share to
    replicate. The text up to its first parenthesis, dash or semicolon ("holds", "does not
    hold", "too few seeds to tell", "not established", "cannot test: premise P1 does not
    hold", "sanity check passes"), with "(the opposite is significant)" kept: a significant
    opposite is not the same outcome as a powered null."""
    import re

    text = str(text)
    head = re.split(r" \(| — |;", text, maxsplit=1)[0].strip()
    if "opposite is significant" in text:
        head += " (the opposite is significant)"
    return head


def replication_column(
    primary: pd.DataFrame, fresh: pd.DataFrame | None, not_replicated: Sequence[str] = ()
) -> pd.DataFrame:
    """``primary`` with its ``replicates`` column set from ``fresh`` (the same claims judged on
    the fresh seeds): "yes" when a row's verdict there has the same words
    (:func:`verdict_class`), "no: <verdict on the fresh seeds>" otherwise;
    :data:`NOT_REPLICATED` for every row when ``fresh`` is None, for a row whose id matches one
    of the ``not_replicated`` patterns (its frames are not re-run on fresh seeds) and for a row
    the fresh table lacks. Nothing else changes."""
    out = primary.copy()
    if fresh is None:
        out["replicates"] = NOT_REPLICATED
        return out
    again = dict(zip(fresh["claim_id"], fresh["verdict"], strict=True))
    column = []
    for cid, verdict in zip(out["claim_id"], out["verdict"], strict=True):
        if _is_headline(cid, not_replicated) or cid not in again:
            column.append(NOT_REPLICATED)
        elif verdict_class(again[cid]) == verdict_class(verdict):
            column.append("yes")
        else:
            column.append(f"no: {again[cid]}")
    out["replicates"] = column
    return out


def restrict_to_seeds(frames: Mapping[str, pd.DataFrame], seeds: Sequence[int]) -> dict:
    """Each frame that carries a ``seed`` column restricted to ``seeds`` and its rows without a
    seed (e.g. a theory curve); the others as they are. A frame with a ``seed`` column but no
    row of those seeds is an error (one sentence)."""
    keep = {int(s) for s in seeds}
    out = {}
    for name, frame in frames.items():
        if "seed" in frame.columns:
            seeded = frame["seed"].notna()
            mine = seeded & frame["seed"].isin(keep)
            frame = frame[mine | ~seeded].reset_index(drop=True)
            if not mine.any():
                raise ValueError(
                    f"The {name} frame has no rows for the seeds {sorted(keep)} it is "
                    "replicated on."
                )
        out[name] = frame
    return out


@dataclass(frozen=True)
class Replication:
    """The fresh seed set a study's claims are judged on a second time: its own ``frames``
    (frame name -> frame, computed on the fresh seeds; a frame not listed is the primary one,
    and the rows matching ``not_replicated`` read :data:`NOT_REPLICATED`), the claim
    function's ``section`` for those seeds, and the ``seeds``."""

    frames: Mapping[str, pd.DataFrame]
    section: Mapping
    seeds: Sequence[int]
    not_replicated: Sequence[str] = ()


def claims_with_replication(
    claims_of: Callable[[Mapping, Mapping], pd.DataFrame],
    frames: Mapping[str, pd.DataFrame],
    section: Mapping,
    replication: Replication | None = None,
) -> pd.DataFrame:
    """The claims table ``claims_of(frames, section)`` with its ``replicates`` column: judged
    again on ``replication``'s fresh seeds (its frames restricted to them by
    :func:`restrict_to_seeds`, each seed set with its own family adjustment), merged by
    :func:`replication_column`. Without ``replication`` every row reads
    :data:`NOT_REPLICATED`."""
    primary = claims_of(frames, section)
    if replication is None:
        return replication_column(primary, None)
    fresh_frames = {
        **frames,
        **restrict_to_seeds(replication.frames, replication.seeds),
    }
    fresh = claims_of(fresh_frames, replication.section)
    return replication_column(primary, fresh, replication.not_replicated)


def _replicates(r) -> str:
    v = r.get("replicates")
    return v if isinstance(v, str) and v else NOT_REPLICATED


def render_claims_markdown(df: pd.DataFrame, title: str = "Claims") -> str:
    """The claims table as markdown: premises, then claims, then sanity rows, each with its value,
    what it needs (a side of the threshold, or "within ± bar" for an equivalence), one-sided p,
    the family-adjusted p the verdict uses, n, power and the effect it is computed at (to detect the paper's effect), the observed direction with the opposite's p,
    the verdict and whether it replicates on fresh seeds; the detail names the selection and confirmation data where given."""
    lines = [
        f"### {title}",
        "",
        "| kind | id | claim | statistic | value | needed | p | p adj. | n | power | effect used "
        "| observed | verdict | replicates | detail |",
        "|---|---|---|---|---:|---|---:|---:|---:|---:|---|---|---|---|---|",
    ]
    for _, r in df.iterrows():
        lines.append(
            f"| {r['kind']} | {_cell(r['claim_id'])} | {_cell(r['claim'])} | "
            f"{_cell(r['statistic'])} | {_num(r['value'], '.3g')} | "
            f"{_needed(r)} | {_num(r['p_value'], '.3g')} | "
            f"{_num(r.get('p_adjusted', math.nan), '.3g')} | {r['n']} | "
            f"{_num(r['power'], '.2f')} | {_cell(r.get('effect_note') or 'n/a')} | "
            f"{_observed(r)} | **{r['verdict']}** | "
            f"{_cell(_replicates(r))} | {_cell(_detail(r))} |"
        )
    return "\n".join(lines) + "\n"
