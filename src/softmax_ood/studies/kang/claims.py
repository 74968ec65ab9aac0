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

Claims:

* ``ocs_trend:<loss>:<shift>`` -- predictions approach the OCS as the OOD score grows: per seed,
  Spearman rho(OOD score, distance to OCS) over the kept levels; the seeds' rhos are below 0
  (t-test). ``<shift>`` = ``far_ood``: the clean split and the far OOD sets.
* ``abstain_rises:<shift>`` -- reward prediction abstains more at the top level than at level 0,
  paired over seeds (Fig. 6).
* ``reward_beats_classification:<shift>`` -- the gap between reward prediction's mean reward and
  standard (arg-max, never abstains) classification's grows from level 0 to the top level,
  paired over seeds (Fig. 7: the paper's claim is that the gap grows with the shift).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims, paired
from ...analysis.premises import FITTED_SHARE, fitted
from .tables import FAR, graded_shifts, main_runs

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
SATURATED = 0.99  #: an OOD score above this no longer grades the level
ROLES = ("classifier", "reward_model", "regressor")


def _level_ids(spec: dict) -> list[tuple[str, float]]:
    out = [(c, float(sev)) for c in spec["corruptions"] for sev in sorted(spec["severities"])]
    out += [("rotation", float(a)) for a in sorted(spec["rotations"])]
    return out


def _set_name(shift: str, level: float) -> str:
    return f"{shift}@{level:g}"


def _null_sets(spec: dict) -> list[str]:
    return ["id"] + (["rotation@0"] if spec["rotations"] else [])


def claim_specs(spec: dict) -> list[ClaimSpec]:
    """Every premise and claim of the study section ``spec`` (:func:`study.spec`)."""
    shifts = graded_shifts(spec)
    losses = [spec["roles"][r] for r in ROLES]
    reward, classifier = spec["roles"]["reward_model"], spec["roles"]["classifier"]
    eps = float(spec.get("change_epsilon", 0.002))
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
    # every statement about the OOD score rests on a discriminator in the paper's regime
    disc = tuple(f"discriminator_null:{name}" for name in _null_sets(spec)) + (
        "discriminator_graded",
    )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"score_rises:{s}",
                f"Premise: the OOD score rises with the {s} level",
                "Spearman rho(level, OOD score) over the kept levels",
                0.0,
                ">",
                kind="premise",
                requires=disc,
            )
        )
        out.append(
            ClaimSpec(
                f"accuracy_falls:{s}",
                f"Premise: the classifier's accuracy falls from level 0 to the top {s} level",
                "accuracy(top level) - accuracy(level 0), per seed",
                0.0,
                "<",
                kind="premise",
                requires=(f"fitted:{classifier}",),
            )
        )
    for loss in losses:
        for s in shifts + ([FAR] if spec["far_ood"] else []):
            req = (f"fitted:{loss}",) + ((f"score_rises:{s}",) if s != FAR else disc)
            out.append(
                ClaimSpec(
                    f"ocs_trend:{loss}:{s}",
                    f"{loss}: predictions approach the OCS as the OOD score grows along {s}",
                    "Spearman rho(OOD score, distance to OCS) per seed",
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
                requires=(f"fitted:{reward}", f"score_rises:{s}"),
            )
        )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"reward_beats_classification:{s}",
                f"the advantage of reward prediction over standard classification grows from "
                f"level 0 to the top {s} level",
                "[reward(RP) - reward(CE)](top) - [same](level 0), per seed",
                0.0,
                ">",
                requires=(f"fitted:{reward}", f"fitted:{classifier}", f"accuracy_falls:{s}"),
            )
        )
    return out


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


def _spearman_per_seed(frame: pd.DataFrame, x: str, y: str) -> pd.Series:
    from scipy import stats

    out = {}
    for seed, g in frame.groupby("seed"):
        if len(g) < 3 or g[x].nunique() < 2 or g[y].nunique() < 2:
            continue
        out[seed] = float(stats.spearmanr(g[x], g[y]).statistic)
    return pd.Series(out, dtype=float)


