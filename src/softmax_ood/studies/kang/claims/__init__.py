"""Kang et al.'s claims, declared as data and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`), **per shift type** (never pooled across shift types: their
sets share the clean images, so a pooled rank correlation has no valid test; the paper itself
reports a counterexample per shift type, UTKFace with impulse noise, Fig. 9). Every row carries a
significance test: per-seed samples the engine t-tests, or a one-sided p.

Premises (first rows):

* ``fitted:<loss>`` -- each model fitted: its training loss over its OCS's training loss per seed
  (:func:`softmax_ood.analysis.premises.fitted`) below 0.5. A model that never left its constant
  cannot test reversion to it.
* ``changes:<shift>@<level>`` -- the level changes the images: per-image mean absolute pixel
  change vs the level below above ``change_epsilon`` (t-test over the images). Levels where it
  fails are **dropped** from every claim of that shift type (the report says which).
* ``discriminator_null:<set>`` -- the OOD score of a level-0 set (the clean ID split; rotation's
  ``rotation@0``) is within 0.05 of 0.5: per-repeat ``|score - 0.5|`` below 0.05.
* ``discriminator_graded`` -- fewer than half of the kept shift levels score above 0.99 (binomial
  test): a saturated score cannot grade the levels.
* ``score_rises:<shift>`` -- the OOD score rises with the level (Spearman, one-sided, over the kept
  levels, level 0 included).
* ``accuracy_falls:<shift>`` -- the classifier's accuracy at the top kept level is below level
  0's, paired over seeds.

* ``rotation_identity`` (sanity) -- ``rotation@0`` is the clean images bit for bit (max
  per-image mean |pixel change| 0).
* ``rotation_roundtrip:<t>`` -- a round trip ``rotate(rotate(x, t), -t)`` (net angle 0) scores as
  clean: per discriminator repeat, its OOD score minus the mean ``rotation@0`` score is below
  ``discriminator.roundtrip_bar`` (one-sided t-test). A rotation path that blurs fails it.
* ``predictions_change:<shift>@<level>`` -- the level changes the classifier's decisions: share
  of test images whose arg-max differs from the same clean image's, per seed, above
  ``prediction_epsilon``. Reported per level, and once more as ``predictions_change:<shift>@top``
  at the shift type's top level: the trend claims of a shift type require that row (a shift that
  moves no prediction cannot show a trend).
* ``score_separated:<shift>`` -- the top level is clearly more OOD than level 0: the OOD score at
  the top level exceeds level 0's by more than ``score_separation`` (one-sided Welch t-test over
  the discriminator repeats of the two sets: the x-axis's own uncertainty). Gates the shift's
  trend claims: along a shift whose top level the discriminator cannot tell from clean by more
  than the study's null tolerance, the order of the levels on the OOD axis is noise. It gates
  every row that reads a shift the same way: the trend rows, ``abstain_rises`` and
  ``reward_beats_classification`` (a shift the discriminator cannot tell from clean is no
  "more OOD" input, whatever the policies do there).
* ``below_breakeven:<shift>`` -- the regime of Fig. 7's claim: the classifier's accuracy at the
  top level is below the reward's break-even accuracy ``(abstain - wrong) / (correct - wrong)``
  (+1/-4/0: 0.8), where answering stops paying on average; per seed, t-test. Gates
  ``reward_beats_classification:<shift>``: above the break-even, answering still pays and the
  comparison is not the one the paper draws.
* ``reward_competitive_clean`` -- the reward model is in the paper's regime on the training
  distribution: per seed, reward prediction's mean reward on the clean test images minus the
  thresholded classifier's (policy ``classification``, the expected-reward threshold), above
  ``-CLEAN_MARGIN`` (0.05, a twentieth of a correct answer's reward: the paper's reward model is
  competitive in-distribution and better under shift). A recipe that leaves the reward model
  over-abstaining on clean images fails it, and the detail says so (its clean abstain share and
  both rewards). Gates ``abstain_rises`` and ``reward_beats_classification``: a reward model
  that is the worst policy on clean data cannot show the paper's advantage under shift.
* ``far_nontrivial:<set>`` -- the floor battery (:mod:`softmax_ood.analysis.battery`: intensity,
  spatial, spectral, nearest-neighbour and gradient-orientation detectors fitted on the ID
  training images; its best detector over the tuning and held-out families) does not solve the
  far set: on the selection half of the images (``discriminator.floor_selection_fraction``) it
  accepts more than ``far_floor_fpr95`` of the set at 95 % ID recall (one-sided binomial test
  over those images). The confirmation half's FPR95 and each family's best are in the frame.

"Top level": for a corruption the highest kept severity (its OOD score rises with severity:
``score_rises``); for rotation the kept angle with the highest OOD score (the paper poses its
claims against the OOD score, and a rotation by 180 degrees is not "more OOD" than one by 90 by
construction), gated on ``score_rises:rotation`` = that angle scores above ``rotation@0`` (per
discriminator repeat, t-test). The OOD score is independent of every trained model, so choosing
the angle on it does not select on the confirming seeds.

Claims:

* ``ocs_trend:<loss>:<shift>`` -- predictions approach the OCS as the OOD score grows: Spearman
  rho(OOD score, distance to OCS) over the kept levels, per seed *and per discriminator repeat*
  (the x-axis of repeat r is the sets' OOD scores of that repeat; the seeds share one
  discriminator, so a per-seed test alone ignores the x-axis's uncertainty and, with identical
  rhos, read a near-zero rho as significant); the mean rho is below 0 by a one-sided t-test whose
  standard error adds the seed-to-seed and repeat-to-repeat variances of the mean
  (``var(seed means)/S + var(repeat means)/R``, ``min(S, R) - 1`` degrees of freedom). Requires
  ``score_rises``, ``score_separated`` and ``predictions_change:<shift>@top``.
* ``abstain_rises:<shift>`` -- reward prediction abstains more at the top level than at level 0,
  paired over seeds (Fig. 6).
* ``reward_beats_classification:<shift>`` -- the gap between reward prediction's mean reward and
  standard (arg-max, never abstains) classification's grows from level 0 to the top level,
  paired over seeds (Fig. 7: "reward prediction increasingly outperformed standard
  classification as inputs became more OOD"). Judged only where the classifier's accuracy at
  the top level falls below the break-even (premise ``below_breakeven:<shift>``; the detail
  prints the break-even and the accuracy): above it the win or loss is mechanical. Also requires
  the fitted models, ``score_rises``, ``score_separated`` and ``reward_competitive_clean``.
  Where reward prediction over-abstains (its gap shrinks) and a premise fails, the row reads
  "cannot test as the paper's claim ... here the opposite is significant".
* ``ocs_trend:<loss>:far_ood`` -- along the far OOD sets' own OOD-score ordering (the clean split
  not included: clean ID is more confident than everything, which made the old row hold by
  construction), over the far sets whose ``far_nontrivial`` premise holds; per seed Spearman.
  Its claim text says what it tests: a trend **between** sets (each set one point at its mean
  score), not within one; and that it is **not in the paper** (whose shifts are covariate shifts
  of the training images), an extension beyond its scope.
* ``constants_mirror_ocs:<loss>`` -- Fig. 4: "the accumulated constants closely mirror the OCS".
  Per seed ``||c - OCS|| / mean_x ||p(x) - OCS||`` in prediction space (``c``: the network output
  with the input contribution of layer ``mechanism.constants_layer`` zeroed; the denominator: how
  far a clean test image's prediction lies from the OCS, averaged over images; the mean clean
  prediction is no scale, it is near the OCS by construction), below ``mirror_bar`` (0.5: the
  constants lie at most half as far from the OCS as a typical clean prediction), t-test. For a
  loss other than CE a claim that needs ``constants_reachable`` and, as a part,
  ``constants_vs_init``; for CE a **sanity** row: with balanced classes its OCS is the class
  marginal, about uniform, which any network with small logits (the untrained one too) outputs.
* ``constants_vs_init:<loss>`` -- the control of the mirror: the same ratio for the untrained
  network (same architecture, the run's seed, :func:`evaluate.initial_model`), paired over seeds;
  the trained constants must lie closer to the OCS (training moved them toward it). A part of
  the mirror, not the mirror: its detail gives the move as a share of the untrained distance and
  the trained ratio ``constants_mirror_ocs`` tests (a 1 % move toward an OCS the constants stay
  far from supports no mirror). For CE a **sanity** row (balanced classes: the untrained
  network already outputs about the uniform OCS).
* ``constants_reachable:<loss>`` (premise, losses other than CE) -- the recipe's budget could move
  the constants to the OCS at all: the sum of the learning rate over the steps to the kept
  checkpoint times Adam's largest step (``ADAM_STEP_BOUND`` = 3.16 learning rates: the farthest
  one bias can travel) over the largest component of
  ``|OCS - untrained constants|``, per seed, above 1. An SGD recipe has no such bound: the row
  reads "cannot test" there.

Settings and their selection (each row's detail says which): the discriminator's alpha is
chosen on the validation split under every shift (``selection`` table); kept levels are fixed in
advance by a stated principle (a level that does not change the images by more than
``change_epsilon`` is dropped; pixels only, no model); the bars are config constants declared
before any verdict. Every verdict is computed on the test images x the study's seeds.

Layout (issue 43, one claim one unit): :func:`claims` lists every row in the table's order, each
a :class:`~softmax_ood.analysis.claims.Claim` whose spec sits beside its named measurement in
its family's module: :mod:`.levels` (``changes``, and :func:`kept_levels`), :mod:`.regime` (the
models, decisions, rotation path, discriminator, far sets and clean-reward premises),
:mod:`.shifts` (each shift type's premises), :mod:`.trends` (``ocs_trend``, ``abstain_rises``,
``sigma_rises``, ``reward_beats_classification``), :mod:`.mechanism` (Fig. 4's constants),
:mod:`.fgsm` (Fig. 8) and :mod:`.toy` (Sec. 4.2's theory). The measurements read one
:class:`.evidence.Evidence`, which caches what several rows share; :mod:`.common` holds the
bars, effects and frame readers. :func:`evaluate_kang_claims` judges them with
:func:`~softmax_ood.analysis.claims.judge`.
"""

