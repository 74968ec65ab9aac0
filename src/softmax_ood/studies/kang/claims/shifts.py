"""The premises of each graded shift type, which gate its trend rows: its OOD score rises with the
level and clearly separates the top level from level 0, the top level changes the classifier's
decisions and its accuracy, and (Fig. 7's regime) the accuracy there falls below the reward's
break-even. "Top level": the highest kept severity; for rotation the kept angle with the highest
OOD score (:func:`.common.top_level`)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired, spearman
from ....analysis.measures import per_seed, separation
from ..tables import graded_shifts
from .common import (
    ROTATION,
    at,
    breakeven,
    discriminator_ids,
    notes,
    repeats,
    roundtrip_angles,
    series,
)
from .evidence import Evidence


def score_rises(ev: Evidence, *, shift: str) -> Measurement:
    """Rotation: per discriminator repeat, the top angle's score minus mean ``rotation@0``'s; a
    corruption: Spearman rho(level, OOD score) over the kept levels, one-sided."""
    sh = ev.shifts[shift]
    s, top, note = shift, sh.top, sh.note
    if s == ROTATION:
        top_r, zero_r = repeats(ev.scores, sh.top_set), repeats(ev.scores, "rotation@0")
        if not (top > 0 and len(top_r) and len(zero_r)):
            return Measurement(math.nan, f"{s}: no kept angle{note}")
        d = top_r - zero_r.mean()
        return Measurement(
            float(d.mean()),
            f"rotation: the most-OOD kept angle {top:g} scores {top_r.mean():.3f} vs "
            f"rotation@0 {zero_r.mean():.3f}{note}",
            samples=tuple(d),
        )
    if len(sh.levels) < 3:
        return Measurement(math.nan, f"{s}: fewer than 3 kept levels{note}")
    sc = series(ev.classifier, s, sh.levels).drop_duplicates("eval_set")
    return spearman(sc["level"], sc["ood_score"], what=f"{s}{note}: ", alternative="greater")


def score_separated(ev: Evidence, *, shift: str) -> Measurement:
    """The top level's OOD score minus level 0's, Welch t over the discriminator repeats."""
    sh = ev.shifts[shift]
    return separation(
        repeats(ev.scores, sh.top_set) if sh.top > 0 else np.array([]),
        repeats(ev.scores, sh.zero_set),
        float(ev.section["score_separation"]),
        f"{shift}: top level {sh.top_set} vs level 0 ({sh.zero_set}){sh.note}",
    )


def top_decisions_changed(ev: Evidence, *, shift: str) -> Measurement:
    sh = ev.shifts[shift]
    clf = ev.classifier
    if sh.top > 0 and sh.top_set in set(clf["eval_set"]) and "changed" in clf:
        return per_seed(
            ev.classifier_by_set.loc[sh.top_set]["changed"].astype(float),
            f"{sh.top_set} (the top level): share of decisions changed vs clean{sh.note}",
        )
    return Measurement(
        math.nan, f"{shift}: no decision changes recorded at a kept top level{sh.note}"
    )


def accuracy_drop(ev: Evidence, *, shift: str) -> Measurement:
    """The classifier's accuracy at the top level minus level 0's, paired over seeds."""
    sh = ev.shifts[shift]
    if not sh.top > 0:
        return Measurement(math.nan, f"{shift}: no kept level{sh.note}")
    cs = series(ev.classifier, shift, sh.levels)
    pm = paired(
        at(cs, sh.top, "accuracy"),
        at(cs, 0.0, "accuracy"),
        names=(f"level {sh.top:g}", "level 0"),
    )
    return Measurement(pm.value, f"{shift}: " + pm.detail + sh.note, samples=pm.samples)


def top_accuracy(ev: Evidence, *, shift: str) -> Measurement:
    """The classifier's accuracy at the top level, per seed (against the break-even)."""
    sh = ev.shifts[shift]
    if not sh.top > 0:
        return Measurement(math.nan, f"{shift}: no kept level{sh.note}")
    cs = series(ev.classifier, shift, sh.levels)
    return per_seed(
        at(cs, sh.top, "accuracy"),
        f"{shift}: classifier accuracy at level {sh.top:g} (break-even "
        f"{breakeven(ev.section):.3g})",
    )


