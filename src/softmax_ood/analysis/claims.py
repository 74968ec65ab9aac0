"""The claims engine: a paper's claims declared as data, measured by the study, judged here.

A study declares each claim as a :class:`ClaimSpec` (what the paper says, the statistic, a
threshold and a direction, optionally a one-sided test and the premises it rests on) and supplies
one :class:`Measurement` per claim id. :func:`evaluate_claims` applies one decision rule to all:

* ``holds`` iff ``value <direction> threshold`` and, for ``test="paired"``, ``p < alpha``;
* ``all_of``: holds iff every listed claim holds (and its own comparison, if any);
* a claim whose statistic is undefined (NaN, e.g. a correlation of a constant series) gets
  ``cannot test: the statistic is undefined``, never ``does not hold``;
* a claim whose premise (``requires``) does not hold gets the verdict ``cannot test`` and
  ``holds = False``, with the failed premise named: a failed premise is not evidence against the
  paper. Premise rows come first in the table.

Comparative measurements use :func:`paired`: per-seed values of two conditions, paired by seed;
value = mean difference ``high - low``, p from ``scipy.stats.ttest_rel(..., alternative="greater")``
(with one common seed there is no test and the detail says so; with all differences equal the
t statistic is infinite and p is 0 or 1). :func:`spearman` gives a rank correlation with its p.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from .seeds import summarise

__all__ = [
    "COLUMNS",
    "ClaimSpec",
    "Measurement",
    "evaluate_claims",
    "fmt_mean_std",
    "paired",
    "render_claims_markdown",
    "spearman",
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
    "detail",
    "holds",
    "verdict",
]
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper as data.

    :param direction: ``">"``, ``">="``, ``"<"`` or ``"<="``: how ``value`` must compare with
        ``threshold`` for the claim to hold.
    :param test: ``None`` (the comparison alone) or ``"paired"`` (also ``p < alpha``).
    :param premise: a premise row (the regime the paper's claims assume), listed first.
    :param requires: ids of premises; if one fails this claim cannot be tested.
    :param all_of: ids of claims that must all hold too (a headline made of parts).
    """

    id: str
    text: str
    statistic: str
    threshold: float = 0.0
    direction: str = ">"
    test: str | None = None
    premise: bool = False
    requires: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()

    def __post_init__(self):
        if self.direction not in _OPS:
            raise ValueError(
                f"claim {self.id}: direction {self.direction!r} is not one of {list(_OPS)}"
            )
        if self.test not in (None, "paired"):
            raise ValueError(f"claim {self.id}: test {self.test!r} is not None or 'paired'")


@dataclass(frozen=True)
class Measurement:
    """A claim's statistic on this run's results (``p_value`` NaN when there is no test)."""

    value: float
    detail: str = ""
    p_value: float = math.nan


def fmt_mean_std(values: pd.Series, unit: str = "") -> str:
    mean, std, _ = summarise(values)
    s = "n/a" if math.isnan(std) else f"{std:.2f}"
    return f"{mean:.2f} ± {s}{unit}"


def paired(
    high: pd.Series, low: pd.Series, *, names: tuple[str, str] = ("A", "B"), percent: bool = False
) -> Measurement:
    """``high - low`` over the seeds both have (indexes are seeds): mean difference and the
    one-sided paired t-test's p for "high > low"."""
    from scipy import stats

    seeds = sorted(set(high.dropna().index) & set(low.dropna().index))
    if not seeds:
        raise ValueError(f"{names[0]} and {names[1]} share no seed, so no paired comparison.")
    a, b = high.loc[seeds].astype(float), low.loc[seeds].astype(float)
    diff = a - b
    mean_diff, n = float(diff.mean()), len(seeds)
    unit, dunit = (" %", " pp") if percent else ("", "")
    base = (
        f"{names[0]} {fmt_mean_std(a, unit)} vs {names[1]} {fmt_mean_std(b, unit)}; "
        f"paired difference {mean_diff:.2f}{dunit} over {n} seed(s)"
    )
    if n == 1:
        return Measurement(mean_diff, base + "; no test, 1 seed", math.nan)
    spread = float(diff.max() - diff.min())
    if spread <= 1e-9 * max(1.0, abs(mean_diff)):
        p = 0.0 if mean_diff > 0 else 1.0
        ptxt = f"{p:g} (all paired differences equal)"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(stats.ttest_rel(a.to_numpy(), b.to_numpy(), alternative="greater").pvalue)
        ptxt = "n/a" if math.isnan(p) else f"{p:.3g}"
    per_seed = ", ".join(f"{s}: {d:.2f}" for s, d in zip(seeds, diff, strict=True))
    return Measurement(
        mean_diff, base + f"; one-sided paired t-test p = {ptxt}; per seed {per_seed}", p
    )


