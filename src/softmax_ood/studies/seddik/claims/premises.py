"""Seddik's premises and sanity rows, each one :class:`~softmax_ood.analysis.claims.Claim`: its
spec (built from the claims' :class:`~.evidence.Settings`) beside its named measurement (a
function of the :class:`~.evidence.Evidence`)."""

from __future__ import annotations

from ....analysis.claims import Claim, ClaimSpec, Measurement
from ..shared import KURT_BAR, SKEW_BAR
from .common import CONFIRMATION, TRIVIAL
from .curves import informative
from .evidence import Evidence, Settings
from .gaussianity import input_far_from_gaussian
from .network import features_informative
from .sanity import ridge_sanity, statistics_independent


def _informative_text(s: Settings, fig: str) -> str:
    """A premise's words: the comparison of ``fig`` is informative."""
    return (
        f"{fig}: the comparison is informative — the trained classifiers' test accuracy lies "
        f"more than the bar ({s.b:g} points) from both trivial predictions, {TRIVIAL}"
    )


def fig2_informative(ev: Evidence) -> Measurement:
    """P1: per seed, Fig. 2's test accuracy's mean distance over p from the trivial ones."""
    return informative(ev.fig2, "p")


def p1(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "P1",
            _informative_text(s, "Fig. 2 (Gaussian mixtures)"),
            "per seed: mean over p of min(accuracy − 100/k, 100 − accuracy), points",
            threshold=s.b,
            direction=">",
            kind="premise",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig2_informative,
    )


def fig4_informative(ev: Evidence) -> Measurement:
    """P2: per seed, Fig. 4's test accuracy's mean distance over n from the trivial ones."""
    return informative(ev.fig4, "n")


def p2(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "P2",
            _informative_text(s, f"Fig. 4 ({s.images})"),
            "per seed: mean over n of min(accuracy − 100/k, 100 − accuracy), points",
            threshold=s.b,
            direction=">",
            kind="premise",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig4_informative,
    )


def fig5_informative(ev: Evidence) -> Measurement:
    """P3: per network, exact binomial tests that Fig. 5's test accuracy lies more than the bar
    from both trivial predictions."""
    return features_informative(ev.fig5, ev.max_gap_points, acc=ev.fig5_accuracy)


def p3(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "P3",
            _informative_text(s, "Fig. 5 (network features)"),
            "smallest over networks of min(accuracy − 100/k, 100 − accuracy), points; exact "
            "binomial tests per network, p = the largest (every network)",
            threshold=s.b,
            direction=">",
            kind="premise",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        fig5_informative,
    )


def fig3_input_far_from_gaussian(ev: Evidence) -> Measurement:
    """P4: per class, the median pixel's distance from Gaussian, z-tests over classes."""
    return input_far_from_gaussian(ev.fig3, ev.alpha)


def p4(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "P4",
            "Fig. 3: the input is far from Gaussian (the paper: 'even though the input data is "
            "far from Gaussian'): per class, the median pixel lies beyond the Gaussianity bars "
            f"(|skewness| {SKEW_BAR:g}, |excess kurtosis| {KURT_BAR:g}) the scores must stay within",
            "smallest over classes of the median over non-constant pixels of max(|skewness| / "
            f"{SKEW_BAR:g}, |excess kurtosis| / {KURT_BAR:g}) (1: at the bars); one-sided z-test "
            "per class with the SE bootstrapped over images, p = the largest (every class)",
            threshold=1.0,
            direction=">",
            kind="premise",
            selection=f"fixed in advance: the Gaussianity bars (|skewness| {SKEW_BAR:g}, |excess "
            f"kurtosis| {KURT_BAR:g}), the class pair",
            confirmation=CONFIRMATION,
        ),
        fig3_input_far_from_gaussian,
    )


def ridge_closed_form(ev: Evidence) -> Measurement:
    """S1: n × the largest relative gap of the squared-loss fixed point to the ridge closed
    form (deterministic on both sides)."""
    return ridge_sanity(ev.validation)


def s1(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "S1",
            "The fixed point is exact where an exact answer exists: with the squared loss it "
            "reproduces the ridge closed form (Marchenko–Pastur) up to O(1/n) (deterministic "
            "on both sides: a check of the implementation)",
            "n × largest relative |fixed point − closed form| over λ, classes and (m, σ, test "
            "accuracy)",
            threshold=s.ridge_n_gap,
            direction="<=",
            kind="sanity",
            selection=s.bar_fixed,
            confirmation=CONFIRMATION,
        ),
        ridge_closed_form,
    )


def fig5_statistics_independent(ev: Evidence) -> Measurement:
    """S2: the largest share over networks of the statistics' points that are fit or test
    points."""
    return statistics_independent(ev.fig5)


def s2(s: Settings) -> Claim:
    return Claim(
        ClaimSpec(
            "S2",
            "Fig. 5: the theory's class statistics are independent of the classifier: none of "
            "the points behind its class means and covariances is a fit or test point (the "
            "paper's come from independent draws; from the fit points the weights match is "
            "built in). True by construction with stats_from: independent",
            "largest over networks of the share of the statistics' points that are also fit or "
            "test points",
            threshold=0.0,
            direction="<=",
            kind="sanity",
            selection="by construction: seddik.fig5.stats_from (independent: a part of the "
            "pooled features disjoint from the fit and test parts)",
            confirmation=CONFIRMATION,
        ),
        fig5_statistics_independent,
    )