from __future__ import annotations

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, judge
from ..far import excluded_far
from ..shared import HEADLINE
from .common import (
    ADAM_STEP_BOUND,
    CLEAN_MARGIN,
    NULL_TOLERANCE,
    PAPER,
    REWARD,
    SATURATED,
    STANDARD,
    THRESHOLDED,
    breakeven,
    top_level,
)
from .evidence import Evidence, unresolved_shifts
from .fgsm import fgsm_claims
from .levels import change_claims, kept_levels
from .mechanism import mechanism_claims
from .regime import (
    clean_regime_claim,
    decision_claims,
    discriminator_claims,
    far_claims,
    fitted_claims,
    rotation_claims,
)
from .shifts import shift_premises
from .toy import toy_claims
from .trends import abstain_claims, advantage_claims, sigma_claims, trend_claims

__all__ = [
    "ADAM_STEP_BOUND",
    "CLEAN_MARGIN",
    "NULL_TOLERANCE",
    "PAPER",
    "REWARD",
    "SATURATED",
    "STANDARD",
    "THRESHOLDED",
    "Evidence",
    "breakeven",
    "claim_specs",
    "claims",
    "evaluate_kang_claims",
    "excluded_far",
    "kept_levels",
    "unresolved_shifts",
]

#: the figures' name for :func:`.common.top_level` (kang's own plots read it)
_top_level = top_level


