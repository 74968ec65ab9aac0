"""Control frames of the Kang claims' gates (review findings 2-3): a trend along a shift whose top
level the discriminator does not separate from clean, or whose top level moves no decision, is
gated; a trend whose x-axis order is within the discriminator repeats' noise does not hold on a
near-zero rho, though every seed gives the same rho (the per-seed test's no-spread fallback would
have read 0.5 ** seeds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from softmax_ood.analysis.claims import one_sided_t

from ..claims import evaluate_kang_claims
from ..study import spec as study_spec
from .controls import frames

SHIFT = "gaussian_noise"


def _row(table: pd.DataFrame, cid: str) -> pd.Series:
    return table.set_index("claim_id").loc[cid]


def _set_scores(f: dict, level_scores: dict[float, float], noise: float, seed: int = 1) -> None:
    """Give the ``SHIFT`` levels these mean OOD scores, with ``noise`` repeat-to-repeat."""
    rng = np.random.default_rng(seed)
    sc, grid = f["ood_scores"], f["grid"]
    for lv, v in level_scores.items():
        name = f"{SHIFT}@{lv:g}"
        i = sc.index[sc["eval_set"] == name][0]
        draw = rng.normal(0.0, noise, len(sc.at[i, "per_repeat"]))
        per = v + draw - draw.mean()  # the mean is exactly v (the levels' order is kept)
        sc.at[i, "per_repeat"] = list(per)
        sc.at[i, "ood_score"] = float(per.mean())
        grid.loc[grid["eval_set"] == name, "ood_score"] = float(per.mean())


def test_a_top_level_inside_the_null_tolerance_gates_the_trend(cfg):
    spec = study_spec(cfg)
    f = frames(spec, "paper")
    # a monotone but tiny rise: every level within 0.02 of the clean score
    _set_scores(f, {lv: 0.5 + 0.004 * lv for lv in (1, 2, 3, 4, 5)}, noise=0.001)
    t = evaluate_kang_claims(f, spec)
    sep = _row(t, f"score_separated:{SHIFT}")
    assert not sep["holds"] and sep["value"] < spec["score_separation"]
    ce = spec["roles"]["classifier"]
    trend = _row(t, f"ocs_trend:{ce}:{SHIFT}")
    assert trend["verdict"].startswith(f"cannot test: premise score_separated:{SHIFT}")
    assert _row(t, f"score_separated:{SHIFT}")["threshold"] == spec["score_separation"]
    # the same gate for every row that reads the shift: abstention and reward vs classification
    for cid in (f"abstain_rises:{SHIFT}", f"reward_beats_classification:{SHIFT}"):
        assert _row(t, cid)["verdict"].startswith(f"cannot test: premise score_separated:{SHIFT}")
    # the paper world separates the same shift: the premise holds there
    assert _row(evaluate_kang_claims(frames(spec, "paper"), spec), f"score_separated:{SHIFT}")[
        "holds"
    ]


def test_a_top_level_that_moves_no_decision_gates_the_trend(cfg):
    spec = study_spec(cfg)
    f = frames(spec, "paper")
    f["grid"].loc[f["grid"]["eval_set"] == f"{SHIFT}@5", "changed"] = 0.0
    t = evaluate_kang_claims(f, spec)
    assert not _row(t, f"predictions_change:{SHIFT}@top")["holds"]
    reward = spec["roles"]["reward_model"]
    assert _row(t, f"ocs_trend:{reward}:{SHIFT}")["verdict"].startswith(
        f"cannot test: premise predictions_change:{SHIFT}@top"
    )


def test_a_near_zero_rho_whose_x_order_is_repeat_noise_does_not_hold(cfg):
    spec = study_spec(cfg)
    f = frames(spec, "paper")
    # top level well separated; levels 1-4 within the repeats' noise of each other
    means = {1: 0.600, 2: 0.6005, 3: 0.601, 4: 0.6015, 5: 0.9}
    _set_scores(f, means, noise=0.01)
    # every seed the same distance ranks: along the mean scores a near-zero negative rho
    # (-0.086), identical for every seed; under the repeats' order of levels 1-4 it averages
    # +0.14 (the sign comes from the noise-ordered levels alone)
    dist = {0: 1.0, 1: 1.4, 2: 1.5, 3: 1.3, 4: 1.2, 5: 1.1}
    grid = f["grid"]
    for lv, d in dist.items():
        name = "id" if lv == 0 else f"{SHIFT}@{lv:g}"
        grid.loc[grid["eval_set"] == name, "distance"] = d
    ce = spec["roles"]["classifier"]
    g = grid[
        (grid["loss"] == ce) & grid["eval_set"].isin(["id", *(f"{SHIFT}@{lv}" for lv in means)])
    ]
    per_seed = g.groupby("seed").apply(
        lambda s: s["ood_score"].rank().corr(s["distance"].rank()), include_groups=False
    )
    assert per_seed.nunique() == 1 and -0.5 < per_seed.iloc[0] < 0
    # the per-seed test alone would read it as significant (no spread: 0.5 ** seeds)
    assert one_sided_t(per_seed.to_numpy(), 0.0, "<") < 0.05
    row = _row(evaluate_kang_claims(f, spec), f"ocs_trend:{ce}:{SHIFT}")
    assert _row(evaluate_kang_claims(f, spec), f"score_separated:{SHIFT}")["holds"]
    assert not row["holds"], row["detail"]
    assert row["p_value"] >= 0.05 and "discriminator repeats" in row["detail"], (
        row["verdict"],
        row["detail"],
    )


def _mech(spec: dict, loss: str, world: str = "paper") -> dict:
    f = frames(spec, world)
    return f, f["mechanism"]["loss"] == loss


def test_a_budget_that_cannot_reach_the_ocs_gates_the_mirror_claim(cfg):
    """Review finding 1: Adam's summed steps cannot move a bias by the distance to the OCS, so
    the reward model's mirror row reads "cannot test" with that reason, not "holds"."""
    spec = study_spec(cfg)
    loss = spec["roles"]["reward_model"]
    f, rows = _mech(spec, loss)
    f["mechanism"].loc[rows & (f["mechanism"]["kind"] == "lr_budget"), "mean"] = 1e-3
    t = evaluate_kang_claims(f, spec)
    prem = _row(t, f"constants_reachable:{loss}")
    assert not prem["holds"] and prem["verdict"].startswith("does not hold"), prem["verdict"]
    assert _row(t, f"constants_mirror_ocs:{loss}")["verdict"].startswith(
        f"cannot test: premise constants_reachable:{loss} does not hold"
    )
    # an SGD budget has no per-step bound: the premise cannot be evaluated
    f["mechanism"].loc[rows & (f["mechanism"]["kind"] == "lr_budget"), "eval_set"] = "sgd"
    t = evaluate_kang_claims(f, spec)
    assert _row(t, f"constants_reachable:{loss}")["verdict"].startswith("cannot test")


