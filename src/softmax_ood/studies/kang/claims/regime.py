"""The regime Kang's claims assume, shown not assumed: the models fitted, the shift levels change
the classifier's decisions, the rotation path is clean, the discriminator reads ID as ID and
grades the levels, the far sets are not trivial, and the reward model is competitive on clean
data. Each premise is one :class:`~softmax_ood.analysis.claims.Claim`."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ....analysis.claims import Claim, ClaimSpec, Measurement
from ....analysis.measures import per_seed
from ....analysis.premises import FITTED_SHARE, fitted
from ..grid import ID_SET
from .common import (
    CLEAN_MARGIN,
    NULL_TOLERANCE,
    REWARD,
    ROTATION,
    SATURATED,
    STANDARD,
    THRESHOLDED,
    level_ids,
    losses,
    notes,
    null_sets,
    repeats,
    roundtrip_angles,
    set_name,
)
from .evidence import Evidence


def model_fitted(ev: Evidence, *, loss: str) -> Measurement:
    f = ev.fit[ev.fit["loss"] == loss].set_index("seed")
    family = ev.section["loss_entries"][loss]["loss"]
    return fitted(f["train_loss"], f["ocs_loss"], loss=family, what=loss)


def fitted_claims(section: dict) -> list[Claim]:
    """``fitted:<loss>``: a model that never left its constant cannot test reversion to it."""
    return [
        Claim(
            ClaimSpec(
                f"fitted:{loss}",
                f"Premise: the {loss} model fitted (training loss far below its OCS's)",
                "share of the OCS's training loss removed, per seed: gap OCS − training loss in "
                "the loss's own units, over the OCS loss (CE, reward MSE) or as the Gaussian's "
                "R² 1 − exp(−2 gap) (Gaussian NLL, in nats: it goes negative)",
                FITTED_SHARE,
                ">",
                kind="premise",
                **notes(section),
            ),
            partial(model_fitted, loss=loss),
        )
        for loss in losses(section)
    ]


def decisions_changed(ev: Evidence, *, shift: str, level: float) -> Measurement:
    name = set_name(shift, level)
    clf = ev.classifier
    if "changed" not in clf.columns or name not in set(clf["eval_set"]):
        return Measurement(math.nan, f"{name}: no decision changes recorded")
    per = ev.classifier_by_set.loc[name]["changed"].astype(float)
    return per_seed(per, f"{name}: share of decisions changed vs clean")


def decision_claims(section: dict) -> list[Claim]:
    """``predictions_change:<shift>@<level>``: the level moves the classifier's arg-max."""
    return [
        Claim(
            ClaimSpec(
                f"predictions_change:{set_name(shift, level)}",
                f"Premise: {shift} level {level:g} changes the classifier's decisions",
                "share of images whose arg-max differs from the clean image's, per seed",
                float(section["prediction_epsilon"]),
                ">",
                kind="premise",
                requires=(f"fitted:{section['roles']['classifier']}",),
                **notes(section),
            ),
            partial(decisions_changed, shift=shift, level=level),
        )
        for shift, level in level_ids(section)
    ]


def rotation_identity(ev: Evidence) -> Measurement:
    lv = ev.levels
    per = (
        np.asarray(lv.loc["rotation@0", "change_per_image"], dtype=float)
        if "rotation@0" in lv.index
        else np.array([])
    )
    return Measurement(
        float(per.max()) if len(per) else math.nan,
        f"rotation@0 vs clean: max per-image mean |pixel change| "
        f"{per.max() if len(per) else float('nan'):.3g} over {len(per)} images",
    )


def roundtrip_scores_clean(ev: Evidence, *, angle: float) -> Measurement:
    """Per discriminator repeat, the round trip's OOD score minus the mean ``rotation@0``'s."""
    t, scores = angle, ev.scores
    zero, rt = repeats(scores, "rotation@0"), repeats(scores, f"roundtrip@{t:g}")
    if not (len(rt) and len(zero)):
        return Measurement(math.nan, f"roundtrip@{t:g}: no score")
    real = repeats(scores, set_name(ROTATION, t))
    d = rt - zero.mean()
    return Measurement(
        float(d.mean()),
        f"round trip +-{t:g} deg: OOD score {rt.mean():.3f} vs rotation@0 (clean) "
        f"{zero.mean():.3f}; a real {t:g}-degree rotation scores "
        f"{np.mean(real) if len(real) else float('nan'):.3f}",
        samples=tuple(d),
    )


def rotation_claims(section: dict) -> list[Claim]:
    """The rotation path: ``rotation@0`` is the clean images (sanity), and a round trip (net
    angle 0) scores as clean (a rotation path that blurs fails it)."""
    out = []
    if section["rotations"]:
        out.append(
            Claim(
                ClaimSpec(
                    "rotation_identity",
                    "Sanity: rotation by 0 degrees is the identity (rotation@0 = the clean images)",
                    "max over images of mean |pixel change| of rotation@0 vs clean",
                    0.0,
                    "<=",
                    kind="sanity",
                    **notes(section),
                ),
                rotation_identity,
            )
        )
    for t in roundtrip_angles(section):
        out.append(
            Claim(
                ClaimSpec(
                    f"rotation_roundtrip:{t:g}",
                    f"Premise: a +{t:g}/-{t:g} degree rotation round trip (net angle 0) scores "
                    "as the clean images",
                    "OOD score(round trip) - mean OOD score(rotation@0), per discriminator repeat",
                    float(section["discriminator"]["roundtrip_bar"]),
                    "<",
                    kind="premise",
                    **notes(section),
                ),
                partial(roundtrip_scores_clean, angle=t),
            )
        )
    return out