def shift_premises(section: dict) -> list[Claim]:
    """Per graded shift type: ``score_rises``, ``score_separated`` (:func:`score_premises`),
    ``predictions_change@top``, ``accuracy_falls`` and ``below_breakeven``
    (:func:`classifier_premises`)."""
    out = []
    for s in graded_shifts(section):
        out += score_premises(section, s) + classifier_premises(section, s)
    return out


def score_premises(section: dict, s: str) -> list[Claim]:
    """The OOD score of shift ``s`` rises with the level and separates its top level from level
    0; both rest on the discriminator's premises (and, for rotation, its round trips)."""
    separation_bar = float(section["score_separation"])
    rt = tuple(f"rotation_roundtrip:{t:g}" for t in roundtrip_angles(section))
    on_score = discriminator_ids(section) + (rt if s == ROTATION else ())
    return [
        Claim(
            ClaimSpec(
                f"score_rises:{s}",
                "Premise: the most-OOD angle (highest OOD score) scores above rotation@0"
                if s == ROTATION
                else f"Premise: the OOD score rises with the {s} level",
                "OOD score(top angle) - mean OOD score(rotation@0), per discriminator repeat"
                if s == ROTATION
                else "Spearman rho(level, OOD score) over the kept levels",
                0.0,
                ">",
                kind="premise",
                requires=on_score,
                **notes(section),
            ),
            partial(score_rises, shift=s),
        ),
        Claim(
            ClaimSpec(
                f"score_separated:{s}",
                f"Premise: the top {s} level is clearly more OOD than level 0 (OOD score "
                f"higher by more than {separation_bar:g})",
                "OOD score(top level) - OOD score(level 0), Welch t-test over the "
                "discriminator repeats",
                separation_bar,
                ">",
                kind="premise",
                requires=on_score,
                **notes(section),
            ),
            partial(score_separated, shift=s),
        ),
    ]


def classifier_premises(section: dict, s: str) -> list[Claim]:
    """The top level of shift ``s`` changes the classifier's decisions, lowers its accuracy, and
    (Fig. 7's regime) puts it below the reward's break-even."""
    classifier = section["roles"]["classifier"]
    drop = float(section["accuracy_drop"])
    return [
        Claim(
            ClaimSpec(
                f"predictions_change:{s}@top",
                f"Premise: the top {s} level changes the classifier's decisions",
                "share of images whose arg-max differs from the clean image's at the top "
                "level, per seed",
                float(section["prediction_epsilon"]),
                ">",
                kind="premise",
                requires=(f"fitted:{classifier}",),
                **notes(section),
            ),
            partial(top_decisions_changed, shift=s),
        ),
        Claim(
            ClaimSpec(
                f"accuracy_falls:{s}",
                f"Premise: the classifier's accuracy falls by more than {drop:g} from level "
                f"0 to the top {s} level",
                "accuracy(top level) - accuracy(level 0), per seed",
                -drop,
                "<",
                kind="premise",
                requires=(f"fitted:{classifier}",),
                **notes(section),
            ),
            partial(accuracy_drop, shift=s),
        ),
        Claim(
            ClaimSpec(
                f"below_breakeven:{s}",
                f"Premise (Fig. 7's regime, gates reward_beats_classification): the "
                f"classifier's accuracy at the top {s} level is below the reward's "
                f"break-even {breakeven(section):.3g}",
                "classifier accuracy at the top level, per seed",
                breakeven(section),
                "<",
                kind="premise",
                requires=(f"fitted:{classifier}",),
                **notes(section),
            ),
            partial(top_accuracy, shift=s),
        ),
    ]
