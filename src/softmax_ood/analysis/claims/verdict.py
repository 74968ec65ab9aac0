"""The decision rule: each row's verdict from its test, its premises and parts, and its
family-adjusted p, decided once per row, its premises and parts first (:class:`_Judging`); the
words of a row a failed premise leaves untested, of a directional claim and of an
equivalence."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .spec import _OPS, POWER_TARGET, ClaimSpec, Measurement
from .tested import _fmt_p, _Tested


@dataclass
class _Judging:
    """One claims table being judged: the specs by id, their measurements and the engine's tests
    of them at ``alpha``, the family's adjusted p's per claim id (BH, Holm, how; filled once the
    premises are decided, which are never adjusted) and every verdict decided so far."""

    by_id: Mapping[str, ClaimSpec]
    measurements: Mapping[str, Measurement]
    tested: Mapping[str, _Tested]
    alpha: float
    adjusted: dict[str, tuple[float, float, str]] = field(default_factory=dict)
    verdicts: dict[str, tuple[bool, str]] = field(default_factory=dict)

    def decide(self, cid: str, stack: tuple[str, ...] = ()) -> tuple[bool, str]:
        """Row ``cid``'s (holds, verdict), decided once; ``stack``: the rows waiting on it (a
        row that waits on itself is an error)."""
        if cid in self.verdicts:
            return self.verdicts[cid]
        if cid in stack:
            raise ValueError(f"claim {cid} depends on itself through {stack}")
        self.verdicts[cid] = self._decide(cid, stack)
        return self.verdicts[cid]

    def testable(self, s: ClaimSpec) -> bool:
        """Whether row ``s`` joins the family: a claim with a p and a defined statistic whose
        premises hold."""
        return (
            s.kind == "claim"
            and not math.isnan(self.tested[s.id].p)
            and not math.isnan(self.measurements[s.id].value)
            and all(self.decide(pid)[0] for pid in s.requires if pid in self.by_id)
        )

    def _decide(self, cid: str, stack: tuple[str, ...]) -> tuple[bool, str]:
        """The rule for one row: a failed premise leaves it untested; an undefined statistic
        cannot be tested; a sanity row is judged by the comparison alone; a claim or premise by
        its test (an equivalence's interval, or the one-sided p, adjusted in the family)."""
        s, m, t = self.by_id[cid], self.measurements[cid], self.tested[cid]
        for pid in s.requires:
            if pid not in self.by_id:
                raise ValueError(f"claim {cid} requires the unknown premise {pid!r}")
            held, text = self.decide(pid, (*stack, cid))
            if not held:
                return _untested(s, m, t, pid, text, self.alpha)
        if math.isnan(m.value):  # e.g. a Spearman rho of a constant series
            return (False, "cannot test: the statistic is undefined (see detail)")
        if s.kind == "sanity":
            side = bool(_OPS[s.direction](m.value, s.threshold))
            return (side, "sanity check passes" if side else "sanity check fails")
        parts_ok = all(self.decide(part, (*stack, cid))[0] for part in s.all_of)
        p_adj, p_holm, _ = self.adjusted.get(cid, (t.p, math.nan, ""))
        if s.test == "equivalence":
            return _equivalence_verdict(s, t, parts_ok, self.alpha, p_adj)
        if math.isnan(t.p):
            return (False, "cannot test: no significance test (fewer than 2 samples)")
        return _directional_verdict(s, t, parts_ok, self.alpha, p_adj, p_holm)


def _untested(
    s: ClaimSpec, m: Measurement, t: _Tested, pid: str, text: str, alpha: float
) -> tuple[bool, str]:
    """The verdict of a row whose premise ``pid`` did not hold (its verdict ``text``): "cannot
    test", saying why; when, there, the opposite of the claim is significant, saying that too."""
    why = (
        "could not be evaluated"
        if text.startswith("cannot test")
        else "is not established"
        if text.startswith("not established")
        else "is not established (too few seeds to tell)"
        if text.startswith("too few seeds")
        else "does not hold"
    )
    if s.kind != "sanity" and t.p_opposite < alpha:
        # the premise gates the paper's claim, but never hides what the data say
        return (
            False,
            f"cannot test as the paper's claim (premise {pid} {why}) — here the "
            f"opposite is significant (p = {_fmt_p(t.p_opposite)})",
        )
    return (False, f"cannot test: premise {pid} {why}{_measured_null(s, m, t, alpha)}")


def _directional_verdict(
    s: ClaimSpec, t: _Tested, parts_ok: bool, alpha: float, p_adj: float, p_holm: float
) -> tuple[bool, str]:
    """holds (on the claimed side, the family-adjusted p ``p_adj`` below ``alpha``, every part
    holding; a headline row that fails Holm's ``p_holm`` says so); does not hold (the opposite
    significant, or nothing seen with the power to see the paper's effect); too few seeds to
    tell (not significant without that power); not established (a premise on the needed side,
    not significant)."""
    ok = t.observed == "as claimed" and p_adj < alpha
    # significant alone, not after the family adjustment: the verdict says so
    alone = (
        f"p = {_fmt_p(t.p)} alone, {_fmt_p(p_adj)} after the family adjustment"
        if t.observed == "as claimed" and t.p < alpha <= p_adj
        else ""
    )
    if ok and parts_ok and p_holm >= alpha:
        # held in its family (BH) but not family-wise among the headline claims (Holm)
        return (
            True,
            f"holds (not after Holm over the headline claims: p = {_fmt_p(p_holm)})",
        )
    if ok and parts_ok:
        return (True, "holds")
    if ok:
        return (False, "does not hold (a part it needs does not hold)")
    if t.p_opposite < alpha:  # the data speak against the claim, whatever the power
        return (
            False,
            f"does not hold (the opposite is significant, p = {_fmt_p(t.p_opposite)})",
        )
    if (not math.isnan(t.power) and t.power < POWER_TARGET) or (
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
        return (False, f"too few seeds to tell (power {power}{notes})")
    if s.kind == "premise" and t.observed == "as claimed":
        # on the needed side but not significant: not shown, and not shown false either
        return (False, f"not established (p = {_fmt_p(t.p)})")
    # a premise must be shown; a claim with the power to see the paper's effect
    return (False, f"does not hold ({alone})" if alone else "does not hold")


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