def spearman(x, y, *, what: str = "") -> Measurement:
    """Spearman rank correlation of ``x`` and ``y`` with its two-sided p."""
    from scipy import stats

    x, y = pd.Series(x, dtype=float).to_numpy(), pd.Series(y, dtype=float).to_numpy()
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return Measurement(math.nan, f"{what}: too few distinct points ({len(x)}) for Spearman")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.spearmanr(x, y)
    return Measurement(
        float(r.statistic),
        f"{what}Spearman rho {r.statistic:.3f} over {len(x)} points (p = {r.pvalue:.3g})",
        float(r.pvalue),
    )


def _judge(spec: ClaimSpec, m: Measurement, alpha: float) -> bool:
    if math.isnan(m.value):
        return False
    ok = _OPS[spec.direction](m.value, spec.threshold)
    if spec.test == "paired":
        if math.isnan(m.p_value):  # one seed: the sign alone
            return bool(ok)
        ok = ok and m.p_value < alpha
    return bool(ok)


def evaluate_claims(
    paper: str,
    specs: Iterable[ClaimSpec],
    measurements: Mapping[str, Measurement],
    *,
    alpha: float,
) -> pd.DataFrame:
    """Judge every claim with one rule; returns the claims table (columns :data:`COLUMNS`),
    premises first, then claims in declaration order."""
    specs = list(specs)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids repeat in {ids}")
    missing = [i for i in ids if i not in measurements]
    if missing:
        raise ValueError(f"no measurement for claim(s) {missing}")
    by_id = {s.id: s for s in specs}
    verdict: dict[str, tuple[bool, str]] = {}

    def decide(cid: str, stack=()) -> tuple[bool, str]:
        if cid in verdict:
            return verdict[cid]
        if cid in stack:
            raise ValueError(f"claim {cid} depends on itself through {stack}")
        s = by_id[cid]
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
        if math.isnan(measurements[cid].value):  # e.g. a Spearman rho of a constant series
            verdict[cid] = (False, "cannot test: the statistic is undefined (see detail)")
            return verdict[cid]
        ok = _judge(s, measurements[cid], alpha)
        for part in s.all_of:
            ok = ok and decide(part, (*stack, cid))[0]
        verdict[cid] = (ok, "holds" if ok else "does not hold")
        return verdict[cid]

    rows = []
    for s in sorted(specs, key=lambda s: not s.premise):
        ok, text = decide(s.id)
        m = measurements[s.id]
        rows.append(
            {
                "paper": paper,
                "claim_id": s.id,
                "kind": "premise" if s.premise else "claim",
                "claim": s.text,
                "statistic": s.statistic,
                "value": float(m.value),
                "threshold": float(s.threshold),
                "direction": s.direction,
                "p_value": float(m.p_value),
                "detail": m.detail,
                "holds": bool(ok),
                "verdict": text,
            }
        )
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["holds"] = df["holds"].astype(bool)
    return df


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_claims_markdown(df: pd.DataFrame, title: str = "Claims") -> str:
    """The claims table as markdown: premises, then claims, each with value and verdict."""
    lines = [
        f"### {title}",
        "",
        "| kind | id | claim | statistic | value | needed | verdict | detail |",
        "|---|---|---|---|---:|---|---|---|",
    ]
    for _, r in df.iterrows():
        v = "n/a" if math.isnan(r["value"]) else f"{r['value']:.3g}"
        lines.append(
            f"| {r['kind']} | {_cell(r['claim_id'])} | {_cell(r['claim'])} | "
            f"{_cell(r['statistic'])} | {v} | {r['direction']} {r['threshold']:g} | "
            f"**{r['verdict']}** | {_cell(r['detail'])} |"
        )
    return "\n".join(lines) + "\n"
