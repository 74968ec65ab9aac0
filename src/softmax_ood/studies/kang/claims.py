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
* ``far_nontrivial:<set>`` -- the pixel-statistics floor (:func:`softmax_ood.analysis.premises.
  pixel_floor`) does not solve the far set: it accepts more than ``far_floor_fpr95`` of it at
  95 % ID recall (one-sided binomial test over the set's images).

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
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims, paired, t_power
from ...analysis.measures import per_seed as _per_seed
from ...analysis.measures import separation as _separation
from ...analysis.premises import FITTED_SHARE, fitted, floor_not_solved
from .grid import ID_SET
from .shared import HEADLINE
from .tables import FAR, graded_shifts, main_runs, mechanism_runs

__all__ = [
    "NULL_TOLERANCE",
    "PAPER",
    "SATURATED",
    "claim_specs",
    "evaluate_kang_claims",
    "kept_levels",
]

PAPER = "Kang et al. 2024"
STANDARD = "classification_argmax"
REWARD = "reward_prediction"
NULL_TOLERANCE = 0.05  #: level-0 OOD score within this of 0.5 (issue 15)
#: reward prediction's clean mean reward may lie at most this below the thresholded
#: classifier's (a twentieth of a correct answer's +1): premise reward_competitive_clean
CLEAN_MARGIN = 0.05
THRESHOLDED = "classification"
SATURATED = 0.99  #: an OOD score above this no longer grades the level
#: the largest step of Adam (torch's default betas 0.9, 0.999) in units of the learning rate:
#: (1 - beta1) / sqrt(1 - beta2) (Kingma & Ba 2015, Sec. 2.1); a parameter cannot travel farther
#: than this times the summed learning rate
ADAM_STEP_BOUND = (1 - 0.9) / math.sqrt(1 - 0.999)
#: the smallest effect of interest of each claim family (the paper prints no number for any of
#: them: its Figs. 2-7 show the trends, and Sec. 4 says only that the shift "correlates
#: strongly" with the distance), each in its statistic's units from the threshold; every claim
#: row's power is computed at it, so "too few seeds to tell" means the test could not see it
EFFECTS: dict[str, tuple[float, str]] = {
    "ocs_trend": (
        0.5,
        "|rho| 0.5, the least a 'strong' correlation (Sec. 4) can mean; a weaker rank trend "
        "would not be the paper's",
    ),
    "abstain_rises": (
        0.05,
        "5 points of the abstain share: Fig. 6's rises span tens of points; a smaller one "
        "changes no decision that matters",
    ),
    "reward_beats_classification": (
        0.05,
        "0.05 reward per image, a twentieth of a correct answer's +1 (the clean-regime margin); "
        "Fig. 7's gaps are tenths",
    ),
    "constants_vs_init": (
        0.1,
        "a tenth of a clean prediction's distance to the OCS: a smaller move is no 'mirror'",
    ),
    "constants_mirror_ocs": (
        0.1,
        "0.1 below the bar, a tenth of a clean prediction's distance to the OCS",
    ),
    "sigma_rises": (
        0.1,
        "0.1 in label units, a tenth of the step between adjacent classes (Fig. 2 shows the "
        "sigma rise as the visible widening of the predicted Gaussian)",
    ),
    "fgsm_no_reversion": (
        0.1,
        "0.1 nats of KL to the OCS, a twentieth of the clean CE predictions' typical distance",
    ),
    "fgsm_norms_grow": (0.1, "representations 10 % larger in squared norm"),
    # Sec. 4.2's toy (theory.py): the paper's theorems give bounds, no effect sizes
    "theory_feature_norm_drops": (0.5, "half the ID norm: a smaller drop is no collapse"),
    "theory_output_collapses": (0.5, "half the ID output: a smaller drop is no collapse"),
    "theory_rank_moves": (0.1, "a tenth of the energy share moved toward the top direction"),
    "theory_near_rank_one": (0.05, "0.05 of the energy share past the bar"),
    "theory_depth_lowers_rank": (0.05, "0.05 of the energy share between the depths"),
    "theory_bias_margin_sign": (0.4, "every seed agreeing (share 0.9 against one half)"),
    "theory_ood_output_is_bias": (0.25, "the bias three quarters of the OOD output"),
}
ROLES = ("classifier", "reward_model", "regressor")
#: what a far-OOD trend row tests, and that the paper does not (issue 46)
FAR_SCOPE = (
    " (the non-trivial far sets' own ordering: between sets, not within a set, each set one "
    "point at its mean score; not in the paper, whose shifts are covariate shifts of the "
    "training images: an extension beyond its scope)"
)
ROTATION = "rotation"


def _level_ids(spec: dict) -> list[tuple[str, float]]:
    out = [(c, float(sev)) for c in spec["corruptions"] for sev in sorted(spec["severities"])]
    out += [("rotation", float(a)) for a in sorted(spec["rotations"])]
    return out


def _set_name(shift: str, level: float) -> str:
    return f"{shift}@{level:g}"


def _null_sets(spec: dict) -> list[str]:
    return ["id"] + (["rotation@0"] if spec["rotations"] else [])


def breakeven(spec: dict) -> float:
    """The reward's break-even accuracy: answering pays on average iff accuracy exceeds
    ``(abstain - wrong) / (correct - wrong)`` (+1/-4/0: 0.8)."""
    r = spec["loss_entries"][spec["roles"]["reward_model"]]
    c, w, a = (float(r[k]) for k in ("correct_reward", "wrong_reward", "abstain_reward"))
    return (a - w) / (c - w)


def _roundtrip_angles(spec: dict) -> list[float]:
    if not spec["rotations"]:
        return []
    return [float(t) for t in spec["discriminator"].get("roundtrip_angles", (15, 30, 45))]


#: where the bars of the rows come from (every claims row's selection note says it)
BARS = (
    "bars declared in the config (kang.change_epsilon, prediction_epsilon, accuracy_drop, "
    "far_floor_fpr95, score_separation, mirror_bar, discriminator.roundtrip_bar) and the "
    f"study's constants (NULL_TOLERANCE {NULL_TOLERANCE}, SATURATED {SATURATED}, FITTED_SHARE "
    f"{FITTED_SHARE}, CLEAN_MARGIN {CLEAN_MARGIN})"
)
SELECTION = (
    "selection: discriminator alpha {alpha}; kept levels fixed in advance "
    "(pixel change > change_epsilon, no model); " + BARS + ". "
    "Confirmation: test images x seeds {seeds}."
)


def _claim_specs(spec: dict) -> list[ClaimSpec]:
    """Every premise and claim of the study section ``spec`` (:func:`study.spec`)."""
    shifts = graded_shifts(spec)
    losses = [spec["roles"][r] for r in ROLES]
    reward, classifier = spec["roles"]["reward_model"], spec["roles"]["classifier"]
    eps = float(spec["change_epsilon"])
    pred_eps = float(spec["prediction_epsilon"])
    drop = float(spec["accuracy_drop"])
    floor_bar = float(spec["far_floor_fpr95"])
    rt_bar = float(spec["discriminator"]["roundtrip_bar"])
    separation = float(spec["score_separation"])
    out = [
        ClaimSpec(
            f"fitted:{loss}",
            f"Premise: the {loss} model fitted (training loss far below its OCS's)",
            "share of the OCS's training loss removed, per seed: gap OCS − training loss in "
            "the loss's own units, over the OCS loss (CE, reward MSE) or as the Gaussian's R² "
            "1 − exp(−2 gap) (Gaussian NLL, in nats: it goes negative)",
            FITTED_SHARE,
            ">",
            kind="premise",
        )
        for loss in losses
    ]
    for shift, level in _level_ids(spec):
        out.append(
            ClaimSpec(
                f"changes:{_set_name(shift, level)}",
                f"Premise: {shift} level {level:g} changes the images vs the level below",
                "mean |pixel change| vs the level below, per image",
                eps,
                ">",
                kind="premise",
            )
        )
    for shift, level in _level_ids(spec):
        out.append(
            ClaimSpec(
                f"predictions_change:{_set_name(shift, level)}",
                f"Premise: {shift} level {level:g} changes the classifier's decisions",
                "share of images whose arg-max differs from the clean image's, per seed",
                pred_eps,
                ">",
                kind="premise",
                requires=(f"fitted:{classifier}",),
            )
        )
    if spec["rotations"]:
        out.append(
            ClaimSpec(
                "rotation_identity",
                "Sanity: rotation by 0 degrees is the identity (rotation@0 = the clean images)",
                "max over images of mean |pixel change| of rotation@0 vs clean",
                0.0,
                "<=",
                kind="sanity",
            )
        )
    for t in _roundtrip_angles(spec):
        out.append(
            ClaimSpec(
                f"rotation_roundtrip:{t:g}",
                f"Premise: a +{t:g}/-{t:g} degree rotation round trip (net angle 0) scores as "
                "the clean images",
                "OOD score(round trip) - mean OOD score(rotation@0), per discriminator repeat",
                rt_bar,
                "<",
                kind="premise",
            )
        )
    for name in _null_sets(spec):
        out.append(
            ClaimSpec(
                f"discriminator_null:{name}",
                f"Premise: the OOD score of the level-0 set {name} is 0.5 (ID vs ID)",
                "|OOD score - 0.5|, per discriminator repeat",
                NULL_TOLERANCE,
                "<",
                kind="premise",
            )
        )
    out.append(
        ClaimSpec(
            "discriminator_graded",
            f"Premise: the OOD score grades the levels (fewer than half score above {SATURATED})",
            f"share of kept shift levels with OOD score > {SATURATED}",
            0.5,
            "<",
            kind="premise",
        )
    )
    far = list(spec["far_ood"])
    for name in far:
        out.append(
            ClaimSpec(
                f"far_nontrivial:{name}",
                f"Premise: pixel statistics do not solve the far set {name}",
                "share of the set the pixel-statistics floor accepts at 95 % ID recall (FPR95)",
                floor_bar,
                ">",
                kind="premise",
            )
        )
    # every statement about the OOD score rests on a discriminator in the paper's regime
    disc = tuple(f"discriminator_null:{name}" for name in _null_sets(spec)) + (
        "discriminator_graded",
    )
    rt = tuple(f"rotation_roundtrip:{t:g}" for t in _roundtrip_angles(spec))
    for s in shifts:
        rising = (
            (
                "the most-OOD angle (highest OOD score) scores above rotation@0",
                "OOD score(top angle) - mean OOD score(rotation@0), per discriminator repeat",
            )
            if s == ROTATION
            else (
                f"the OOD score rises with the {s} level",
                "Spearman rho(level, OOD score) over the kept levels",
            )
        )
        separated = (
            f"the top {s} level is clearly more OOD than level 0 (OOD score higher by more "
            f"than {separation:g})",
            "OOD score(top level) - OOD score(level 0), Welch t-test over the discriminator "
            "repeats",
        )
        # every statement about the OOD score of a shift rests on the discriminator premises
        for cid, (text, stat), bar in (
            (f"score_rises:{s}", rising, 0.0),
            (f"score_separated:{s}", separated, separation),
        ):
            out.append(
                ClaimSpec(
                    cid,
                    f"Premise: {text}",
                    stat,
                    bar,
                    ">",
                    kind="premise",
                    requires=disc + (rt if s == ROTATION else ()),
                )
            )
        out.append(
            ClaimSpec(
                f"predictions_change:{s}@top",
                f"Premise: the top {s} level changes the classifier's decisions",
                "share of images whose arg-max differs from the clean image's at the top level, "
                "per seed",
                pred_eps,
                ">",
                kind="premise",
                requires=(f"fitted:{classifier}",),
            )
        )
        out.append(
            ClaimSpec(
                f"accuracy_falls:{s}",
                f"Premise: the classifier's accuracy falls by more than {drop:g} from level 0 to "
                f"the top {s} level",
                "accuracy(top level) - accuracy(level 0), per seed",
                -drop,
                "<",
                kind="premise",
                requires=(f"fitted:{classifier}",),
            )
        )
        out.append(
            ClaimSpec(
                f"below_breakeven:{s}",
                f"Premise (Fig. 7's regime, gates reward_beats_classification): the "
                f"classifier's accuracy at the top {s} level is below the reward's break-even "
                f"{breakeven(spec):.3g}",
                "classifier accuracy at the top level, per seed",
                breakeven(spec),
                "<",
                kind="premise",
                requires=(f"fitted:{classifier}",),
            )
        )
    out.append(
        ClaimSpec(
            "reward_competitive_clean",
            "Premise: the reward model is in the paper's regime on clean data (its mean reward "
            f"within {CLEAN_MARGIN:g} of the thresholded classifier's)",
            "mean reward on the clean test images: reward prediction - thresholded "
            "classification, per seed",
            -CLEAN_MARGIN,
            ">",
            kind="premise",
            requires=(f"fitted:{reward}", f"fitted:{classifier}"),
        )
    )
    for loss in losses:
        for s in shifts + ([FAR] if far else []):
            if s == FAR:
                req = (f"fitted:{loss}",) + disc
            else:
                req = (
                    f"fitted:{loss}",
                    f"score_rises:{s}",
                    f"score_separated:{s}",
                    f"predictions_change:{s}@top",
                )
            out.append(
                ClaimSpec(
                    f"ocs_trend:{loss}:{s}",
                    f"{loss}: predictions approach the OCS as the OOD score grows along {s}"
                    + (FAR_SCOPE if s == FAR else ""),
                    "Spearman rho(OOD score, distance to OCS), mean over seeds x discriminator "
                    "repeats",
                    0.0,
                    "<",
                    requires=req,
                )
            )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"abstain_rises:{s}",
                f"reward prediction abstains more at the top {s} level than at level 0",
                "abstain ratio(top) - abstain ratio(level 0), per seed",
                0.0,
                ">",
                requires=(
                    f"fitted:{reward}",
                    f"score_rises:{s}",
                    f"score_separated:{s}",
                    "reward_competitive_clean",
                ),
            )
        )
    regressor = spec["roles"]["regressor"]
    for s in shifts:
        out.append(
            ClaimSpec(
                f"sigma_rises:{regressor}:{s}",
                f"{regressor}: the predicted standard deviation rises with the shift, from "
                f"level 0 to the top {s} level (Sec. 3: 'the Gaussian NLL models' predicted "
                "variance actually increases with distribution shift', Fig. 2; the OCS's sigma "
                "is in the detail)",
                "mean predicted sigma over the figure class's images: top level - level 0, per "
                "seed",
                0.0,
                ">",
                requires=(f"fitted:{regressor}", f"score_rises:{s}", f"score_separated:{s}"),
            )
        )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"reward_beats_classification:{s}",
                f"the advantage of reward prediction over standard classification grows from "
                f"level 0 to the top {s} level (Fig. 7; judged only where the classifier falls "
                "below the break-even accuracy, premise below_breakeven)",
                "[reward(RP) - reward(CE)](top) - [same](level 0), per seed",
                0.0,
                ">",
                requires=(
                    f"fitted:{reward}",
                    f"fitted:{classifier}",
                    f"score_rises:{s}",
                    f"score_separated:{s}",
                    f"below_breakeven:{s}",
                    "reward_competitive_clean",
                ),
            )
        )
    for loss in spec["mechanism"]["losses"]:
        ce = spec["loss_entries"][loss]["loss"] == "ce"
        ratio = "||constants - OCS|| / mean over clean images of ||prediction - OCS||"
        out.append(
            ClaimSpec(
                f"constants_vs_init:{loss}",
                (
                    f"Sanity ({loss}, balanced classes: the OCS is the about uniform label "
                    "marginal, which the untrained network's small logits already output, so "
                    "the trained constants cannot move much nearer): training leaves the "
                    "accumulated constants no farther from the OCS than at initialisation"
                )
                if ce
                else f"{loss}: training moves the accumulated constants toward the OCS (control: "
                "the same architecture at its initialisation, same seed, never trained); a part "
                f"of Fig. 4's mirror, not the mirror itself: read it with "
                f"constants_mirror_ocs:{loss}, whose ratio the detail gives",
                f"{ratio}: trained - untrained, per seed",
                0.0,
                "<" if not ce else "<=",
                kind="sanity" if ce else "claim",
                requires=(f"fitted:{loss}",),
            )
        )
        if not ce:
            out.append(
                ClaimSpec(
                    f"constants_reachable:{loss}",
                    f"Premise: the training budget could move the {loss} constants to the OCS "
                    "(the farthest a bias can travel under Adam, its largest step "
                    f"{ADAM_STEP_BOUND:.3g} lr summed over the steps, covers the largest "
                    "|OCS - untrained constants| component)",
                    f"{ADAM_STEP_BOUND:.3g} x sum of lr over the steps / max component "
                    "|OCS - untrained constants|, per seed",
                    1.0,
                    ">",
                    kind="premise",
                    requires=(f"fitted:{loss}",),
                )
            )
        out.append(
            ClaimSpec(
                f"constants_mirror_ocs:{loss}",
                (
                    f"Sanity ({loss}, by construction on balanced classes: its OCS is the class "
                    "marginal, about uniform, which any network with small logits outputs, the "
                    "untrained one too): the accumulated constants lie near the OCS"
                )
                if ce
                else f"{loss}: the accumulated model constants closely mirror the OCS (Fig. 4)",
                f"{ratio}, per seed",
                float(spec["mirror_bar"]),
                "<",
                kind="sanity" if ce else "claim",
                requires=(f"fitted:{loss}",) + (() if ce else (f"constants_reachable:{loss}",)),
                all_of=() if ce else (f"constants_vs_init:{loss}",),
            )
        )
    out += _adversarial_specs(spec, disc)
    out += _theory_specs()
    return [_with_effect(c) for c in out]