def _per_seed(measure: pd.Series, what: str) -> Measurement:
    if measure.empty:
        return Measurement(math.nan, f"{what}: undefined (constant series)")
    per = ", ".join(f"{s}: {v:.2f}" for s, v in measure.items())
    return Measurement(
        float(measure.mean()),
        f"{what}: mean {measure.mean():.3f} over {len(measure)} seed(s) (per seed {per})",
        samples=tuple(measure.to_numpy()),
    )


def _at(frame: pd.DataFrame, level: float, column: str) -> pd.Series:
    return frame[frame["level"] == level].set_index("seed")[column].astype(float)


def evaluate_kang_claims(frames: dict, spec: dict) -> pd.DataFrame:
    """The claims table (premises first) from the long frames of :func:`tables.load_frames`
    (``grid``, ``policies``, ``fit``, ``levels``, ``ood_scores``)."""
    from scipy import stats

    alpha = float(spec.get("alpha", 0.05))
    roles = spec["roles"]
    grid = main_runs(frames["grid"], spec)
    pol = main_runs(frames["policies"], spec)
    fit = main_runs(frames["fit"], spec)
    scores = frames["ood_scores"].set_index("eval_set")
    m: dict[str, Measurement] = {}
    for loss in [roles[r] for r in ROLES]:
        f = fit[fit["loss"] == loss].set_index("seed")
        family = spec["loss_entries"][loss]["loss"]
        m[f"fitted:{loss}"] = fitted(f["train_loss"], f["ocs_loss"], loss=family, what=loss)
    m.update(_change_measurements(frames["levels"], spec))
    kept = kept_levels(frames["levels"], spec)
    for name in _null_sets(spec):
        per = (
            np.abs(np.asarray(scores.loc[name, "per_repeat"], dtype=float) - 0.5)
            if name in scores.index
            else np.array([])
        )
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
    classifier = grid[grid["loss"] == roles["classifier"]]
    for s in graded_shifts(spec):
        levels = kept[s]
        top = max(levels)
        dropped = [lv for sh, lv in _level_ids(spec) if sh == s and lv not in levels]
        note = (
            f" (levels dropped as no-ops: {', '.join(f'{x:g}' for x in dropped)})"
            if dropped
            else ""
        )
        sc = _series(classifier, s, levels).drop_duplicates("eval_set")
        if len(levels) >= 3:
            from ...analysis.claims import spearman

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
                pm.value, f"{s}: " + pm.detail, samples=pm.samples
            )
        else:
            m[f"accuracy_falls:{s}"] = Measurement(math.nan, f"{s}: no kept level{note}")
        for loss in [roles[r] for r in ROLES]:
            g = _series(grid[grid["loss"] == loss], s, levels)
            m[f"ocs_trend:{loss}:{s}"] = _per_seed(
                _spearman_per_seed(g, "ood_score", "distance"), f"{loss}, {s}{note}"
            )
        ps = _series(pol, s, levels)
        rp = ps[ps["policy"] == REWARD]
        st = ps[ps["policy"] == STANDARD]
        if top > 0:
            d = paired(
                _at(rp, top, "abstain_ratio"),
                _at(rp, 0.0, "abstain_ratio"),
                names=(f"level {top:g}", "level 0"),
            )
            m[f"abstain_rises:{s}"] = Measurement(d.value, f"{s}: " + d.detail, samples=d.samples)
            gap_top = _at(rp, top, "mean_reward") - _at(st, top, "mean_reward")
            gap_0 = _at(rp, 0.0, "mean_reward") - _at(st, 0.0, "mean_reward")
            d = paired(gap_top, gap_0, names=(f"gap at level {top:g}", "gap at level 0"))
            m[f"reward_beats_classification:{s}"] = Measurement(
                d.value, f"{s}: " + d.detail, samples=d.samples
            )
        else:
            for cid in (f"abstain_rises:{s}", f"reward_beats_classification:{s}"):
                m[cid] = Measurement(math.nan, f"{s}: no kept level{note}")
    if spec["far_ood"]:
        for loss in [roles[r] for r in ROLES]:
            g = grid[grid["loss"] == loss]
            g = g[(g["shift"] == "none") | (g["shift"] == FAR)]
            m[f"ocs_trend:{loss}:{FAR}"] = _per_seed(
                _spearman_per_seed(g, "ood_score", "distance"), f"{loss}, clean + far OOD sets"
            )
    return evaluate_claims(PAPER, claim_specs(spec), m, alpha=alpha)
