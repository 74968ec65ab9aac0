"""The claims table: :func:`judge` measures a study's claims on its evidence and
:func:`evaluate_claims` judges them with one rule, in steps: check the specs, test every row,
decide the premises, adjust the family of the claims they leave testable, mark the rows resting
on a borderline premise, and write one row per claim (:data:`COLUMNS`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from .family import _FAMILY, _family
from .power import effect_used
from .spec import (
    BORDERLINE_P,
    COLUMNS,
    EXACT_RANK_MAX_N,
    NOT_REPLICATED,
    Claim,
    ClaimSpec,
    Measurement,
)
from .tested import _fmt_p, _test, versus_paper
from .verdict import _Judging


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
    _check(specs, measurements)
    judging = _Judging(
        {s.id: s for s in specs},
        measurements,
        {s.id: _test(s, measurements[s.id], alpha) for s in specs},
        alpha,
    )
    # premises first (never adjusted: the regime is tested on its own), then the family of the
    # claims they leave testable, adjusted together, then the claims on their adjusted p
    for s in specs:
        if s.kind == "premise":
            judging.decide(s.id)
    family = [s.id for s in specs if judging.testable(s)] if _FAMILY.get() else []
    judging.adjusted.update(_family(family, {i: judging.tested[i].p for i in family}, headline))
    thin = _borderline(specs, judging)
    order = {"premise": 0, "claim": 1, "sanity": 2}
    rows = [_row(paper, s, judging, thin) for s in sorted(specs, key=lambda s: order[s.kind])]
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["holds"] = df["holds"].astype(bool)
    df["supports"] = df["supports"].astype(bool)
    df["n"] = df["n"].astype("int64")
    return df


def _check(specs: Sequence[ClaimSpec], measurements: Mapping[str, Measurement]) -> None:
    """Every claim id once, each with its measurement, and no rank correlation tested against
    anything but 0 (its p tests rho against 0)."""
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claim ids repeat in {ids}")
    missing = [i for i in ids if i not in measurements]
    if missing:
        raise ValueError(f"no measurement for claim(s) {missing}")
    for s in specs:
        if measurements[s.id].method == "spearman" and s.threshold != 0:
            raise ValueError(
                f"claim {s.id}: a rank correlation's p tests rho against 0, not {s.threshold:g}"
            )


def _borderline(specs: Sequence[ClaimSpec], judging: _Judging) -> dict[str, float]:
    """The premises that hold by a hair, with their p: p in [:data:`BORDERLINE_P`, alpha), and
    not the smallest p their exact test can give at this n; every row resting on one carries
    the mark."""
    tested, alpha = judging.tested, judging.alpha
    return {
        s.id: tested[s.id].p
        for s in specs
        if s.kind == "premise"
        and judging.decide(s.id)[0]
        and BORDERLINE_P <= tested[s.id].p < alpha
        and not math.isclose(tested[s.id].p, _p_floor(judging.measurements[s.id]), rel_tol=1e-9)
    }


def _row(paper: str, s: ClaimSpec, judging: _Judging, thin: Mapping[str, float]) -> dict:
    """Row ``s`` of the claims table: its spec, measurement and test, the family's adjusted p's,
    the paper's number as a second test, and its verdict, marked where it rests on a
    borderline premise (one of ``thin``)."""
    ok, text = judging.decide(s.id)
    m, t = judging.measurements[s.id], judging.tested[s.id]
    adjusted, alpha = judging.adjusted, judging.alpha
    marks = [pid for pid in _rests_on(judging.by_id, s.id) if pid in thin]
    if s.id in thin:
        text = f"{text} (borderline, p = {_fmt_p(t.p)})"
    elif marks and s.kind != "sanity" and not text.startswith("cannot test"):
        text += " — rests on the borderline premise" + ("s " if len(marks) > 1 else " ")
        text += ", ".join(f"{pid} (p = {_fmt_p(thin[pid])})" for pid in marks)
    sanity = s.kind == "sanity"
    return {
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