def _with_effect(c: ClaimSpec) -> ClaimSpec:
    """A claim row with its family's smallest effect of interest (:data:`EFFECTS`), the reason
    in its statistic; premises and sanity rows unchanged."""
    family = c.id.split(":")[0]
    if c.kind != "claim" or family not in EFFECTS:
        return c
    size, why = EFFECTS[family]
    return replace(
        c,
        effect=size,
        effect_source="power target",
        statistic=f"{c.statistic}; power at the smallest effect of interest {size:g} ({why})",
    )


def _change_measurements(levels: pd.DataFrame, spec: dict) -> dict[str, Measurement]:
    m = {}
    lv = levels.set_index("eval_set")
    for shift, level in _level_ids(spec):
        name = _set_name(shift, level)
        if name not in lv.index:
            m[f"changes:{name}"] = Measurement(math.nan, f"{name}: not in the grid")
            continue
        per = np.asarray(lv.loc[name, "change_per_image"], dtype=float)
        m[f"changes:{name}"] = Measurement(
            float(per.mean()) if len(per) else math.nan,
            f"{name}: mean |pixel change| {per.mean():.4f} over {len(per)} images",
            samples=tuple(per),
        )
    return m


def kept_levels(levels: pd.DataFrame, spec: dict) -> dict[str, list[float]]:
    """Per graded shift type: level 0 and every level whose ``changes`` premise holds."""
    specs = [s for s in claim_specs(spec) if s.id.startswith("changes:")]
    t = evaluate_claims(
        PAPER, specs, _change_measurements(levels, spec), alpha=float(spec.get("alpha", 0.05))
    )
    held = set(t.loc[t["holds"], "claim_id"])
    out: dict[str, list[float]] = {}
    for s in graded_shifts(spec):
        out[s] = [0.0] + [
            lv for sh, lv in _level_ids(spec) if sh == s and f"changes:{_set_name(sh, lv)}" in held
        ]
    return out