def test_the_mirror_needs_the_trained_constants_nearer_the_ocs_than_the_untrained(cfg):
    spec = study_spec(cfg)
    loss = spec["roles"]["reward_model"]
    f, rows = _mech(spec, loss)
    m = f["mechanism"]
    const = m[rows & (m["kind"] == "constants")]
    # the untrained network's constants exactly where the trained ones are: training moved
    # nothing, and the mirror row must not hold although the constants lie near the OCS
    for (seed, name), v in const.set_index(["seed", "name"])["mean"].items():
        sel = rows & (m["kind"] == "constants_init") & (m["seed"] == seed) & (m["name"] == name)
        m.loc[sel, "mean"] = v
    t = evaluate_kang_claims(f, spec)
    assert not _row(t, f"constants_vs_init:{loss}")["holds"]
    mirror = _row(t, f"constants_mirror_ocs:{loss}")
    assert mirror["value"] < spec["mirror_bar"] and not mirror["holds"], mirror["verdict"]
    # (the row may also carry a borderline premise's mark after it, issue 42)
    assert mirror["verdict"].startswith("does not hold (a part it needs does not hold)")


def test_the_ce_mirror_row_is_a_sanity_check(cfg):
    spec = study_spec(cfg)
    ce = spec["roles"]["classifier"]
    if ce not in spec["mechanism"]["losses"]:
        return
    t = evaluate_kang_claims(frames(spec, "paper"), spec)
    row = _row(t, f"constants_mirror_ocs:{ce}")
    assert row["kind"] == "sanity" and not row["supports"]
    # issue 46: CE's control of the mirror is the balanced-classes fact too, a sanity row
    vs_init = _row(t, f"constants_vs_init:{ce}")
    assert vs_init["kind"] == "sanity" and not vs_init["supports"]
    assert "balanced classes" in vs_init["claim"]


