"""Selective classification policies and their rewards, with hand-checked values."""

from __future__ import annotations

import numpy as np
import pytest

from softmax_ood.studies.kang.ocs import ocs_reward
from softmax_ood.studies.kang.selective import (
    POLICIES,
    action_fractions,
    classifier_policy,
    evaluate_policies,
    expected_reward_threshold,
    oracle_policy,
    realised_rewards,
    reward_policy,
    summarise,
)

REWARDS = {"correct_reward": 1.0, "wrong_reward": -4.0, "abstain_reward": 0.0}


def test_threshold_is_four_fifths():
    assert expected_reward_threshold(**REWARDS) == pytest.approx(0.8)
    assert expected_reward_threshold(correct_reward=1, wrong_reward=-1, abstain_reward=0) == 0.5
    with pytest.raises(ValueError, match="exceed"):
        expected_reward_threshold(correct_reward=-4, wrong_reward=1, abstain_reward=0)


def test_classifier_policy_threshold_edges():
    probs = np.array([[0.8, 0.2], [0.79, 0.21], [0.1, 0.9]])
    assert classifier_policy(probs, 0.8).tolist() == [0, 2, 1]  # 2 = abstain
    assert classifier_policy(probs, 0.0).tolist() == [0, 0, 1]  # arg-max never abstains


def test_reward_policy_and_ocs_policy_abstain():
    ocs = ocs_reward(np.repeat(np.arange(10), 3), 10, **REWARDS)
    assert reward_policy(ocs[None]).tolist() == [10]
    rewards = np.array([[0.9, -3.0, 0.0], [-4.0, -3.0, 0.1], [0.0, 0.0, 0.0]])
    assert reward_policy(rewards).tolist() == [0, 2, 0]  # exact tie: first (a class)


def test_realised_rewards_by_hand():
    r = realised_rewards(np.array([0, 1, 3, 2]), np.array([0, 0, 1, 2]), 3, **REWARDS)
    assert r.tolist() == [1.0, -4.0, 0.0, 1.0]
    s = summarise(np.array([0, 1, 3, 2]), np.array([0, 0, 1, 2]), 3, **REWARDS)
    assert s == {"abstain_ratio": 0.25, "mean_reward": -0.5, "accuracy_answered": 2 / 3, "n": 4}
    assert action_fractions(np.array([0, 1, 3, 3]), 3).tolist() == [0.25, 0.25, 0.0, 0.5]
    with pytest.raises(ValueError, match="actions must lie"):
        realised_rewards(np.array([4]), np.array([0]), 3, **REWARDS)


def test_perfect_confident_classifier_never_abstains():
    labels = np.repeat(np.arange(4), 5)
    logits = np.full((20, 4), -10.0)
    logits[np.arange(20), labels] = 10.0
    rewards = np.full((20, 5), -4.0)
    rewards[:, 4] = 0.0
    rewards[np.arange(20), labels] = 1.0
    rows = evaluate_policies(labels, reward_outputs=rewards, ce_logits=logits, **REWARDS)
    assert [r["policy"] for r in rows] == list(POLICIES)
    for row in rows:
        assert row["abstain_ratio"] == 0.0 and row["mean_reward"] == 1.0 and row["n"] == 20


def test_uninformative_inputs_make_thresholded_policies_abstain():
    labels = np.repeat(np.arange(4), 5)
    rows = {
        r["policy"]: r
        for r in evaluate_policies(
            labels, reward_outputs=np.tile([-2.5, -2.5, -2.5, -2.5, 0.0], (20, 1)),
            ce_logits=np.zeros((20, 4)), **REWARDS,
        )
    }  # fmt: skip
    assert rows["reward_prediction"]["abstain_ratio"] == 1.0
    assert rows["reward_prediction"]["mean_reward"] == 0.0
    assert rows["classification"]["abstain_ratio"] == 1.0  # p_max = 0.25 < 0.8
    assert rows["classification_argmax"]["abstain_ratio"] == 0.0
    assert rows["classification_argmax"]["mean_reward"] == pytest.approx(0.25 * 1 + 0.75 * -4)


def test_oracle_fits_temperature_on_the_evaluation_split():
    """Overconfident and 50 % wrong: the oracle's T fitted on these very labels grows large,
    its calibrated max-probability falls under 4/5 and it abstains; the T=1 classifier does not."""
    labels = np.array([0, 1] * 10)
    logits = np.zeros((20, 2))
    logits[:, 0] = 8.0  # always predicts class 0 with p ~ 1
    actions, t = oracle_policy(logits, labels, 0.8)
    assert t > 10 and (actions == 2).all()
    assert (
        classifier_policy(np.exp(logits) / np.exp(logits).sum(1, keepdims=True), 0.8) == 0
    ).all()
    row = evaluate_policies(labels, ce_logits=logits, **REWARDS)[-1]
    assert row["policy"] == "oracle_eval_temperature" and row["temperature"] == pytest.approx(t)
    assert row["mean_reward"] == 0.0
