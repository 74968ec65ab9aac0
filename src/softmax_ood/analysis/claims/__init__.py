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
established`` / ``premise X does not hold``; a required claim that had too few seeds to tell:
``premise X is not established (too few seeds to tell)``).

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

The package: :mod:`.spec` (:class:`ClaimSpec`, :class:`Measurement`, :class:`Claim`, the
columns and constants); :mod:`.significance` (the t, sign and Spearman tests and the
measurements built on them); :mod:`.power`; :mod:`.tested` (each row's test and the test
against the paper's number); :mod:`.family` (BH and Holm); :mod:`.verdict` (the decision rule);
:mod:`.table` (:func:`judge`, :func:`evaluate_claims`); :mod:`.replication`; :mod:`.render`.
"""

from __future__ import annotations

from .family import bh_adjust, family_control, holm_adjust
from .power import effect_used, t_power, tost_power
from .render import render_claims_markdown
from .replication import (
    Replication,
    claims_with_replication,
    replication_column,
    restrict_to_seeds,
    verdict_class,
)
from .significance import (
    fmt_mean_std,
    one_sided_t,
    paired,
    sign_test,
    spearman,
    spearman_exact_p,
    t_interval,
)
from .spec import (
    BORDERLINE_P,
    COLUMNS,
    KINDS,
    NOT_REPLICATED,
    POWER_TARGET,
    TESTS,
    Claim,
    ClaimSpec,
    Measurement,
)
from .table import evaluate_claims, judge
from .tested import versus_paper

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