def test_rows_that_read_against_their_neighbour_say_so(cfg):
    """Issue 46: the reward model's constants_vs_init (a small move toward the OCS) is stated
    against Fig. 4's mirror row; the far-OOD trend says it is between sets and not the paper's."""
    spec = study_spec(cfg)
    t = evaluate_kang_claims(frames(spec, "paper"), spec)
    reward = spec["roles"]["reward_model"]
    if reward in spec["mechanism"]["losses"]:
        row = _row(t, f"constants_vs_init:{reward}")
        assert row["kind"] == "claim"
        assert f"constants_mirror_ocs:{reward}" in row["claim"]
        assert "of the untrained distance" in row["detail"]
        assert f"constants_mirror_ocs:{reward} tests against its bar" in row["detail"]
    far = t[t["claim_id"].str.endswith(":far_ood")]
    assert len(far)
    for text in far["claim"]:
        assert "between sets, not within a set" in text and "not in the paper" in text


def test_reward_vs_classification_is_judged_only_below_the_break_even(cfg):
    """Issue 46: under a shift where the classifier stays above the break-even accuracy the
    reward model's win is mechanical; the row is gated, and prints the break-even."""
    from ..claims import breakeven

    spec = study_spec(cfg)
    f = frames(spec, "paper")
    ce = spec["roles"]["classifier"]
    grid = f["grid"]
    grid.loc[(grid["loss"] == ce) & (grid["shift"] == SHIFT), "accuracy"] = 0.95
    t = evaluate_kang_claims(f, spec)
    assert not _row(t, f"below_breakeven:{SHIFT}")["holds"]
    row = _row(t, f"reward_beats_classification:{SHIFT}")
    assert "premise below_breakeven:" in row["verdict"] and not row["holds"], row["verdict"]
    assert f"break-even {breakeven(spec):.3g}; judged only below the break-even" in row["detail"]


@pytest.mark.slow
def test_a_reward_model_worst_on_clean_data_fails_the_regime_premise(cfg):
    """Issue 46: the recipe's reward model abstains on most clean images and earns less there
    than the thresholded classifier; the premise fails, says so, and gates the reward rows."""
    from ..claims import CLEAN_MARGIN, REWARD

    spec = study_spec(cfg)
    f = frames(spec, "paper")
    pol = f["policies"]
    sel = (pol["policy"] == REWARD) & (pol["eval_set"] == "id")
    pol.loc[sel, "mean_reward"] = 0.33 + 0.001 * pol.loc[sel, "seed"]
    pol.loc[sel, "abstain_ratio"] = 0.67
    t = evaluate_kang_claims(f, spec)
    prem = _row(t, "reward_competitive_clean")
    assert prem["kind"] == "premise" and prem["threshold"] == -CLEAN_MARGIN
    assert prem["verdict"].startswith("does not hold"), prem["verdict"]
    assert "does not put the reward model in the paper's regime" in prem["detail"]
    assert "67.0%" in prem["detail"]
    for cid in (f"abstain_rises:{SHIFT}", f"reward_beats_classification:{SHIFT}"):
        assert "premise reward_competitive_clean does not hold" in _row(t, cid)["verdict"]
    assert _row(evaluate_kang_claims(frames(spec, "paper"), spec), "reward_competitive_clean")[
        "holds"
    ]


def test_every_claim_declares_an_effect_and_prints_power(cfg):
    """Issue 46: every Kang claim row carries a smallest effect of interest (with its reason) and
    a power, so "too few seeds to tell" says the test could not see that effect."""
    import math

    spec = study_spec(cfg)
    f = frames(spec, "paper")
    # seed-to-seed spread (the control's abstain differences are identical per seed, where a
    # noncentral t's power is numerically undefined)
    pol = f["policies"]
    pol["abstain_ratio"] += np.random.default_rng(3).normal(0.0, 0.005, len(pol))
    t = evaluate_kang_claims(f, spec)
    claims = t[t["kind"] == "claim"]
    assert len(claims) and claims["effect"].notna().all()
    assert (claims["effect_source"] == "power target").all()
    assert claims["statistic"].str.contains("smallest effect of interest").all()
    tested = claims[~claims["verdict"].str.startswith("cannot test")]
    assert len(tested) and tested["power"].map(math.isfinite).all(), tested[["claim_id", "power"]]
