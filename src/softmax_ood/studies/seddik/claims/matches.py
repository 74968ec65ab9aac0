"""Seddik's claims (C1–C5), each one :class:`~softmax_ood.analysis.claims.Claim`: its spec
(built from the claims' :class:`~.evidence.Settings`) beside its named measurement (a function
of the :class:`~.evidence.Evidence`)."""

from __future__ import annotations

from ....analysis.claims import Claim, ClaimSpec, Measurement
from ..shared import KURT_BAR, SKEW_BAR
from .common import CONFIRMATION, PAPER_SETTINGS, RATE_BAR
from .curves import gap_over
from .evidence import Evidence, Settings
from .gaussianity import scores_gaussian, spread_rate
from .network import features_gap
from .weights import features_logits, features_weights


def _curve_statistic(x: str, split: str) -> str:
    """The statistic of a figure's accuracy curve matched at every ``x`` (intersection–union
    TOST, :func:`~.curves.gap_over`)."""
    return (
        f"per {x}: mean over seeds of the signed gap theory − practice {split} accuracy, points "
        f"(the value: the {x} with the largest |gap|); equivalence test (TOST) at ± the bar per "
        f"{x} (90 % t interval over seeds), intersection–union over {x}: p = the largest"
    )


def fig2_test_gap(ev: Evidence) -> Measurement:
    """C1: Fig. 2's test accuracy gap theory − practice at every p."""
    return gap_over(ev.fig2, "p", ev.max_gap_points, ev.alpha)


def c1(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C1",
            "Fig. 2: on Gaussian mixtures the theory predicts the trained softmax classifier's "
            "test accuracy (within the bar, at every p: 'a perfect match')",
            _curve_statistic("p", "test"),
            threshold=s.b,
            direction="<",
            requires=("S1", "P1"),
            effect=0.0,
            test="equivalence",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig2_test_gap,
    )


def fig2_train_gap(ev: Evidence) -> Measurement:
    """C1-train: Fig. 2's training accuracy gap theory − practice at every p."""
    return gap_over(ev.fig2, "p", ev.max_gap_points, ev.alpha, split="train")


def c1_train(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C1-train",
            "Fig. 2: the match holds 'both for training and test data': the theory predicts the "
            "trained classifier's accuracy on its own training points (within the bar, at every "
            "p)",
            _curve_statistic("p", "training"),
            threshold=s.b,
            direction="<",
            requires=("S1", "P1"),
            effect=0.0,
            test="equivalence",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig2_train_gap,
    )


def fig4_test_gap(ev: Evidence) -> Measurement:
    """C2: Fig. 4's test accuracy gap theory − practice at every n."""
    return gap_over(ev.fig4, "n", ev.max_gap_points, ev.alpha)


def c2(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C2",
            f"Fig. 4: on {s.images} (the paper: MNIST 1 vs 2) the theory predicts the trained "
            "classifier's test accuracy (within the bar, at every n: 'consistently estimated')",
            _curve_statistic("n", "test"),
            threshold=s.b,
            direction="<",
            requires=("S1", "P2"),
            effect=0.0,
            test="equivalence",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig4_test_gap,
    )


def fig5_weights_ratio(ev: Evidence) -> Measurement:
    """C3-weights: per cut of the pool, the learned weights' distance from the predicted mean
    in units of the predicted fluctuation."""
    return features_weights(
        ev.fig5, ev.weight_ratio_bar, ev.alpha, expected=ev.weight_ratio_expected
    )


def c3_weights(s: Settings) -> Claim:
    bar = s.weight_ratio_bar
    return Claim(
        ClaimSpec(
            "C3-weights",
            "Fig. 5 (left): on network features the trained classifier's weights lie where the "
            "k-class theory puts them: their distance from the predicted mean is of the order "
            f"of the predicted fluctuation (below {bar:g} times it)",
            "mean over networks of r = ‖w − predicted mean‖₂ / √(Σ predicted variance) over "
            "classes and coordinates (≈ 1 when the predicted mean and spread are right); "
            "one-sided t-test over networks (one r per network)",
            threshold=bar,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=None if s.r_exact is None else bar - s.r_exact,
            selection=f"fixed in advance: the bar {bar:g} x the theory's own predicted "
            "fluctuation of the weights (r = sqrt(1 + n_fit/n_stats) when the theory is exact "
            f"and its statistics independent), {PAPER_SETTINGS}",
            confirmation=CONFIRMATION,
        ),
        fig5_weights_ratio,
    )


