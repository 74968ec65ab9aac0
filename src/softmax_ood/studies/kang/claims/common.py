"""What every family of Kang's claims reads: the paper's name and policies, the study's bars and
smallest effects of interest, the names of the shift levels, the selection and confirmation
every row carries, and the small readers of the long frames."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.premises import FITTED_SHARE

PAPER = "Kang et al. 2024"
STANDARD = "classification_argmax"
REWARD = "reward_prediction"
THRESHOLDED = "classification"
NULL_TOLERANCE = 0.05  #: level-0 OOD score within this of 0.5 (issue 15)
#: reward prediction's clean mean reward may lie at most this below the thresholded
#: classifier's (a twentieth of a correct answer's +1): premise reward_competitive_clean
CLEAN_MARGIN = 0.05
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
#: where the bars of the rows come from (every claims row's selection note says it)
BARS = (
    "bars declared in the config (kang.change_epsilon, prediction_epsilon, accuracy_drop, "
    "far_floor_fpr95, score_separation, mirror_bar, discriminator.roundtrip_bar) and the "
    f"study's constants (NULL_TOLERANCE {NULL_TOLERANCE}, SATURATED {SATURATED}, FITTED_SHARE "
    f"{FITTED_SHARE}, CLEAN_MARGIN {CLEAN_MARGIN})"
)
#: the selection note a shift's rows append to their detail (:attr:`Evidence.selection_note`)
SELECTION = (
    "selection: discriminator alpha {alpha}; kept levels fixed in advance "
    "(pixel change > change_epsilon, no model); " + BARS + ". "
    "Confirmation: test images x seeds {seeds}."
)


def powered(family: str, statistic: str) -> dict:
    """A claim row's ``statistic``, ``effect`` and ``effect_source`` at its family's smallest
    effect of interest (:data:`EFFECTS`; the reason joins the statistic). Premises and sanity
    rows take their bare statistic."""
    size, why = EFFECTS[family]
    return {
        "statistic": f"{statistic}; power at the smallest effect of interest {size:g} ({why})",
        "effect": size,
        "effect_source": "power target",
    }


def notes(section: dict) -> dict[str, str]:
    """Every row's ``selection`` (what decided its settings) and ``confirmation`` (what its
    verdict is computed on), issue 25."""
    from ....analysis.selection import seeds_text

    alpha = (section.get("discriminator") or {}).get("alpha")
    disc = (
        f"discriminator alpha = {alpha:g} fixed in advance (the authors' code)"
        if alpha is not None
        else "discriminator alpha chosen on the ID validation split (kang_discriminator_select), "
        "never on test"
    )
    return {
        "selection": f"{disc}; shift levels kept by their pixel-change premise (no model "
        "involved); far sets kept by their floor-battery premise; " + BARS,
        "confirmation": f"{seeds_text(section['seeds'])} x the evaluated test images",
    }


def losses(section: dict) -> list[str]:
    """The main models' losses: classifier, reward model, regressor."""
    return [section["roles"][r] for r in ROLES]


def level_ids(section: dict) -> list[tuple[str, float]]:
    out = [(c, float(v)) for c in section["corruptions"] for v in sorted(section["severities"])]
    out += [("rotation", float(a)) for a in sorted(section["rotations"])]
    return out


def set_name(shift: str, level: float) -> str:
    return f"{shift}@{level:g}"


def null_sets(section: dict) -> list[str]:
    return ["id"] + (["rotation@0"] if section["rotations"] else [])


def discriminator_ids(section: dict) -> tuple[str, ...]:
    """The discriminator's premises: every statement about the OOD score rests on them."""
    return tuple(f"discriminator_null:{n}" for n in null_sets(section)) + ("discriminator_graded",)


def roundtrip_angles(section: dict) -> list[float]:
    if not section["rotations"]:
        return []
    return [float(t) for t in section["discriminator"].get("roundtrip_angles", (15, 30, 45))]


def breakeven(section: dict) -> float:
    """The reward's break-even accuracy: answering pays on average iff accuracy exceeds
    ``(abstain - wrong) / (correct - wrong)`` (+1/-4/0: 0.8)."""
    r = section["loss_entries"][section["roles"]["reward_model"]]
    c, w, a = (float(r[k]) for k in ("correct_reward", "wrong_reward", "abstain_reward"))
    return (a - w) / (c - w)


def series(frame: pd.DataFrame, shift: str, levels: list[float]) -> pd.DataFrame:
    """Rows of one shift type at the given levels; level 0 is the shift's own level-0 set if the
    grid has one (``rotation@0``), else the clean split."""
    own = frame[frame["shift"] == shift]
    zero = own[own["level"] == 0]
    if zero.empty:
        zero = frame[frame["shift"] == "none"].assign(shift=shift, level=0.0)
    rest = own[own["level"].isin([lv for lv in levels if lv != 0])]
    return pd.concat([zero, rest], ignore_index=True)


def at(frame: pd.DataFrame, level: float, column: str) -> pd.Series:
    """Per seed, ``column`` at ``level`` of a :func:`series`."""
    return frame[frame["level"] == level].set_index("seed")[column].astype(float)


def repeats(scores: pd.DataFrame, name: str) -> np.ndarray:
    """The per-discriminator-repeat OOD scores of set ``name`` (none: empty)."""
    if name not in scores.index:
        return np.array([])
    return np.asarray(scores.loc[name, "per_repeat"], dtype=float)


def top_level(section: dict, shift: str, levels: list[float], scores: pd.DataFrame) -> float:
    """The top level of a shift type: the highest kept severity; for rotation the kept angle
    with the highest OOD score (ties: the smaller angle)."""
    rest = [lv for lv in levels if lv != 0]
    if not rest:
        return 0.0
    if shift != ROTATION:
        return max(rest)
    sc = {lv: float(np.mean(repeats(scores, set_name(shift, lv)))) for lv in rest}
    sc = {lv: v for lv, v in sc.items() if math.isfinite(v)}
    return max(sorted(sc), key=lambda lv: sc[lv]) if sc else max(rest)