def _series(frame: pd.DataFrame, shift: str, levels: list[float]) -> pd.DataFrame:
    """Rows of one shift type at the given levels; level 0 is the shift's own level-0 set if the
    grid has one (``rotation@0``), else the clean split."""
    own = frame[frame["shift"] == shift]
    zero = own[own["level"] == 0]
    if zero.empty:
        zero = frame[frame["shift"] == "none"].assign(shift=shift, level=0.0)
    rest = own[own["level"].isin([lv for lv in levels if lv != 0])]
    return pd.concat([zero, rest], ignore_index=True)


def _trend(
    g: pd.DataFrame,
    scores: pd.DataFrame,
    what: str,
    effect: float = EFFECTS["ocs_trend"][0],
    alpha: float = 0.05,
) -> Measurement:
    """``ocs_trend``: Spearman rho(OOD score, distance to OCS) per seed x discriminator repeat
    (repeat r's x-axis: every set's OOD score from repeat r), its mean tested below 0 with the
    standard error ``sqrt(var(seed means)/S + var(repeat means)/R)`` (``min(S, R) - 1`` df): the
    seeds share one discriminator, so the x-axis's uncertainty enters only through its repeats.
    Without any spread (every rho equal) the exact sign test over ``min(S, R)`` units."""
    from scipy import stats

    sets = list(dict.fromkeys(g["eval_set"]))
    reps = [_repeats(scores, e) for e in sets]
    if len(sets) < 3 or any(len(r) < 2 for r in reps):
        return Measurement(math.nan, f"{what}: fewer than 3 sets or no per-repeat OOD scores")
    n_rep = min(len(r) for r in reps)
    x = np.stack([r[:n_rep] for r in reps])  # sets x repeats
    rows, seeds = [], []
    for seed, gs in g.groupby("seed"):
        y = gs.drop_duplicates("eval_set").set_index("eval_set")["distance"].reindex(sets)
        y = y.astype(float).to_numpy()
        if not np.all(np.isfinite(y)) or len(set(y)) < 2:
            continue
        row = [
            float(stats.spearmanr(x[:, r], y).statistic) if len(set(x[:, r])) > 1 else math.nan
            for r in range(n_rep)
        ]
        rows.append(row)
        seeds.append(seed)
    rho = np.asarray(rows, dtype=float)
    if rho.size == 0 or not np.all(np.isfinite(rho)):
        return Measurement(math.nan, f"{what}: undefined (constant series)")
    n_s, n_r = rho.shape
    mean = float(rho.mean())
    seed_means, rep_means = rho.mean(axis=1), rho.mean(axis=0)
    var = (seed_means.var(ddof=1) / n_s if n_s > 1 else math.nan) + (
        rep_means.var(ddof=1) / n_r if n_r > 1 else math.nan
    )
    units = min(n_s, n_r)
    # the power of this t at the smallest effect of interest (a mean rho of -effect)
    sd_unit = math.sqrt(max(var, 0.0) * units) if math.isfinite(var) else math.nan
    power = t_power(effect, sd_unit, units, alpha) if units > 1 else math.nan
    if units < 2 or not math.isfinite(var):
        p = p_opp = math.nan
    elif var <= 1e-24:  # no spread at all: the exact sign test over the smaller factor
        p = 0.5**units if mean < 0 else 1.0
        p_opp = 0.5**units if mean > 0 else 1.0
    else:
        t = mean / math.sqrt(var)
        p, p_opp = float(stats.t.cdf(t, units - 1)), float(stats.t.sf(t, units - 1))
    per = ", ".join(f"{s}: {v:.2f}" for s, v in zip(seeds, seed_means, strict=True))
    return Measurement(
        mean,
        f"{what}: mean Spearman rho {mean:.3f} over {n_s} seed(s) x {n_r} discriminator "
        f"repeats (per seed {per}; repeat means from {rep_means.min():.2f} to "
        f"{rep_means.max():.2f}); standard error {math.sqrt(var) if var > 0 else 0.0:.3f} "
        f"(seed and repeat variances), one-sided t with {units - 1} df",
        p,
        n=n_s * n_r,
        p_opposite=p_opp,
        power=power,
    )


