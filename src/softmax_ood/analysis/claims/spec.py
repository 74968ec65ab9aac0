"""A claim as data: its :class:`ClaimSpec` (what the paper says and how the engine judges it),
the :class:`Measurement` the study returns for it, and the :class:`Claim` pairing the spec with
its named measurement; with the claims table's :data:`COLUMNS` and the engine's fixed constants
(the kinds, the tests, the power target, the borderline p)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

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