def claims(section: dict) -> list[Claim]:
    """Every premise, claim and sanity row of the study section ``section``
    (:func:`..study.spec`), in the table's order, each its spec beside its measurement."""
    return [
        *fitted_claims(section),
        *change_claims(section),
        *decision_claims(section),
        *rotation_claims(section),
        *discriminator_claims(section),
        *far_claims(section),
        *shift_premises(section),
        clean_regime_claim(section),
        *trend_claims(section),
        *abstain_claims(section),
        *sigma_claims(section),
        *advantage_claims(section),
        *mechanism_claims(section),
        *fgsm_claims(section),
        *toy_claims(section),
    ]


def claim_specs(spec: dict) -> list[ClaimSpec]:
    """Every premise and claim of the study section ``spec``, each with what decided its
    settings and what confirms it (issue 25)."""
    return [c.spec for c in claims(spec)]


def evaluate_kang_claims(frames: dict, spec: dict) -> pd.DataFrame:
    """The claims table (premises first) from the long frames of :func:`..frames.load_frames`
    (``grid``, ``policies``, ``fit``, ``levels``, ``ood_scores``, ``mechanism``,
    ``components``; optionally ``adversarial``, ``theory``)."""
    evidence = Evidence(frames, spec)
    return judge(PAPER, claims(spec), evidence, alpha=evidence.alpha, headline=HEADLINE)