def _far_floor(scores: pd.DataFrame, name: str, bar: float) -> Measurement:
    """``far_nontrivial:<name>`` from the OOD-score frame indexed by ``eval_set``."""
    key = f"far:{name}"
    if key not in scores.index or "floor_n" not in scores.columns:
        return Measurement(math.nan, f"{name}: no pixel floor")
    r = scores.loc[key]
    return floor_not_solved(
        name,
        r["floor_accepted"],
        r["floor_n"],
        r["floor_detector"],
        bar,
        f" (FPR95 {float(r['floor_fpr95']):.3f})",
    )


def excluded_far(ood_scores: pd.DataFrame, spec: dict) -> list[str]:
    """The far sets whose ``far_nontrivial`` premise does not hold (the pixel floor solves them,
    or untested): left out of the far trend, so out of its figure too."""
    scores = ood_scores.set_index("eval_set")
    alpha, bar = float(spec.get("alpha", 0.05)), float(spec["far_floor_fpr95"])
    out = []
    for name in spec["far_ood"]:
        fm = _far_floor(scores, name, bar)
        if not (fm.p_value < alpha and fm.value > bar):
            out.append(name)
    return out


def unresolved_shifts(frames: dict, spec: dict) -> dict[str, str]:
    """Shift type -> note, for the shift types whose ``score_separated`` premise does not hold
    (top level not clearly more OOD than level 0 by ``score_separation``): their rows cannot be
    tested, and their figure panels are greyed with the note."""
    scores = frames["ood_scores"].set_index("eval_set")
    kept = kept_levels(frames["levels"], spec)
    alpha, bar = float(spec.get("alpha", 0.05)), float(spec["score_separation"])
    out = {}
    for s in graded_shifts(spec):
        top = _top_level(spec, s, kept[s], scores)
        zero = "rotation@0" if s == ROTATION and "rotation@0" in scores.index else ID_SET
        sep = _separation(
            _repeats(scores, _set_name(s, top)) if top > 0 else np.array([]),
            _repeats(scores, zero),
            bar,
            s,
        )
        if not (sep.p_value < alpha and sep.value > bar):
            out[s] = f"not separated from clean\n(+{sep.value:.3f}, bar {bar:g})"
    return out


def _sigma(
    components: pd.DataFrame, spec: dict, shift: str, levels: list[float], top: float, note: str
) -> Measurement:
    """``sigma_rises:<regressor>:<shift>``: per seed, the Gaussian NLL model's mean predicted
    sigma (Fig. 2's average over the figure class's images, ``components`` kind
    ``mean_prediction``, component ``std``) at the top level minus level 0's; the detail gives
    both beside the OCS's sigma."""
    loss = spec["roles"]["regressor"]
    comp = main_runs(components, spec)
    comp = comp[comp["loss"] == loss]
    sig = comp[(comp["kind"] == "mean_prediction") & (comp["component"] == "std")]
    ocs = comp[(comp["kind"] == "ocs") & (comp["component"] == "std")]["value"].astype(float)
    g = _series(sig, shift, levels)
    at_top, at_0 = _at(g, top, "value"), _at(g, 0.0, "value")
    if at_top.empty or at_0.empty:
        return Measurement(math.nan, f"{loss}, {shift}: no predicted sigma recorded{note}")
    d = paired(at_top, at_0, names=(f"sigma at level {top:g}", "sigma at level 0"))
    toward = (
        f"; the OCS's sigma is {ocs.mean():.3f}: the prediction at the top level "
        + (
            "moves toward it"
            if abs(at_top.mean() - ocs.mean()) < abs(at_0.mean() - ocs.mean())
            else "does not move toward it"
        )
        if len(ocs)
        else ""
    )
    return Measurement(d.value, f"{loss}, {shift}: " + d.detail + toward + note, samples=d.samples)


def _clean_regime(pol: pd.DataFrame) -> Measurement:
    """``reward_competitive_clean``: per seed, reward prediction's mean reward on the clean test
    images minus the thresholded classifier's; the detail adds arg-max classification's and
    reward prediction's clean abstain share, and says when the recipe misses the regime."""
    clean = pol[pol["eval_set"] == ID_SET]
    at = {p: clean[clean["policy"] == p].set_index("seed") for p in (REWARD, THRESHOLDED, STANDARD)}
    if at[REWARD].empty or at[THRESHOLDED].empty:
        return Measurement(
            math.nan,
            "no clean rewards of reward prediction and thresholded classification recorded",
        )
    rp, thr = at[REWARD]["mean_reward"].astype(float), at[THRESHOLDED]["mean_reward"].astype(float)
    common = sorted(set(rp.index) & set(thr.index))
    gap = rp.loc[common] - thr.loc[common]
    argmax = (
        f", arg-max classification {at[STANDARD]['mean_reward'].astype(float).mean():.3f}"
        if len(at[STANDARD])
        else ""
    )
    regime = (
        ""
        if gap.mean() > -CLEAN_MARGIN
        else "; below the margin: the recipe does not put the reward model in the paper's "
        "regime (competitive in-distribution), and the reward rows cannot test the paper"
    )
    base = _per_seed(
        gap,
        f"clean test images: reward prediction earns {rp.mean():.3f} (abstains on "
        f"{at[REWARD]['abstain_ratio'].astype(float).mean():.1%}), thresholded classification "
        f"{thr.mean():.3f}{argmax}; margin {CLEAN_MARGIN:g}{regime}; difference",
    )
    return base


def _at(frame: pd.DataFrame, level: float, column: str) -> pd.Series:
    return frame[frame["level"] == level].set_index("seed")[column].astype(float)


def _repeats(scores: pd.DataFrame, name: str) -> np.ndarray:
    if name not in scores.index:
        return np.array([])
    return np.asarray(scores.loc[name, "per_repeat"], dtype=float)


