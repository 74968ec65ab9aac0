"""Tests for softmax_ood.metrics: agreement with sklearn, hand-worked examples, conventions, errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from softmax_ood.metrics import (
    OODMetrics,
    accuracy,
    aupr_in,
    aupr_out,
    auroc,
    fpr_at_tpr,
    mean_logit_norm,
    ood_metrics,
)

KEYS = ("fpr95", "auroc", "aupr_in", "aupr_out", "tpr_threshold")


def close(a, b):
    return bool(np.isclose(a, b, rtol=1e-10, atol=1e-12))


def sklearn_reference(id_scores, ood_scores, positive="id", tpr=0.95):
    """The definitions spelled out with sklearn (higher score = more ID)."""
    s = np.concatenate([id_scores, ood_scores]).astype(np.float64)
    y_id = np.r_[np.ones(len(id_scores), int), np.zeros(len(ood_scores), int)]
    out = {
        "auroc": roc_auc_score(y_id, s),
        "aupr_in": average_precision_score(y_id, s),
        "aupr_out": average_precision_score(1 - y_id, -s),
    }
    if positive == "id":
        fpr, tpr_c, thr = roc_curve(y_id, s, drop_intermediate=False)
        j = np.searchsorted(tpr_c, tpr, side="left")
        out["fpr95"], out["tpr_threshold"] = fpr[j], thr[j]
    else:
        fpr, tpr_c, thr = roc_curve(1 - y_id, -s, drop_intermediate=False)
        j = np.searchsorted(tpr_c, tpr, side="left")
        out["fpr95"], out["tpr_threshold"] = fpr[j], -thr[j]
    return out


def assert_matches(id_scores, ood_scores, positive="id", tpr=0.95):
    ours = ood_metrics(id_scores, ood_scores, positive=positive, tpr=tpr)
    ref = sklearn_reference(id_scores, ood_scores, positive=positive, tpr=tpr)
    for k in KEYS:
        assert close(ours[k], ref[k]), (k, ours[k], ref[k], positive, tpr)
        assert isinstance(ours[k], float)


# --------------------------------------------------------------------------- sklearn agreement


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("positive", ["id", "ood"])
def test_matches_sklearn_random(seed, positive):
    rng = np.random.default_rng(seed)
    for n_id, n_ood in [(1, 1), (1, 7), (9, 1), (13, 200), (500, 37), (2000, 1500)]:
        ids = rng.normal(0.7, 1.0, n_id)
        oods = rng.normal(0.0, 1.3, n_ood)
        for tpr in (0.95, 0.5, 1.0, 0.01):
            assert_matches(ids, oods, positive, tpr)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("positive", ["id", "ood"])
def test_matches_sklearn_tie_heavy(seed, positive):
    rng = np.random.default_rng(100 + seed)
    for n_id, n_ood in [(1, 1), (3, 50), (40, 2), (300, 1000), (2000, 2000)]:
        ids = rng.integers(0, 6, n_id).astype(float)
        oods = rng.integers(0, 6, n_ood).astype(float)
        for tpr in (0.95, 0.8, 1.0):
            assert_matches(ids, oods, positive, tpr)


def test_matches_sklearn_float32_and_int_inputs():
    rng = np.random.default_rng(7)
    ids = rng.normal(1, 1, 777).astype(np.float32)
    oods = rng.normal(0, 1, 555).astype(np.float32)
    assert_matches(ids, oods)
    assert_matches(ids, oods, positive="ood")
    ids_i = rng.integers(-3, 3, 100)
    oods_i = rng.integers(-3, 3, 80)
    assert_matches(ids_i, oods_i)


def test_random_sizes_many():
    rng = np.random.default_rng(42)
    for _ in range(100):
        n_id, n_ood = rng.integers(1, 300, 2)
        if rng.random() < 0.5:
            ids, oods = rng.integers(0, 6, n_id) * 1.0, rng.integers(0, 6, n_ood) * 1.0
        else:
            ids, oods = rng.normal(0.3, 1, n_id), rng.normal(0, 1, n_ood)
        assert_matches(
            ids, oods, str(rng.choice(["id", "ood"])), float(rng.choice([0.95, 0.9, 1.0]))
        )


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("positive", ["id", "ood"])
def test_all_equal_scores(positive):
    m = ood_metrics(np.full(30, 2.0), np.full(10, 2.0), positive=positive)
    assert m["auroc"] == 0.5
    assert m["fpr95"] == 1.0
    assert close(m["aupr_in"], 30 / 40)
    assert close(m["aupr_out"], 10 / 40)
    assert m["tpr_threshold"] == 2.0
    assert_matches(np.full(30, 2.0), np.full(10, 2.0), positive)


@pytest.mark.parametrize("positive", ["id", "ood"])
def test_perfect_separation(positive):
    ids = np.linspace(1.0, 2.0, 50)
    oods = np.linspace(-2.0, 0.0, 70)
    m = ood_metrics(ids, oods, positive=positive)
    assert m["auroc"] == 1.0
    assert m["fpr95"] == 0.0
    assert m["aupr_in"] == 1.0 and m["aupr_out"] == 1.0
    assert_matches(ids, oods, positive)


@pytest.mark.parametrize("positive", ["id", "ood"])
def test_reversed_separation(positive):
    ids = np.linspace(-2.0, 0.0, 50)
    oods = np.linspace(1.0, 2.0, 70)
    m = ood_metrics(ids, oods, positive=positive)
    assert m["auroc"] == 0.0
    assert m["fpr95"] == 1.0
    assert_matches(ids, oods, positive)


# --------------------------------------------------------------------------- hand-worked example

# id = [1, 2, 3, 4], ood = [0, 0.5, 2.5, 5]; thresholds high -> low (ID positive):
#   t=5: TP 0 FP 1 | t=4: TP 1 FP 1 | t=3: TP 2 FP 1 | t=2.5: TP 2 FP 2 | t=2: TP 3 FP 2 | t=1: TP 4 FP 2
# AUROC: pairs id > ood: 2 + 2 + 3 + 3 = 10 of 16 -> 0.625.
# FPR95 (ID positive): first TPR >= .95 is at t=1 (TPR 1), FP = 2 of 4 -> 0.5.
# AUPR-In: .25 * (1/2 + 2/3 + 3/5 + 4/6) = 73/120.
# AUPR-Out (OOD positive, -score, i.e. scores low -> high):
#   s<=0: TP1 P=1 | s<=.5: TP2 P=1 | s<=2.5: TP3 FP2 P=3/5 | s<=5: TP4 FP4 P=1/2  -> .25 * 3.1 = 0.775
# FPR95 (OOD positive): 95% OOD recall needs all 4 OOD flagged (s <= 5) -> all 4 ID flagged -> 1.0.
HAND_ID = np.array([1.0, 2.0, 3.0, 4.0])
HAND_OOD = np.array([0.0, 0.5, 2.5, 5.0])


def test_hand_example_id_positive():
    m = ood_metrics(HAND_ID, HAND_OOD)
    assert close(m["auroc"], 0.625)
    assert close(m["fpr95"], 0.5)
    assert m["tpr_threshold"] == 1.0
    assert close(m["aupr_in"], 73 / 120)
    assert close(m["aupr_out"], 0.775)


def test_hand_example_positive_conventions_differ():
    m_id = ood_metrics(HAND_ID, HAND_OOD, positive="id")
    m_ood = ood_metrics(HAND_ID, HAND_OOD, positive="ood")
    assert close(m_ood["fpr95"], 1.0)
    assert m_ood["tpr_threshold"] == 5.0
    assert m_id["fpr95"] != m_ood["fpr95"]  # documented: FPR95 depends on the convention
    assert m_id["auroc"] == m_ood["auroc"]  # ... AUROC does not
    assert m_id["aupr_in"] == m_ood["aupr_in"] and m_id["aupr_out"] == m_ood["aupr_out"]


def test_positive_ood_is_swap_and_negate():
    """positive='ood' FPR95 == positive='id' FPR95 with classes swapped and scores negated."""
    rng = np.random.default_rng(3)
    ids, oods = rng.normal(1, 1, 300), rng.normal(0, 2, 200)
    m_ood = ood_metrics(ids, oods, positive="ood")
    m_swapped = ood_metrics(-oods, -ids, positive="id")
    assert close(m_ood["fpr95"], m_swapped["fpr95"])
    assert close(m_ood["auroc"], m_swapped["auroc"])
    assert close(m_ood["aupr_out"], m_swapped["aupr_in"])
    assert close(m_ood["fpr95"], ood_metrics(ids, oods)["fpr95"]) is False


def test_first_point_not_closest():
    """With 20 ID samples TPR steps by .05; with 19 the point closest to .95 is below it."""
    ids = np.arange(19, dtype=float) + 10  # TPR after k ID samples = k/19; 18/19 = .947 < .95
    oods = np.r_[10.5, np.zeros(9)]  # one OOD sample between the lowest two ID scores
    m = ood_metrics(ids, oods)
    # first TPR >= .95 is 19/19 at t = 10, where the OOD sample at 10.5 is already accepted
    assert m["tpr_threshold"] == 10.0
    assert close(m["fpr95"], 0.1)
    # the "closest" rule would pick 18/19 = 0.947 at t = 11 with FPR 0


def test_helpers_agree_with_core():
    rng = np.random.default_rng(5)
    ids, oods = rng.normal(1, 1, 100), rng.normal(0, 1, 120)
    m = ood_metrics(ids, oods)
    assert fpr_at_tpr(ids, oods) == m["fpr95"]
    assert (
        fpr_at_tpr(ids, oods, tpr=0.9, positive="ood")
        == ood_metrics(ids, oods, positive="ood", tpr=0.9)["fpr95"]
    )
    assert auroc(ids, oods) == m["auroc"]
    assert aupr_in(ids, oods) == m["aupr_in"]
    assert aupr_out(ids, oods) == m["aupr_out"]


def test_torch_and_list_inputs():
    torch = pytest.importorskip("torch")
    m = ood_metrics(torch.tensor(HAND_ID, requires_grad=True), list(HAND_OOD))
    assert close(m["auroc"], 0.625)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "ids, oods",
    [
        ([], [1.0]),
        ([1.0], []),
        ([1.0, np.nan], [0.0]),
        ([1.0], [np.inf]),
        ([1.0], [-np.inf]),
        (np.ones((2, 2)), [0.0]),
        (["a"], [0.0]),
    ],
)
def test_bad_scores_raise(ids, oods):
    with pytest.raises(ValueError):
        ood_metrics(ids, oods)


@pytest.mark.parametrize("tpr", [0.0, -0.1, 1.01, float("nan")])
def test_bad_tpr_raises(tpr):
    with pytest.raises(ValueError):
        ood_metrics([1.0], [0.0], tpr=tpr)


@pytest.mark.parametrize("positive", ["ID", "in", "", None, 1])
def test_bad_positive_raises(positive):
    with pytest.raises(ValueError):
        ood_metrics([1.0], [0.0], positive=positive)


# --------------------------------------------------------------------------- accumulator


def test_ood_metrics_accumulator():
    rng = np.random.default_rng(11)
    ids, oods = rng.normal(1, 1, 250), rng.normal(0, 1, 150)
    scores = np.r_[ids, oods]
    is_ood = np.r_[np.zeros(250, bool), np.ones(150, bool)]
    perm = rng.permutation(400)
    acc = OODMetrics()
    for chunk in np.array_split(perm, 7):
        acc.update(scores[chunk], is_ood[chunk].astype(int))
    got, want = acc.compute(), ood_metrics(ids, oods)
    for k in KEYS:
        assert close(got[k], want[k])
    acc.reset()
    with pytest.raises(ValueError):
        acc.compute()
    with pytest.raises(ValueError):
        acc.update([1.0, 2.0], [0])
    with pytest.raises(ValueError):
        acc.update([1.0], [2])


# --------------------------------------------------------------------------- classifier summaries


def test_accuracy():
    logits = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 0.0, 5.0], [1.0, 0.0, 0.0]])
    assert accuracy(logits, np.array([0, 1, 2, 2])) == 0.75
    with pytest.raises(ValueError):
        accuracy(logits, np.array([0, 1, 2]))
    with pytest.raises(ValueError):
        accuracy(logits[0], np.array([0]))
    with pytest.raises(ValueError):
        accuracy(np.zeros((0, 3)), np.zeros(0, int))


def test_mean_logit_norm():
    z = np.array([[3.0, 4.0], [0.0, 1.0]])
    assert mean_logit_norm(z) == 3.0
    with pytest.raises(ValueError):
        mean_logit_norm(np.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        mean_logit_norm(np.array([[np.nan, 1.0]]))