def fig5_logits_gap(ev: Evidence) -> Measurement:
    """C3-logits: per cut of the pool, the test logits' mean |measured − predicted mean| in
    predicted standard deviations."""
    return features_logits(ev.fig5)


def c3_logits(s: Settings) -> Claim:
    bar = s.logit_gap_bar
    return Claim(
        ClaimSpec(
            "C3-logits",
            "Fig. 5 (middle, right): on network features the test logits follow the Gaussian "
            "law the k-class theory predicts: per true class and logit, the measured mean lies "
            f"within {bar:g} predicted standard deviation of the predicted mean (on average)",
            "mean over networks of the mean over (true class, logit) of |measured − predicted "
            "mean| / predicted std of the test logits; one-sided t-test over networks (one "
            "value per network)",
            threshold=bar,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=bar,
            selection=f"fixed in advance: the bar {bar:g} predicted standard deviation of a "
            f"test logit, {PAPER_SETTINGS}",
            confirmation=CONFIRMATION,
        ),
        fig5_logits_gap,
    )


def fig5_accuracy_gap(ev: Evidence) -> Measurement:
    """C3: per network, the exact binomial TOST of its test accuracy against its theory."""
    return features_gap(ev.fig5, ev.max_gap_points, ev.alpha, acc=ev.fig5_accuracy)


def c3(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C3",
            "Additional check, not drawn in Fig. 5 (the figure shows weights and logits): on "
            "network features the k-class theory predicts the trained classifier's test "
            "accuracy (within the bar, for every network)",
            "largest |theory − practice| test accuracy over networks, points; exact binomial "
            "TOST per network on its test points (90 % Clopper–Pearson interval of the gap), "
            "p = the largest (every network)",
            threshold=s.b,
            direction="<",
            requires=("S1", "S2", "P3"),
            effect=0.0,
            test="equivalence",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig5_accuracy_gap,
    )


def fig3_scores_gaussian(ev: Evidence) -> Measurement:
    """C4: per class and moment, the leave-one-out scores' skewness and excess kurtosis in
    units of their bars (equivalence tests, intersection–union)."""
    return scores_gaussian(ev.fig3, ev.alpha)


def c4(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C4",
            f"Fig. 3: on {s.images} the leave-one-out scores x_i'w_-i of each class are "
            "Gaussian ('their projections onto w have clear Gaussian distributions'): "
            f"|skewness| below {SKEW_BAR:g} and |excess kurtosis| below {KURT_BAR:g} per class",
            "largest over classes and (skewness, excess kurtosis) of |moment| / its bar (1: at "
            "the bar); equivalence test per class and moment (90 % interval, SE bootstrapped "
            "over the class's points), intersection–union: p = the largest; the standard "
            "D'Agostino–Pearson K² test of the same moments in the detail",
            threshold=1.0,
            direction="<",
            requires=("P4",),
            effect=0.0,
            test="equivalence",
            selection=f"fixed in advance: the Gaussianity bars (|skewness| {SKEW_BAR:g}, "
            f"|excess kurtosis| {KURT_BAR:g}: conventional bounds of an approximately normal "
            f"variable), {PAPER_SETTINGS}",
            confirmation=CONFIRMATION,
        ),
        fig3_scores_gaussian,
    )


def fig4_spread_rate(ev: Evidence) -> Measurement:
    """C5: per seed, the log-log slope of ‖w − E w‖₂ against Fig. 4's n, minus −1/2."""
    return spread_rate(ev.fig4, ev.alpha)


def c5(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "C5",
            "Theorem 4.3 over Fig. 4's n: the trained classifier's weights fluctuate around "
            "their deterministic limit with observable diameter 1/√n, so their distance from "
            f"it shrinks like n^(−1/2) (log-log slope within ± {RATE_BAR:g} of −1/2)",
            "mean over seeds of the log-log slope of ‖w − E w‖₂ (E w: Theorem 4.8's predicted "
            "mean; finite-pool factor removed) against n, minus −1/2; one slope per seed (an "
            "independent training draw at every n), equivalence test (TOST, 90 % t interval "
            "over seeds)",
            threshold=RATE_BAR,
            direction="<",
            requires=("S1",),
            effect=0.0,
            test="equivalence",
            selection=f"fixed in advance: Theorem 4.3's rate -1/2 +- {RATE_BAR:g} (half way to "
            "the rates n^-1/4 and n^-3/4), Fig. 4's n",
            confirmation=CONFIRMATION,
        ),
        fig4_spread_rate,
    )