def _top_level(spec: dict, shift: str, levels: list[float], scores: pd.DataFrame) -> float:
    """The top level of a shift type: the highest kept severity; for rotation the kept angle
    with the highest OOD score (ties: the smaller angle)."""
    rest = [lv for lv in levels if lv != 0]
    if not rest:
        return 0.0
    if shift != ROTATION:
        return max(rest)
    sc = {lv: float(np.mean(_repeats(scores, _set_name(shift, lv)))) for lv in rest}
    sc = {lv: v for lv, v in sc.items() if math.isfinite(v)}
    return max(sorted(sc), key=lambda lv: sc[lv]) if sc else max(rest)


def _constants(frames: dict, spec: dict, loss: str) -> dict[str, Measurement]:
    """Fig. 4's rows of one loss: per seed ``||c - OCS|| / scale`` in prediction space for the
    trained constants (``constants_mirror_ocs``) and its paired difference from the untrained
    network's (``constants_vs_init``); for a loss other than CE the budget premise
    ``constants_reachable`` (sum of the learning rate over the steps / the largest component of
    ``|OCS - untrained constants|``; Adam only: an SGD step has no such bound)."""
    mech = mechanism_runs(frames["mechanism"], spec) if len(frames["mechanism"]) else None
    comp = mechanism_runs(frames["components"], spec)
    ids = [f"constants_mirror_ocs:{loss}", f"constants_vs_init:{loss}"]
    if spec["loss_entries"][loss]["loss"] != "ce":
        ids.append(f"constants_reachable:{loss}")
    if mech is None or mech.empty:
        return {i: Measurement(math.nan, f"{loss}: no mechanism rows") for i in ids}
    trained, untrained, reach, how = {}, {}, {}, set()
    for seed, g in mech[mech["loss"] == loss].groupby("seed"):
        c = g[g["kind"] == "constants"].set_index("name")["mean"].astype(float)
        c0 = g[g["kind"] == "constants_init"].set_index("name")["mean"].astype(float)
        scale = g.loc[g["kind"] == "clean_scale", "mean"].astype(float)
        budget = g[g["kind"] == "lr_budget"]
        o = comp[(comp["loss"] == loss) & (comp["seed"] == seed) & (comp["kind"] == "ocs")]
        ocs = o.set_index("component")["value"].astype(float)
        if c.empty or scale.empty or ocs.empty or not float(scale.iloc[0]) > 0:
            continue
        names = list(ocs.index)
        d_0 = float(scale.iloc[0])
        trained[seed] = float(np.linalg.norm(c.reindex(names).to_numpy() - ocs.to_numpy())) / d_0
        if c0.empty:
            continue
        gap0 = c0.reindex(names).to_numpy() - ocs.to_numpy()
        untrained[seed] = float(np.linalg.norm(gap0)) / d_0
        if len(budget) and str(budget["eval_set"].iloc[0]) == "adam":
            need = float(np.abs(gap0).max())
            travel = ADAM_STEP_BOUND * float(budget["mean"].iloc[0])
            reach[seed] = travel / need if need > 0 else math.inf
            how.add(f"at most {travel:.3g} vs {need:.3g} needed")
        elif len(budget):
            how.add(f"optimizer {budget['eval_set'].iloc[0]!r}: no per-step bound")
    t = pd.Series(trained, dtype=float)
    u = pd.Series(untrained, dtype=float)
    out = {
        ids[0]: _per_seed(
            t,
            f"{loss}, ||constants - OCS|| / mean over "
            f"clean images of ||prediction - OCS|| (untrained network: mean "
            f"{u.mean() if len(u) else math.nan:.3f})",
        )
    }
    if len(u):
        pm = paired(t, u, names=("trained", "untrained (same architecture and seed)"))
        move = (u.mean() - t.mean()) / u.mean() if u.mean() > 0 else math.nan
        mirror = (
            f"; the move is {move:.1%} of the untrained distance, and the trained ratio "
            f"{t.mean():.3f} is what constants_mirror_ocs:{loss} tests against its bar "
            f"{float(spec['mirror_bar']):g} (a move toward the OCS is not a mirror of it)"
        )
        out[ids[1]] = Measurement(pm.value, f"{loss}: " + pm.detail + mirror, samples=pm.samples)
    else:
        out[ids[1]] = Measurement(math.nan, f"{loss}: no untrained-network constants recorded")
    if len(ids) > 2:
        r = pd.Series(reach, dtype=float)
        out[ids[2]] = (
            _per_seed(
                r,
                f"{loss}: the farthest a bias can travel under Adam ({ADAM_STEP_BOUND:.3g} x the "
                "sum of lr over the steps to the kept checkpoint) vs the largest |OCS - untrained "
                f"constants| component ({'; '.join(sorted(how))}); below 1 the output bias "
                "cannot reach the OCS within the recipe's steps",
            )
            if len(r)
            else Measurement(
                math.nan,
                f"{loss}: no Adam step budget ({'; '.join(sorted(how)) or 'not recorded'})",
            )
        )
    return out


