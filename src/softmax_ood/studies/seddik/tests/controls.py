"""Hand-built control frames: for every claim id of the Seddik claims table, one input where it
must hold and one where it must not (a case may add how its verdict must begin), judged through the study's real measure/evaluate code
(:func:`~softmax_ood.studies.seddik.claims.evaluate_seddik_claims`). Used by
``tests/test_study_contract.py``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from softmax_ood.studies.seddik.claims import evaluate_seddik_claims

SEEDS = 5
#: small per-seed spread of a practical accuracy around its mean (points / 100)
JITTER = np.array([-0.003, 0.001, 0.002, -0.001, 0.0015])


def accuracy_frame(
    x: str, values, theory, practice_offset, splits=("test", "train")
) -> pd.DataFrame:
    """Theory accuracies per value of ``x``; practice = theory + offset (one for all values or
    one per value) + a small per-seed spread, ``SEEDS`` seeds, on each of ``splits``."""
    rows = []
    offsets = np.broadcast_to(np.asarray(practice_offset, dtype=float), (len(values),))
    for split in splits:
        for v, t, off in zip(values, theory, offsets, strict=True):
            rows.append(
                {
                    x: v,
                    "source": "theory",
                    "split": split,
                    "seed": pd.NA,
                    "cls": "all",
                    "accuracy": t,
                }
            )
            for s in range(SEEDS):
                rows.append(
                    {
                        x: v,
                        "source": "practice",
                        "split": split,
                        "seed": s,
                        "cls": "all",
                        "accuracy": t + off + JITTER[s],
                        "n_points": 1000,
                    }
                )
    frame = pd.DataFrame(rows)
    frame["seed"] = frame["seed"].astype("Int64")
    return frame


#: per network, the distance of the learned weights / measured logit means from the theory's
#: (in predicted standard deviations) around the world's offset: a spread for the t-test
SPREAD = np.array([-0.1, 0.0, 0.1, 0.05, -0.05])


def features_frame(
    theory: float,
    practice: float,
    *,
    n_points: int = 5000,
    k: int = 5,
    p: int = 4,
    networks: int = 3,
    weight_offset: float = 1.0,
    logit_offset: float = 0.1,
    std_ratio: float = 1.0,
    shared: int = 0,
    n_fit: int | None = 5000,
    shared_cut: bool = False,
):
    """Fig. 5 rows for ``networks`` networks: test accuracy (theory, practice); weights (``k``
    classes × ``p`` coordinates) whose learned values lie ``weight_offset`` (+ the network's
    :data:`SPREAD`) predicted stds from the predicted mean, signs alternating, so each network's
    ``r`` is exactly that distance; logit moments whose measured means lie ``logit_offset``
    (+ spread) predicted stds from the predicted ones, measured std = ``std_ratio`` × predicted;
    class statistics from ``n_points`` points of which ``shared`` are fit points (0: an
    independent part); ``n_fit`` fit points (the fit part's accuracy row; ``None``: no such
    row); each network its own cut of the pool (``cut`` = its seed) or, ``shared_cut``, one
    cut for all."""
    rows = []
    sign = np.where(np.arange(k * p) % 2 == 0, 1.0, -1.0).reshape(k, p)
    for seed in range(networks):
        rows += [
            {
                "seed": seed,
                "panel": "accuracy",
                "source": "theory",
                "split": "test",
                "cls": "all",
                "value": theory,
            },
            {
                "seed": seed,
                "panel": "accuracy",
                "source": "practice",
                "split": "test",
                "cls": "all",
                "value": round(practice * n_points) / n_points,
                "n_points": n_points,
            },
        ]
        if n_fit is not None:
            rows.append(
                {
                    "seed": seed,
                    "panel": "accuracy",
                    "source": "practice",
                    "split": "train",
                    "cls": "all",
                    "value": practice,
                    "n_points": n_fit,
                }
            )
        stats = {"seed": seed, "panel": "statistics", "source": "theory", "n_points": n_points}
        rows += [
            {**stats, "split": "stats", "cls": "all"},
            *(
                {**stats, "split": "stats", "cls": str(c), "n_points": n_points // k}
                for c in range(k)
            ),
            {**stats, "split": "train", "cls": "all", "value": float(shared)},
            {**stats, "split": "test", "cls": "all", "value": 0.0},
        ]
        d = max(weight_offset + SPREAD[seed % len(SPREAD)], 0.0) if weight_offset else 0.0
        for a in range(k):
            for j in range(p):
                mean, sd = 0.1 * (a - j), 0.02 * (1 + j)
                base = {"seed": seed, "panel": "weights", "output": a, "index": j}
                rows.append({**base, "source": "theory", "value": mean, "theory_std": sd})
                rows.append({**base, "source": "practice", "value": mean + d * sd * sign[a, j]})
        z = max(logit_offset + SPREAD[seed % len(SPREAD)], 0.0) if logit_offset else 0.0
        for c in range(k):
            for a in range(k):
                mean, sd = (1.0 if a == c else -0.25), 0.3 + 0.1 * c
                base = {"seed": seed, "panel": "logit_moments", "true_class": c, "output": a}
                rows.append({**base, "source": "theory", "value": mean, "std": sd})
                rows.append(
                    {
                        **base,
                        "source": "practice",
                        "value": mean + z * sd * sign.flat[(c * k + a) % sign.size],
                        "std": std_ratio * sd,
                        "n_points": 100,
                    }
                )
    frame = pd.DataFrame(rows)
    frame["cut"] = 0 if shared_cut else frame["seed"]
    return frame


def with_spread(frame: pd.DataFrame, rate: float = -0.5, pool_n: int = 4000) -> pd.DataFrame:
    """Fig. 4 rows plus Theorem 4.3's weight deviations: on the test split's ``cls="all"``
    rows, practice ``w_dev`` = 0.1 · n^rate · √(1 − n/pool_n) (drawn without replacement from
    a pool of ``pool_n``) times a per-(seed, n) wobble of a few percent, theory ``w_spread`` =
    0.1 / √n."""
    f = frame.copy()
    f["pool_n"] = float(pool_n)
    sel = (f["split"] == "test") & (f["cls"] == "all")
    n = f["n"].astype(float)
    wobble = np.exp(
        0.05 * np.sin(1.7 * f["seed"].astype("Float64").fillna(0).astype(float) + n / 37.0)
    )
    prac = sel & (f["source"] == "practice")
    f.loc[prac, "w_dev"] = (0.1 * n**rate * np.sqrt(1 - n / pool_n) * wobble)[prac]
    f.loc[sel & (f["source"] == "theory"), "w_spread"] = (0.1 / np.sqrt(n))[sel]
    return f


def fig3_frame(*, skewed: bool = False, input_gauss: float = 2.0, per_class: int = 2000):
    """Fig. 3 rows: per class ``per_class`` leave-one-out scores, Gaussian (seeded) or
    (``skewed``) a centred exponential (skewness 2, excess kurtosis 6), with the theory's
    moments; the input's median pixel distance from Gaussian ``input_gauss`` (bar units,
    SE 0.05)."""
    rng = np.random.default_rng(7)
    rows = []
    for c, m in enumerate((0.5, -0.5)):
        z = rng.exponential(1.0, per_class) - 1.0 if skewed else rng.standard_normal(per_class)
        rows.append(
            pd.DataFrame(
                {
                    "cls": c,
                    "digit": c,
                    "index": np.arange(per_class) + c * per_class,
                    "loo_projection": m + 0.2 * z,
                    "theory_mean": m,
                    "theory_std": 0.2,
                    "input_gauss": input_gauss,
                    "input_gauss_se": 0.05,
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def validation_frame(rel_gap: float, n: int = 400) -> pd.DataFrame:
    ref = np.array([1.0, 2.0])
    return pd.DataFrame(
        {
            "check": "ridge",
            "reference_kind": "closed_form",
            "lam": 0.1,
            "p": 100,
            "n": n,
            "cls": ["0", "1"],
            "quantity": "sigma",
            "theory": ref * (1 + rel_gap),
            "reference": ref,
        }
    )


def _inputs(**changes) -> dict:
    """Inputs where every claim holds: accuracies far from 50 % and 100 %, theory on practice,
    the fixed point on the ridge closed form; ``changes`` replace one of them."""
    good = {
        "fig2": accuracy_frame("p", [25, 100, 400], [0.62, 0.59, 0.55], 0.0),
        "fig4": with_spread(accuracy_frame("n", [20, 80, 240], [0.93, 0.95, 0.96], 0.0)),
        "fig5": features_frame(0.90, 0.90),
        "validation": validation_frame(1e-4),
        "fig3": fig3_frame(),
    }
    good.update(changes)
    return good


def _table(config: dict, **changes) -> pd.DataFrame:
    bars = config["seddik"]["claims"]
    return evaluate_seddik_claims(
        **_inputs(**changes),
        max_gap_points=bars["max_gap_points"],
        ridge_n_gap=bars["ridge_n_gap"],
        alpha=bars["alpha"],
    )


#: the claims table's ids in order (premises, claims, sanity checks): the tests' one list
CLAIM_IDS = (
    "P1",
    "P2",
    "P3",
    "P4",
    "C1",
    "C1-train",
    "C2",
    "C3-weights",
    "C3-logits",
    "C3",
    "C4",
    "C5",
    "S1",
    "S2",
)


def cases(config: dict) -> Iterator[tuple[str, bool, pd.DataFrame]]:
    good = _table(config)
    for cid in CLAIM_IDS:
        yield cid, True, good
    # premises: the accuracy sits at the ceiling (within the bar of 100 %)
    yield "P1", False, _table(config, fig2=accuracy_frame("p", [25, 100], [0.995, 0.994], 0.0))
    yield "P2", False, _table(config, fig4=accuracy_frame("n", [20, 80], [0.996, 0.995], 0.0))
    yield "P3", False, _table(config, fig5=features_frame(0.999, 0.996))
    # claims: practice 5 points below the theory everywhere
    yield "C1", False, _table(config, fig2=accuracy_frame("p", [25, 100], [0.62, 0.59], -0.05))
    yield "C2", False, _table(config, fig4=accuracy_frame("n", [20, 80], [0.93, 0.95], -0.05))
    # the training points only: practice 5 points above the theory on them
    train_off = pd.concat(
        [
            accuracy_frame("p", [25, 100], [0.62, 0.59], 0.0, splits=("test",)),
            accuracy_frame("p", [25, 100], [0.62, 0.59], 0.05, splits=("train",)),
        ],
        ignore_index=True,
    )
    yield "C1-train", False, _table(config, fig2=train_off), "does not hold (interval ["
    yield "C1", True, _table(config, fig2=train_off)
    # every n but one on the theory, one n at the bar: the intersection-union test over n
    # reads "not established", though the mean over n lies well inside the bar
    one_off = accuracy_frame("n", [20, 80, 240], [0.93, 0.95, 0.96], [-0.02, 0.0, 0.0])
    yield "C2", False, _table(config, fig4=one_off), "not established (interval ["
    yield "C3", False, _table(config, fig5=features_frame(0.90, 0.85))
    # Fig. 5's weights 5 predicted stds from the predicted mean; its logit means 1 std off
    yield "C3-weights", False, _table(config, fig5=features_frame(0.90, 0.90, weight_offset=5))
    yield "C3-logits", False, _table(config, fig5=features_frame(0.90, 0.90, logit_offset=1))
    # issue 42: the five networks share one cut of the pool (statistics, fit and test parts):
    # they are one replicate of the cut, not five, so the t-tests over networks have one
    # sample; the same values with a cut per network hold
    one_cut = features_frame(0.90, 0.90, networks=5, shared_cut=True)
    yield "C3-weights", False, _table(config, fig5=one_cut), "cannot test: no significance"
    yield "C3-logits", False, _table(config, fig5=one_cut), "cannot test: no significance"
    yield "C3-weights", True, _table(config, fig5=features_frame(0.90, 0.90, networks=5))
    # Fig. 3 (issue 45): skewed leave-one-out scores are not Gaussian; an input already
    # Gaussian leaves nothing for the claim to show (premise P4)
    yield "C4", False, _table(config, fig3=fig3_frame(skewed=True)), "does not hold (interval ["
    gaussian_input = fig3_frame(input_gauss=0.4)
    yield "P4", False, _table(config, fig3=gaussian_input)
    yield "C4", False, _table(config, fig3=gaussian_input), "cannot test: premise P4"
    # Theorem 4.3: a spread shrinking like 1/n (slope -1), and one that does not shrink
    fig4 = accuracy_frame("n", [20, 80, 240], [0.93, 0.95, 0.96], 0.0)
    yield "C5", False, _table(config, fig4=with_spread(fig4, rate=-1.0)), "does not hold"
    yield "C5", False, _table(config, fig4=with_spread(fig4, rate=0.0)), "does not hold"
    # the finite pool's factor is removed: a 1/sqrt(n) spread drawn from a small pool (its
    # raw slope steeper than -3/4) still holds
    yield "C5", True, _table(config, fig4=with_spread(fig4, pool_n=300))
    # sanity: the fixed point 10 % off the ridge closed form (n x gap = 40)
    yield "S1", False, _table(config, validation=validation_frame(0.1))
    # the class statistics computed on the fit points (stats_from: train): the weights sit on
    # the predicted mean (r = 0.01, far below 1) — built in, so C3-weights cannot read as support
    fit_stats = features_frame(0.90, 0.90, shared=5000, weight_offset=0.01)
    yield "S2", False, _table(config, fig5=fit_stats)
    yield "C3-weights", False, _table(config, fig5=fit_stats), "cannot test: premise S2"
    # the verdict kinds of issue 25 (4th element: how the verdict must begin)
    far = accuracy_frame("n", [20, 80], [0.93, 0.95], -0.05)
    yield "C2", False, _table(config, fig4=far), "does not hold (interval ["
    # a gap at the bar: the interval straddles it, which is not evidence against the theory
    edge = accuracy_frame("n", [20, 80], [0.93, 0.95], -0.02)
    yield "C2", False, _table(config, fig4=edge), "not established (interval ["
    yield "C3", False, _table(config, fig5=features_frame(0.90, 0.881)), "not established"
    # a failed premise gates the claim but does not hide a significant opposite result
    yield (
        "C2",
        False,
        _table(config, fig4=far, validation=validation_frame(0.1)),
        "cannot test as the paper's claim (premise S1 does not hold) — here the opposite is "
        "significant",
    )


def with_logits(frame: pd.DataFrame, *, skewed: bool, per_class: int = 2000, k: int = 3):
    """``frame`` plus a ``logits`` panel (practice rows, one per test point and logit) per
    network: class ``c``'s logits have mean 1.5 on logit ``c`` and 0 elsewhere, unit variances;
    Gaussian, or (``skewed``) with the own logit's noise a centred, unit-variance exponential
    turned into a long left tail (same mean and covariance, a different accuracy)."""
    rows = []
    for seed in sorted(frame["seed"].unique()):
        rng = np.random.default_rng(int(seed))
        i = 0
        for c in range(k):
            Z = rng.standard_normal((per_class, k))
            if skewed:
                Z[:, c] = 1.0 - rng.exponential(1.0, per_class)
            Z[:, c] += 1.5
            for row in Z:
                for a, v in enumerate(row):
                    rows.append(
                        {
                            "seed": seed,
                            "panel": "logits",
                            "source": "practice",
                            "true_class": c,
                            "index": i,
                            "output": a,
                            "value": float(v),
                        }
                    )
                i += 1
    return pd.concat([frame, pd.DataFrame(rows)], ignore_index=True)
