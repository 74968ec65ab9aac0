"""Selective classification with a reward model, a classifier, and an oracle (Kang et al. Sec. 5).

Actions are integers ``0 .. k``: ``a < k`` classifies the input as class ``a``, ``a == k``
(the last index, the column of the abstain output) abstains. Rewards: ``correct_reward`` for the
right class, ``wrong_reward`` for a wrong one, ``abstain_reward`` for abstaining (paper: +1, -4,
0; always passed explicitly).

Policies
--------
``reward_prediction``
    A model trained with ``RewardMSELoss`` predicts the reward of each of the ``k + 1`` actions;
    the policy takes the arg-max (:func:`reward_policy`). Its OCS (mean reward per action)
    abstains, so "reversion to the OCS" makes it abstain more as inputs become OOD.
``classification``
    A cross-entropy classifier predicts the arg-max class and abstains when the maximum
    probability is below the threshold that maximises the expected reward if the probability
    were calibrated: predict iff :math:`p r_c + (1 - p) r_w \\ge r_{abs}`, i.e.
    :math:`p \\ge (r_{abs} - r_w) / (r_c - r_w)` = 4/5 for (+1, -4, 0)
    (:func:`expected_reward_threshold`, :func:`classifier_policy`), on softmax probabilities
    at temperature 1.
``classification_argmax``
    The same classifier without a threshold: always the arg-max class, never abstains. This is
    how Sec. 5.1 describes the standard classification agent ("the OCS for this approach
    corresponds to a policy that never chooses to abstain"; Fig. 6: it "almost never selected
    abstain"), whereas with the 4/5 threshold the classifier's own OCS (the label marginal,
    max 0.1 for 10 balanced classes) would abstain. Both rows are reported; which one is "the
    paper's" standard classifier is an ambiguity of the paper.
``oracle_eval_temperature``
    **Oracle**, an upper bound, not a method: the same classifier, temperature-scaled with a
    temperature fitted **on the evaluation split itself** (its labels included), then the same
    threshold (:func:`oracle_policy`). It sees the evaluation labels, which neither other policy
    does (paper Sec. 5.2).

Ties: ``numpy.argmax`` takes the first maximum, so an exact tie between a class and abstaining
classifies (the same convention as predicting at ``p == threshold``).

:see Paper: Kang, Setlur, Tomlin & Levine, ICLR 2024, https://arxiv.org/abs/2310.00873, Sec. 5.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ...calibration import fit_temperature

__all__ = [
    "POLICIES",
    "action_fractions",
    "classifier_policy",
    "evaluate_policies",
    "expected_reward_threshold",
    "oracle_policy",
    "realised_rewards",
    "reward_policy",
    "summarise",
]

POLICIES: tuple[str, ...] = (
    "reward_prediction",
    "classification",
    "classification_argmax",
    "oracle_eval_temperature",
)


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _matrix(x: Any, what: str, min_cols: int = 1) -> np.ndarray:
    z = _numpy(x).astype(np.float64)
    if z.ndim != 2 or z.shape[0] == 0 or z.shape[1] < min_cols:
        raise ValueError(f"{what} must be a non-empty 2-D array with >= {min_cols} columns")
    if not np.isfinite(z).all():
        raise ValueError(f"{what} contain NaN or inf")
    return z


def _rewards(correct_reward: float, wrong_reward: float, abstain_reward: float):
    vals = []
    for name, v in (
        ("correct_reward", correct_reward),
        ("wrong_reward", wrong_reward),
        ("abstain_reward", abstain_reward),
    ):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite real number, got {v!r}")
        vals.append(float(v))
    if not vals[0] > vals[1]:
        raise ValueError("correct_reward must exceed wrong_reward")
    return tuple(vals)


def expected_reward_threshold(
    *, correct_reward: float, wrong_reward: float, abstain_reward: float
) -> float:
    """The confidence ``p*`` above which classifying beats abstaining in expectation:
    ``(abstain - wrong) / (correct - wrong)``; ``0.8`` for (+1, -4, 0)."""
    rc, rw, ra = _rewards(correct_reward, wrong_reward, abstain_reward)
    return (ra - rw) / (rc - rw)


def reward_policy(predicted_rewards: Any) -> np.ndarray:
    """Arg-max over the ``k + 1`` predicted rewards; action ``k`` (last) is abstain."""
    return np.argmax(_matrix(predicted_rewards, "predicted_rewards", 2), axis=1)


def classifier_policy(probs: Any, threshold: float) -> np.ndarray:
    """Arg-max class of ``probs`` ``(N, k)``, or abstain (action ``k``) where the maximum
    probability is below ``threshold``."""
    p = _matrix(probs, "probs")
    if not (isinstance(threshold, numbers.Real) and 0.0 <= threshold <= 1.0):
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    actions = np.argmax(p, axis=1)
    return np.where(p.max(axis=1) < threshold, p.shape[1], actions)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def oracle_policy(logits: Any, labels: Any, threshold: float) -> tuple[np.ndarray, float]:
    """**Oracle**: fit a temperature on ``(logits, labels)`` of the evaluation split itself
    (:func:`softmax_ood.calibration.fit_temperature`), then :func:`classifier_policy` on
    ``softmax(logits / T)``. Returns ``(actions, T)``."""
    z = _matrix(logits, "logits", 2)
    t = fit_temperature(z, _numpy(labels))
    return classifier_policy(_softmax(z / t), threshold), float(t)


def realised_rewards(
    actions: Any,
    labels: Any,
    num_classes: int,
    *,
    correct_reward: float,
    wrong_reward: float,
    abstain_reward: float,
) -> np.ndarray:
    """Per-sample reward of ``actions`` (``0 .. num_classes``, the last abstains)."""
    rc, rw, ra = _rewards(correct_reward, wrong_reward, abstain_reward)
    a = _numpy(actions)
    y = _numpy(labels)
    if a.shape != y.shape or a.ndim != 1:
        raise ValueError(
            f"actions and labels must be 1-D of the same length, got {a.shape}, {y.shape}"
        )
    if a.size and (a.min() < 0 or a.max() > num_classes):
        raise ValueError(f"actions must lie in [0, {num_classes}] ({num_classes} = abstain)")
    return np.where(a == num_classes, ra, np.where(a == y, rc, rw)).astype(np.float64)


def action_fractions(actions: Any, num_classes: int) -> np.ndarray:
    """Fraction of samples taking each action, ``(num_classes + 1,)`` (Fig. 5, bottom row)."""
    a = _numpy(actions)
    return np.bincount(a, minlength=num_classes + 1).astype(np.float64) / max(len(a), 1)


def summarise(
    actions: Any,
    labels: Any,
    num_classes: int,
    *,
    correct_reward: float,
    wrong_reward: float,
    abstain_reward: float,
) -> dict[str, float]:
    """``abstain_ratio``, ``mean_reward``, ``accuracy_answered`` (accuracy on the samples not
    abstained on; NaN if none) and ``n`` of one policy on one evaluation set."""
    a = _numpy(actions)
    r = realised_rewards(
        a,
        labels,
        num_classes,
        correct_reward=correct_reward,
        wrong_reward=wrong_reward,
        abstain_reward=abstain_reward,
    )
    answered = a != num_classes
    y = _numpy(labels)
    acc = float(np.mean(a[answered] == y[answered])) if answered.any() else float("nan")
    return {
        "abstain_ratio": float(np.mean(~answered)),
        "mean_reward": float(r.mean()),
        "accuracy_answered": acc,
        "n": int(len(a)),
    }


def evaluate_policies(
    labels: Any,
    *,
    correct_reward: float,
    wrong_reward: float,
    abstain_reward: float,
    reward_outputs: Any | None = None,
    ce_logits: Any | None = None,
) -> list[dict[str, Any]]:
    """One row per policy on one evaluation set: :func:`summarise` plus ``policy`` (a name of
    :data:`POLICIES`) and, for the oracle, ``temperature``.

    :param labels: ``(N,)`` true labels of the evaluation set.
    :param reward_outputs: ``(N, k + 1)`` outputs of the reward model (skipped if None).
    :param ce_logits: ``(N, k)`` logits of the cross-entropy classifier; gives the
        ``classification``, ``classification_argmax`` and ``oracle_eval_temperature`` rows
        (skipped if None).
    """
    rewards = dict(
        correct_reward=correct_reward, wrong_reward=wrong_reward, abstain_reward=abstain_reward
    )
    threshold = expected_reward_threshold(**rewards)
    rows: list[dict[str, Any]] = []
    if reward_outputs is not None:
        out = _matrix(reward_outputs, "reward_outputs", 2)
        k = out.shape[1] - 1
        rows.append({"policy": POLICIES[0], **summarise(reward_policy(out), labels, k, **rewards)})
    if ce_logits is not None:
        z = _matrix(ce_logits, "ce_logits", 2)
        k = z.shape[1]
        probs = _softmax(z)
        for name, thr in ((POLICIES[1], threshold), (POLICIES[2], 0.0)):
            actions = classifier_policy(probs, thr)
            rows.append({"policy": name, **summarise(actions, labels, k, **rewards)})
        actions, t = oracle_policy(z, labels, threshold)
        rows.append(
            {"policy": POLICIES[3], **summarise(actions, labels, k, **rewards), "temperature": t}
        )
    return rows