def evaluate_kang_claims(frames: dict, spec: dict) -> pd.DataFrame:
    """The claims table (premises first) from the long frames of :func:`.frames.load_frames`
    (``grid``, ``policies``, ``fit``, ``levels``, ``ood_scores``, ``mechanism``,
    ``components``)."""
    from scipy import stats

    from ...analysis.claims import spearman

    alpha = float(spec.get("alpha", 0.05))
    roles = spec["roles"]
    grid = main_runs(frames["grid"], spec)
    pol = main_runs(frames["policies"], spec)
    fit = main_runs(frames["fit"], spec)
    scores = frames["ood_scores"].set_index("eval_set")
    seeds = ", ".join(str(s) for s in sorted(grid["seed"].unique())) if len(grid) else ""
    a = spec["discriminator"].get("alpha")
    how = (
        f"fixed in advance at {a:g} (the authors' code)"
        if a is not None
        else ("chosen on the validation split")
    )
    sel_note = " [" + SELECTION.format(alpha=how, seeds=seeds) + "]"
    m: dict[str, Measurement] = {}
    for loss in [roles[r] for r in ROLES]:
        f = fit[fit["loss"] == loss].set_index("seed")
        family = spec["loss_entries"][loss]["loss"]
        m[f"fitted:{loss}"] = fitted(f["train_loss"], f["ocs_loss"], loss=family, what=loss)
    m.update(_change_measurements(frames["levels"], spec))
    kept = kept_levels(frames["levels"], spec)
    classifier = grid[grid["loss"] == roles["classifier"]]
    clf_by_set = classifier.set_index(["eval_set", "seed"])
    for shift, level in _level_ids(spec):
        name = _set_name(shift, level)
        cid = f"predictions_change:{name}"
        if "changed" not in classifier.columns or name not in set(classifier["eval_set"]):
            m[cid] = Measurement(math.nan, f"{name}: no decision changes recorded")
            continue
        per = clf_by_set.loc[name]["changed"].astype(float)
        m[cid] = _per_seed(per, f"{name}: share of decisions changed vs clean")
    if spec["rotations"]:
        lv = frames["levels"].set_index("eval_set")
        per = (
            np.asarray(lv.loc["rotation@0", "change_per_image"], dtype=float)
            if "rotation@0" in lv.index
            else np.array([])
        )
        m["rotation_identity"] = Measurement(
            float(per.max()) if len(per) else math.nan,
            f"rotation@0 vs clean: max per-image mean |pixel change| "
            f"{per.max() if len(per) else float('nan'):.3g} over {len(per)} images",
        )
        zero = _repeats(scores, "rotation@0")
        for t in _roundtrip_angles(spec):
            rt = _repeats(scores, f"roundtrip@{t:g}")
            if len(rt) and len(zero):
                d = rt - zero.mean()
                m[f"rotation_roundtrip:{t:g}"] = Measurement(
                    float(d.mean()),
                    f"round trip +-{t:g} deg: OOD score {rt.mean():.3f} vs rotation@0 (clean) "
                    f"{zero.mean():.3f}; a real {t:g}-degree rotation scores "
                    f"{np.mean(_repeats(scores, _set_name(ROTATION, t))) if len(_repeats(scores, _set_name(ROTATION, t))) else float('nan'):.3f}",
                    samples=tuple(d),
                )
            else:
                m[f"rotation_roundtrip:{t:g}"] = Measurement(math.nan, f"roundtrip@{t:g}: no score")
    for name in _null_sets(spec):
        per = np.abs(_repeats(scores, name) - 0.5)
        m[f"discriminator_null:{name}"] = Measurement(
            float(per.mean()) if len(per) else math.nan,
            f"{name}: OOD score {scores.loc[name, 'ood_score']:.3f} "
            f"(mean |score - 0.5| {per.mean():.3f} over {len(per)} repeats)"
            if len(per)
            else f"{name}: no OOD score",
            samples=tuple(per),
        )
    shifted = [_set_name(s, lv) for s, levels in kept.items() for lv in levels if lv != 0]
    shifted = [e for e in shifted if e in scores.index]
    n_sat = int((scores.loc[shifted, "ood_score"] > SATURATED).sum()) if shifted else 0
    if shifted:
        p = float(stats.binomtest(n_sat, len(shifted), 0.5, alternative="less").pvalue)
        m["discriminator_graded"] = Measurement(
            n_sat / len(shifted),
            f"{n_sat} of {len(shifted)} kept shift levels score above {SATURATED} "
            "(one-sided binomial test against one half)",
            p,
            n=len(shifted),
        )
    else:
        m["discriminator_graded"] = Measurement(math.nan, "no kept shift level")
    floor_bar = float(spec["far_floor_fpr95"])
    nontrivial = []
    for name in spec["far_ood"]:
        fm = _far_floor(scores, name, floor_bar)
        m[f"far_nontrivial:{name}"] = fm
        if fm.p_value < alpha and fm.value > floor_bar:
            nontrivial.append(name)
    for s in graded_shifts(spec):
        levels = kept[s]
        top = _top_level(spec, s, levels, scores)
        dropped = [lv for sh, lv in _level_ids(spec) if sh == s and lv not in levels]
        note = (
            f" (levels dropped as no-ops: {', '.join(f'{x:g}' for x in dropped)})"
            if dropped
            else ""
        )
        note += f"; top level {top:g}" + sel_note
        sc = _series(classifier, s, levels).drop_duplicates("eval_set")
        if s == ROTATION:
            top_r, zero_r = _repeats(scores, _set_name(s, top)), _repeats(scores, "rotation@0")
            if top > 0 and len(top_r) and len(zero_r):
                d = top_r - zero_r.mean()
                m[f"score_rises:{s}"] = Measurement(
                    float(d.mean()),
                    f"rotation: the most-OOD kept angle {top:g} scores {top_r.mean():.3f} vs "
                    f"rotation@0 {zero_r.mean():.3f}{note}",
                    samples=tuple(d),
                )
            else:
                m[f"score_rises:{s}"] = Measurement(math.nan, f"{s}: no kept angle{note}")
        elif len(levels) >= 3:
            m[f"score_rises:{s}"] = spearman(
                sc["level"], sc["ood_score"], what=f"{s}{note}: ", alternative="greater"
            )
        else:
            m[f"score_rises:{s}"] = Measurement(math.nan, f"{s}: fewer than 3 kept levels{note}")
        cs = _series(classifier, s, levels)
        if top > 0:
            pm = paired(
                _at(cs, top, "accuracy"),
                _at(cs, 0.0, "accuracy"),
                names=(f"level {top:g}", "level 0"),
            )
            m[f"accuracy_falls:{s}"] = Measurement(
                pm.value, f"{s}: " + pm.detail + note, samples=pm.samples
            )
            acc_top = _at(cs, top, "accuracy")
            m[f"below_breakeven:{s}"] = _per_seed(
                acc_top,
                f"{s}: classifier accuracy at level {top:g} (break-even {breakeven(spec):.3g})",
            )
        else:
            for cid in (f"accuracy_falls:{s}", f"below_breakeven:{s}"):
                m[cid] = Measurement(math.nan, f"{s}: no kept level{note}")
        zero_set = "rotation@0" if s == ROTATION and "rotation@0" in scores.index else ID_SET
        top_set = _set_name(s, top)
        if top > 0 and top_set in set(classifier["eval_set"]) and "changed" in classifier:
            m[f"predictions_change:{s}@top"] = _per_seed(
                clf_by_set.loc[top_set]["changed"].astype(float),
                f"{top_set} (the top level): share of decisions changed vs clean{note}",
            )
        else:
            m[f"predictions_change:{s}@top"] = Measurement(
                math.nan, f"{s}: no decision changes recorded at a kept top level{note}"
            )
        m[f"score_separated:{s}"] = _separation(
            _repeats(scores, top_set) if top > 0 else np.array([]),
            _repeats(scores, zero_set),
            float(spec["score_separation"]),
            f"{s}: top level {top_set} vs level 0 ({zero_set}){note}",
        )
        for loss in [roles[r] for r in ROLES]:
            g = _series(grid[grid["loss"] == loss], s, levels)
            m[f"ocs_trend:{loss}:{s}"] = _trend(g, scores, f"{loss}, {s}{note}", alpha=alpha)
        ps = _series(pol, s, levels)
        rp = ps[ps["policy"] == REWARD]
        st = ps[ps["policy"] == STANDARD]
        if top > 0:
            d = paired(
                _at(rp, top, "abstain_ratio"),
                _at(rp, 0.0, "abstain_ratio"),
                names=(f"level {top:g}", "level 0"),
            )
            m[f"abstain_rises:{s}"] = Measurement(
                d.value, f"{s}: " + d.detail + note, samples=d.samples
            )
            gap_top = _at(rp, top, "mean_reward") - _at(st, top, "mean_reward")
            gap_0 = _at(rp, 0.0, "mean_reward") - _at(st, 0.0, "mean_reward")
            d = paired(gap_top, gap_0, names=(f"gap at level {top:g}", "gap at level 0"))
            acc = _at(cs, top, "accuracy")
            where = (
                f" (classifier accuracy at level {top:g}: {acc.mean():.3f}, break-even "
                f"{breakeven(spec):.3g}; judged only below the break-even)"
            )
            m[f"reward_beats_classification:{s}"] = Measurement(
                d.value, f"{s}: " + d.detail + where + note, samples=d.samples
            )
            m[f"sigma_rises:{roles['regressor']}:{s}"] = _sigma(
                frames["components"], spec, s, levels, top, note
            )
        else:
            m[f"sigma_rises:{roles['regressor']}:{s}"] = Measurement(
                math.nan, f"{s}: no kept level{note}"
            )
            for cid in (f"abstain_rises:{s}", f"reward_beats_classification:{s}"):
                m[cid] = Measurement(math.nan, f"{s}: no kept level{note}")
    m["reward_competitive_clean"] = _clean_regime(pol)
    if spec["far_ood"]:
        keep = {f"far:{n}" for n in nontrivial}
        left_out = sorted(set(spec["far_ood"]) - set(nontrivial))
        why = (
            f"; left out (pixel floor solves them or untested): {', '.join(left_out)}"
            if left_out
            else ""
        )
        for loss in [roles[r] for r in ROLES]:
            g = grid[(grid["loss"] == loss) & grid["eval_set"].isin(keep)]
            what = f"{loss}, the {len(keep)} non-trivial far sets ({', '.join(nontrivial)}){why}"
            m[f"ocs_trend:{loss}:{FAR}"] = (
                _trend(g, scores, what, alpha=alpha)
                if len(keep) >= 3
                else Measurement(math.nan, f"{what}: fewer than 3 sets, no rank trend")
            )
    for loss in spec["mechanism"]["losses"]:
        m.update(_constants(frames, spec, loss))
    m.update(_adversarial_measurements(frames.get("adversarial"), spec))
    m.update(_theory_measurements(frames.get("theory")))
    return evaluate_claims(PAPER, claim_specs(spec), m, alpha=alpha, headline=HEADLINE)


