"""Kang et al.'s claims, declared as data and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`), **per shift type** (never averaged across shift types; the
paper itself reports a counterexample, UTKFace with impulse noise, Fig. 9).

Premises (first rows), per graded shift type ``s`` (each corruption, rotation):

* ``score_rises:s`` -- the discriminator's OOD score rises with the level (Spearman rho of level
  vs score > 0, levels 0 = clean .. highest): otherwise "more shifted" is not readable along s;
* ``accuracy_falls:s`` -- the classifier's ID accuracy falls with the level (rho < 0): the
  selective-classification comparison assumes the shift hurts the classifier.

Claims:

* ``ocs_trend:<loss>`` -- pooled over every evaluation set: Spearman(OOD score, distance to the
  OCS) < 0 (predictions move toward the OCS as inputs become more OOD, Fig. 3);
* ``ocs_trend:<loss>:s`` -- the same along shift type s (requires ``score_rises:s``; the far OOD
  series has no graded premise);
* ``abstain_rises:s`` -- reward prediction abstains more as the level grows (rho > 0; requires
  ``score_rises:s``; Fig. 6);
* ``reward_beats_classification:s`` -- at the highest level, reward prediction's mean reward
  exceeds the standard classifier's (arg-max, never abstains: the paper's "standard
  classification"), paired over seeds, one-sided t-test (requires ``accuracy_falls:s``; Fig. 7).

Spearman statistics are computed on the means over seeds of each level.
"""

from __future__ import annotations

import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims, paired, spearman
from .tables import FAR, by_shift, graded_shifts, main_runs, table_distance

__all__ = ["PAPER", "claim_specs", "evaluate_kang_claims"]

PAPER = "Kang et al. 2024"
STANDARD = "classification_argmax"
REWARD = "reward_prediction"


def claim_specs(spec: dict) -> list[ClaimSpec]:
    shifts = graded_shifts(spec)
    losses = [spec["roles"][r] for r in ("classifier", "reward_model", "regressor")]
    out = []
    for s in shifts:
        out.append(
            ClaimSpec(
                f"score_rises:{s}",
                f"Premise: the OOD score rises with the {s} level",
                "Spearman rho(level, OOD score)",
                0.0,
                ">",
                premise=True,
            )
        )
        out.append(
            ClaimSpec(
                f"accuracy_falls:{s}",
                f"Premise: the classifier's accuracy falls with the {s} level",
                "Spearman rho(level, ID accuracy)",
                0.0,
                "<",
                premise=True,
            )
        )
    for loss in losses:
        out.append(
            ClaimSpec(
                f"ocs_trend:{loss}",
                f"{loss}: predictions approach the OCS as the OOD score grows "
                "(all evaluation sets pooled)",
                "Spearman rho(OOD score, distance to OCS)",
                0.0,
                "<",
            )
        )
        for s in shifts:
            out.append(
                ClaimSpec(
                    f"ocs_trend:{loss}:{s}",
                    f"{loss}: predictions approach the OCS along {s}",
                    "Spearman rho(OOD score, distance to OCS)",
                    0.0,
                    "<",
                    requires=(f"score_rises:{s}",),
                )
            )
        if spec["far_ood"]:
            out.append(
                ClaimSpec(
                    f"ocs_trend:{loss}:{FAR}",
                    f"{loss}: far OOD sets are closer to the OCS the higher their OOD score",
                    "Spearman rho(OOD score, distance to OCS)",
                    0.0,
                    "<",
                )
            )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"abstain_rises:{s}",
                f"reward prediction abstains more as the {s} level grows",
                "Spearman rho(level, abstain ratio)",
                0.0,
                ">",
                requires=(f"score_rises:{s}",),
            )
        )
    for s in shifts:
        out.append(
            ClaimSpec(
                f"reward_beats_classification:{s}",
                f"at the highest {s} level reward prediction earns more than "
                "standard (arg-max) classification",
                "mean reward difference, paired over seeds",
                0.0,
                ">",
                test="paired",
                requires=(f"accuracy_falls:{s}",),
            )
        )
    return out


def evaluate_kang_claims(frames: dict, spec: dict) -> pd.DataFrame:
    """The claims table (premises first) from the long frames of :func:`tables.load_frames`."""
    dist = table_distance(frames, spec)
    pol = by_shift(main_runs(frames["policies"], spec), spec)
    classifier = spec["roles"]["classifier"]
    m: dict[str, Measurement] = {}
    for s in graded_shifts(spec):
        d = dist[(dist["shift"] == s) & (dist["loss"] == classifier)].sort_values("level")
        m[f"score_rises:{s}"] = spearman(d["level"], d["ood_score"], what=f"{s}: ")
        m[f"accuracy_falls:{s}"] = spearman(d["level"], d["accuracy_mean"], what=f"{s}: ")
    for loss in [spec["roles"][r] for r in ("classifier", "reward_model", "regressor")]:
        d = dist[dist["loss"] == loss]
        pooled = d.drop_duplicates("eval_set")
        m[f"ocs_trend:{loss}"] = spearman(
            pooled["ood_score"], pooled["distance_mean"], what=f"{loss}, all sets: "
        )
        for s in graded_shifts(spec) + ([FAR] if spec["far_ood"] else []):
            ds = d[d["shift"] == s]
            m[f"ocs_trend:{loss}:{s}"] = spearman(
                ds["ood_score"], ds["distance_mean"], what=f"{loss}, {s}: "
            )
    for s in graded_shifts(spec):
        ps = pol[pol["shift"] == s]
        r = ps[ps["policy"] == REWARD].groupby("level")["abstain_ratio"].mean()
        m[f"abstain_rises:{s}"] = spearman(r.index, r.to_numpy(), what=f"{s}: ")
        top = ps["level"].max()
        at = ps[ps["level"] == top]
        high = at[at["policy"] == REWARD].set_index("seed")["mean_reward"]
        low = at[at["policy"] == STANDARD].set_index("seed")["mean_reward"]
        pm = paired(high, low, names=("reward prediction", "classification"))
        m[f"reward_beats_classification:{s}"] = Measurement(
            pm.value, f"{s} level {top:g}: " + pm.detail, pm.p_value
        )
    return evaluate_claims(PAPER, claim_specs(spec), m, alpha=float(spec.get("alpha", 0.05)))
