"""The claims table: :func:`judge` measures a study's claims on its evidence and
:func:`evaluate_claims` judges them with one rule (:data:`COLUMNS`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .family import _FAMILY, _family
from .power import effect_used
from .spec import (
    _OPS,
    BORDERLINE_P,
    COLUMNS,
    EXACT_RANK_MAX_N,
    NOT_REPLICATED,
    POWER_TARGET,
    Claim,
    ClaimSpec,
    Measurement,
)
from .tested import _fmt_p, _test, _Tested, versus_paper


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