def claim_specs(spec: dict) -> list[ClaimSpec]:
    """Every premise and claim of the study section ``spec``, each with what decided its
    settings and what confirms it (issue 25)."""
    from ...analysis.selection import annotate, seeds_text

    alpha = (spec.get("discriminator") or {}).get("alpha")
    disc = (
        f"discriminator alpha = {alpha:g} fixed in advance (the authors' code)"
        if alpha is not None
        else "discriminator alpha chosen on the ID validation split (kang_discriminator_select), "
        "never on test"
    )
    selection = {
        "*": f"{disc}; shift levels kept by their pixel-change premise (no model involved); "
        "far sets kept by their pixel-floor premise; " + BARS
    }
    return annotate(
        _claim_specs(spec), selection, f"{seeds_text(spec['seeds'])} x the evaluated test images"
    )


# -- Sec. 4.2's theory on the toy (theory.py): premises, sanity and claims -------------------
#: the toy's bars, fixed before any run: "almost rank one" (Theorem 4.1's solution, Lemma D.4)
NEAR_RANK_ONE = 0.9
#: Theorem 4.1 + Prop. 4.2: the OOD output is mostly the bias when the bias carries more than
#: half of it
BIAS_SHARE = 0.5
THEORY_FITTED = 0.99  #: the theorems assume the network fits the training data


def _theory_specs() -> list[ClaimSpec]:
    from .theory import ANGLES, DEEP, SHALLOW, STEPS

    top = max(ANGLES)
    fit = ("theory_fitted",)
    return [
        ClaimSpec(
            "theory_fitted",
            f"Premise (Sec. 4.2's toy): the bias-free {DEEP}-layer ReLU network and its biased "
            "twin fit the training data (every margin y f(x) > 0), as Prop. 4.1 and Thm 4.1 "
            "assume",
            "share of training points with y f(x) > 0, the smaller of the two networks, per seed",
            THEORY_FITTED,
            ">",
            kind="premise",
        ),
        ClaimSpec(
            "theory_prop41_bound",
            "Sanity (Prop. 4.1's inequality, Cauchy-Schwarz): on the training points, "
            "||f_j(x)|| prod_{k>j} ||W_k||_2 is at least the margin y f(x), every hidden layer j",
            "min over training points and layers of ||f_j(x)|| prod_{k>j} ||W_k||_2 / (y f(x)), "
            "per seed",
            1.0,
            ">=",
            kind="sanity",
            requires=fit,
        ),
        ClaimSpec(
            "theory_feature_norm_drops",
            f"Prop. 4.1 / Thm 4.1 (toy): features are large on P_train and drop on P_OOD: the "
            f"last hidden layer's norm on inputs rotated {top:g} degrees out of the training "
            "span is below its norm on held-out ID inputs",
            f"E_OOD ||f_(L-1)(x)|| / E_ID ||f_(L-1)(x)|| at {top:g} degrees, per seed",
            1.0,
            "<",
            requires=fit,
        ),
        ClaimSpec(
            "theory_output_collapses",
            f"Thm 4.1 (toy): where the inputs' rank-one projection is small, the output "
            f"collapses: E|f| on inputs rotated {top:g} degrees out of the training span is "
            "below E|f| on held-out ID inputs (the detail gives the ratio at every angle beside "
            "the projection ratio epsilon)",
            f"E_OOD |f(x)| / E_ID |f(x)| at {top:g} degrees, per seed",
            1.0,
            "<",
            requires=fit,
        ),
        ClaimSpec(
            "theory_rank_moves",
            f"Thm 4.1 (toy): gradient descent drives the {DEEP}-layer network's hidden layers "
            "toward rank one (control: the same network at its initialisation)",
            "mean over W_2..W_(L-1) of sigma_1^2 / ||W||_F^2: trained - initialisation, per seed",
            0.0,
            ">",
            requires=fit,
        ),
        ClaimSpec(
            "theory_near_rank_one",
            f"Thm 4.1 (toy): the solution is almost rank one in every hidden layer (top "
            f"singular value's energy share above {NEAR_RANK_ONE:g}) after {STEPS} steps "
            "(the theorem is about directional convergence, which is logarithmically slow: a "
            "failure here may be the budget)",
            "mean over W_2..W_(L-1) of sigma_1^2 / ||W||_F^2, per seed",
            NEAR_RANK_ONE,
            ">",
            requires=fit,
        ),
        ClaimSpec(
            "theory_depth_lowers_rank",
            f"Thm 4.1 (toy): depth exacerbates the low rank: the {DEEP}-layer network's hidden "
            f"layers are nearer rank one than the {SHALLOW}-layer network's",
            "mean sigma_1^2 / ||W||_F^2 over the hidden-to-hidden layers: deeper - shallower, "
            "per seed",
            0.0,
            ">",
            requires=fit,
        ),
        ClaimSpec(
            "theory_bias_margin_sign",
            "Prop. 4.2 (toy): the output bias points along the sum of the labels of the margin "
            "points (argmin_j y_j f(W; x_j)): the bias has that sum's sign",
            "share of seeds whose bias has the sign of the margin points' label sum (exact "
            "binomial test against one half)",
            0.5,
            ">",
            requires=fit,
        ),
        ClaimSpec(
            "theory_ood_output_is_bias",
            f"Thm 4.1 with Prop. 4.2 (toy): on inputs rotated {top:g} degrees out of the "
            "training span the biased network's output is mostly its bias (the route by which "
            "the bias, and so the OCS, would set the OOD prediction)",
            f"|b| / E_OOD |f(x) + b| at {top:g} degrees, per seed",
            BIAS_SHARE,
            ">",
            requires=fit,
        ),
    ]


def _binomial_power(n: int, share: float, alpha: float = 0.05) -> float:
    """Power of the one-sided exact binomial test against one half at ``n`` trials when the true
    share is ``share``: P(X >= k) for the smallest k whose p is at most ``alpha``."""
    from scipy import stats

    for k in range(n + 1):
        if stats.binom.sf(k - 1, n, 0.5) <= alpha:
            return float(stats.binom.sf(k - 1, n, share))
    return 0.0