def null_score(ev: Evidence, *, name: str) -> Measurement:
    """Per discriminator repeat, ``|score - 0.5|`` of a level-0 set."""
    per = np.abs(repeats(ev.scores, name) - 0.5)
    return Measurement(
        float(per.mean()) if len(per) else math.nan,
        f"{name}: OOD score {ev.scores.loc[name, 'ood_score']:.3f} "
        f"(mean |score - 0.5| {per.mean():.3f} over {len(per)} repeats)"
        if len(per)
        else f"{name}: no OOD score",
        samples=tuple(per),
    )


def saturated_share(ev: Evidence) -> Measurement:
    """The share of kept shift levels scoring above :data:`SATURATED`, binomial test."""
    from scipy import stats

    scores = ev.scores
    shifted = [set_name(s, lv) for s, levels in ev.kept.items() for lv in levels if lv != 0]
    shifted = [e for e in shifted if e in scores.index]
    if not shifted:
        return Measurement(math.nan, "no kept shift level")
    n_sat = int((scores.loc[shifted, "ood_score"] > SATURATED).sum())
    return Measurement(
        n_sat / len(shifted),
        f"{n_sat} of {len(shifted)} kept shift levels score above {SATURATED} "
        "(one-sided binomial test against one half)",
        float(stats.binomtest(n_sat, len(shifted), 0.5, alternative="less").pvalue),
        n=len(shifted),
    )


def discriminator_claims(section: dict) -> list[Claim]:
    """The discriminator in the paper's regime: a level-0 set scores 0.5, and the score grades
    the levels (not saturated)."""
    out = [
        Claim(
            ClaimSpec(
                f"discriminator_null:{name}",
                f"Premise: the OOD score of the level-0 set {name} is 0.5 (ID vs ID)",
                "|OOD score - 0.5|, per discriminator repeat",
                NULL_TOLERANCE,
                "<",
                kind="premise",
                **notes(section),
            ),
            partial(null_score, name=name),
        )
        for name in null_sets(section)
    ]
    out.append(
        Claim(
            ClaimSpec(
                "discriminator_graded",
                f"Premise: the OOD score grades the levels (fewer than half score above "
                f"{SATURATED})",
                f"share of kept shift levels with OOD score > {SATURATED}",
                0.5,
                "<",
                kind="premise",
                **notes(section),
            ),
            saturated_share,
        )
    )
    return out


def far_not_solved(ev: Evidence, *, name: str) -> Measurement:
    return ev.far_floor[name]


def far_claims(section: dict) -> list[Claim]:
    """``far_nontrivial:<set>``: the floor battery (image statistics) does not solve the far set."""
    return [
        Claim(
            ClaimSpec(
                f"far_nontrivial:{name}",
                f"Premise: image statistics (the floor battery) do not solve the far set {name}",
                "share of the set the floor battery's best detector accepts at 95 % ID recall (FPR95), on the selection half of the images",
                float(section["far_floor_fpr95"]),
                ">",
                kind="premise",
                **notes(section),
            ),
            partial(far_not_solved, name=name),
        )
        for name in section["far_ood"]
    ]


def clean_regime(ev: Evidence) -> Measurement:
    """``reward_competitive_clean``: per seed, reward prediction's mean reward on the clean test
    images minus the thresholded classifier's; the detail adds arg-max classification's and
    reward prediction's clean abstain share, and says when the recipe misses the regime."""
    clean = ev.policies[ev.policies["eval_set"] == ID_SET]
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
    return per_seed(
        gap,
        f"clean test images: reward prediction earns {rp.mean():.3f} (abstains on "
        f"{at[REWARD]['abstain_ratio'].astype(float).mean():.1%}), thresholded classification "
        f"{thr.mean():.3f}{argmax}; margin {CLEAN_MARGIN:g}{regime}; difference",
    )


def clean_regime_claim(section: dict) -> Claim:
    """The reward model is competitive on clean data (gates the reward rows)."""
    roles = section["roles"]
    return Claim(
        ClaimSpec(
            "reward_competitive_clean",
            "Premise: the reward model is in the paper's regime on clean data (its mean reward "
            f"within {CLEAN_MARGIN:g} of the thresholded classifier's)",
            "mean reward on the clean test images: reward prediction - thresholded "
            "classification, per seed",
            -CLEAN_MARGIN,
            ">",
            kind="premise",
            requires=(f"fitted:{roles['reward_model']}", f"fitted:{roles['classifier']}"),
            **notes(section),
        ),
        clean_regime,
    )