def _theory_measurements(theory: pd.DataFrame) -> dict[str, Measurement]:
    from scipy import stats

    from .theory import ANGLES, exponential_ocs

    ids = [s.id for s in _theory_specs()]
    if theory is None or theory.empty:
        return {i: Measurement(math.nan, "no toy measurements") for i in ids}
    t = theory.pivot_table(index="seed", columns="quantity", values="value")
    top = max(ANGLES)

    def col(name: str) -> pd.Series:
        return t[name].astype(float) if name in t else pd.Series(dtype=float)

    m = {
        "theory_fitted": _per_seed(
            np.minimum(col("fitted"), col("fitted_bias")),
            "toy: share of training points fitted (the smaller of the bias-free and biased net)",
        ),
        "theory_prop41_bound": _per_seed(
            col("prop41_bound"), "toy: min ||f_j|| prod ||W_k||_2 / margin (at least 1 by C-S)"
        ),
        "theory_feature_norm_drops": _per_seed(
            col("feature_norm_ratio"),
            f"toy: last hidden layer's norm at {top:g} degrees over held-out ID",
        ),
    }
    curve = "; ".join(
        f"{a:g} deg: |f| {col(f'output_ratio@{a:g}').mean():.3f}, epsilon "
        f"{col(f'projection@{a:g}').mean():.3f}"
        for a in ANGLES
    )
    m["theory_output_collapses"] = _per_seed(
        col(f"output_ratio@{top:g}"),
        f"toy: E|f| over ID E|f| beside the first layer's rank-one projection (epsilon, same "
        f"ratio), seed means ({curve}); at {top:g} degrees",
    )
    trained, init, shallow = (
        col("rank_share_trained"),
        col("rank_share_init"),
        col("rank_share_shallow"),
    )
    pm = paired(trained, init, names=("trained", "initialisation"))
    m["theory_rank_moves"] = Measurement(pm.value, "toy: " + pm.detail, samples=pm.samples)
    m["theory_near_rank_one"] = _per_seed(trained, "toy: top singular value's energy share")
    pm = paired(trained, shallow, names=("deeper", "shallower"))
    m["theory_depth_lowers_rank"] = Measurement(pm.value, "toy: " + pm.detail, samples=pm.samples)
    agree, n = int(col("bias_sign_agrees").sum()), int(col("bias_sign_agrees").count())
    if n:
        per = ", ".join(
            f"{s}: b {b:.3g}, sum {y:+g}"
            for s, b, y in zip(t.index, col("bias"), col("margin_label_sum"), strict=True)
        )
        m["theory_bias_margin_sign"] = Measurement(
            agree / n,
            f"toy: {agree} of {n} seeds' biases have the sign of the margin points' label sum "
            f"(per seed {per}; the OCS of the exponential loss is {exponential_ocs():+.3f})",
            float(stats.binomtest(agree, n, 0.5, alternative="greater").pvalue),
            n=n,
            p_opposite=float(stats.binomtest(agree, n, 0.5, alternative="less").pvalue),
            power=_binomial_power(n, 0.5 + EFFECTS["theory_bias_margin_sign"][0]),
        )
    else:
        m["theory_bias_margin_sign"] = Measurement(math.nan, "toy: no bias recorded")
    m["theory_ood_output_is_bias"] = _per_seed(
        col(f"bias_share@{top:g}"),
        f"toy: |b| over E|f + b| at {top:g} degrees (the weight part grows with the L-th power "
        "of the weights' scale, the bias with the first)",
    )
    return m


# -- Fig. 8 (App. A): FGSM, where the paper says reversion does not hold ----------------------


def _adversarial_specs(spec: dict, disc: tuple[str, ...]) -> list[ClaimSpec]:
    ce = spec["roles"]["classifier"]
    eps = max(float(e) for e in spec["adversarial"]["epsilons"])
    drop, separation = float(spec["accuracy_drop"]), float(spec["score_separation"])
    attack = (f"fitted:{ce}", "fgsm_effective")
    return [
        ClaimSpec(
            "fgsm_effective",
            f"Premise (Fig. 8): the FGSM step at eps {eps:g} is an attack: the classifier's "
            f"accuracy on the attacked clean test images falls by more than {drop:g}",
            f"accuracy(FGSM eps {eps:g}) - accuracy(clean), per seed",
            -drop,
            "<",
            kind="premise",
            requires=(f"fitted:{ce}",),
        ),
        ClaimSpec(
            "fgsm_more_ood",
            f"Premise (Fig. 8: 'even though the adversarial dataset is more OOD'): the FGSM set "
            f"at eps {eps:g} scores above the clean set by more than {separation:g} on the OOD "
            "score",
            f"OOD score(FGSM eps {eps:g}) - OOD score(clean), per seed (each seed attacks its "
            "own classifier)",
            separation,
            ">",
            kind="premise",
            requires=disc,
        ),
        ClaimSpec(
            f"fgsm_no_reversion:{ce}",
            f"{ce} (App. A, Fig. 8, left; a predicted failure of reversion): on the FGSM set "
            "the predictions lie farther from the OCS than on the clean images, although the "
            "set is more OOD (holds = the paper's exception holds here: no reversion)",
            f"distance to the OCS (mean KL): FGSM eps {eps:g} - clean, per seed",
            0.0,
            ">",
            requires=attack + ("fgsm_more_ood",),
        ),
        ClaimSpec(
            f"fgsm_norms_grow:{ce}",
            f"{ce} (App. A, Fig. 8, right): the adversarial inputs' representations have a "
            "greater magnitude than the clean inputs' at every layer",
            f"min over affine layers of E||W phi||^2 (FGSM eps {eps:g}) / E||W phi||^2 (clean), "
            "per seed",
            1.0,
            ">",
            requires=attack,
        ),
    ]


def _adversarial_measurements(adv: pd.DataFrame | None, spec: dict) -> dict[str, Measurement]:
    ce = spec["roles"]["classifier"]
    ids = ["fgsm_effective", "fgsm_more_ood", f"fgsm_no_reversion:{ce}", f"fgsm_norms_grow:{ce}"]
    if adv is None or adv.empty:
        return {i: Measurement(math.nan, "no FGSM sets evaluated") for i in ids}
    adv = main_runs(adv, spec)
    adv = adv[adv["loss"] == ce]
    eps = max(float(e) for e in spec["adversarial"]["epsilons"])

    def at(kind: str, e: float) -> pd.Series:
        f = adv[(adv["kind"] == kind) & (adv["eps"] == e)]
        return f.set_index("seed")["value"].astype(float)

    curve = "; ".join(
        f"eps {e:g}: distance {at('distance', e).mean():.3f}, accuracy "
        f"{at('accuracy', e).mean():.3f}, OOD score {at('ood_score', e).mean():.3f}"
        for e in sorted(adv["eps"].unique())
    )
    note = f" (seed means: {curve})"
    m = {}
    for cid, kind, what in (
        ("fgsm_effective", "accuracy", "accuracy"),
        ("fgsm_more_ood", "ood_score", "OOD score"),
        (f"fgsm_no_reversion:{ce}", "distance", "distance to the OCS"),
    ):
        top, clean = at(kind, eps), at(kind, 0.0)
        if top.empty or clean.empty:
            m[cid] = Measurement(math.nan, f"no {what} at eps {eps:g} and 0")
            continue
        d = paired(top, clean, names=(f"{what} at eps {eps:g}", "clean"))
        m[cid] = Measurement(d.value, f"{ce}: " + d.detail + note, samples=d.samples)
    norms = adv[(adv["kind"] == "norm_ratio") & (adv["eps"] == eps)]
    if norms.empty:
        m[f"fgsm_norms_grow:{ce}"] = Measurement(math.nan, "no representation norms recorded")
    else:
        per_layer = norms.groupby("name", sort=False)["value"].mean()
        layers = ", ".join(f"{n}: {v:.3f}" for n, v in per_layer.items())
        m[f"fgsm_norms_grow:{ce}"] = _per_seed(
            norms.groupby("seed")["value"].min().astype(float),
            f"{ce}: smallest per-layer norm ratio at eps {eps:g} (seed means per layer: {layers})",
        )
    return m
