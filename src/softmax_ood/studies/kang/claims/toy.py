"""Sec. 4.2's theory on the toy (:mod:`..theory`): a premise (the networks fit the training
data), a sanity row (Prop. 4.1's inequality) and the claims of Prop. 4.1, Thm 4.1 and Prop.
4.2, each one :class:`~softmax_ood.analysis.claims.Claim` read from the toy's per-seed
quantities (:attr:`.evidence.Evidence.theory`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired
from ....analysis.measures import per_seed
from .common import EFFECTS, notes, powered
from .evidence import Evidence

#: the toy's bars, fixed before any run: "almost rank one" (Theorem 4.1's solution, Lemma D.4)
NEAR_RANK_ONE = 0.9
#: Theorem 4.1 + Prop. 4.2: the OOD output is mostly the bias when the bias carries more than
#: half of it
BIAS_SHARE = 0.5
THEORY_FITTED = 0.99  #: the theorems assume the network fits the training data
FIT = ("theory_fitted",)  #: what every toy row rests on


def _top() -> float:
    from ..theory import ANGLES

    return max(ANGLES)


def _col(ev: Evidence, name: str) -> pd.Series:
    t = ev.theory
    return t[name].astype(float) if name in t else pd.Series(dtype=float)


def _no_toy(measure):
    """``measure`` when the toy was measured, else every row reads "no toy measurements"."""

    def wrapped(ev: Evidence) -> Measurement:
        if ev.theory is None:
            return Measurement(math.nan, "no toy measurements")
        return measure(ev)

    wrapped.__name__ = wrapped.__qualname__ = measure.__name__
    wrapped.__doc__ = measure.__doc__
    return wrapped


@_no_toy
def toy_fitted(ev: Evidence) -> Measurement:
    return per_seed(
        np.minimum(_col(ev, "fitted"), _col(ev, "fitted_bias")),
        "toy: share of training points fitted (the smaller of the bias-free and biased net)",
    )


@_no_toy
def prop41_bound(ev: Evidence) -> Measurement:
    return per_seed(
        _col(ev, "prop41_bound"), "toy: min ||f_j|| prod ||W_k||_2 / margin (at least 1 by C-S)"
    )


@_no_toy
def feature_norm_ratio(ev: Evidence) -> Measurement:
    return per_seed(
        _col(ev, "feature_norm_ratio"),
        f"toy: last hidden layer's norm at {_top():g} degrees over held-out ID",
    )


@_no_toy
def output_ratio(ev: Evidence) -> Measurement:
    """E|f| OOD over ID at the top angle; the detail gives every angle's beside epsilon."""
    from ..theory import ANGLES

    top = _top()
    curve = "; ".join(
        f"{a:g} deg: |f| {_col(ev, f'output_ratio@{a:g}').mean():.3f}, epsilon "
        f"{_col(ev, f'projection@{a:g}').mean():.3f}"
        for a in ANGLES
    )
    return per_seed(
        _col(ev, f"output_ratio@{top:g}"),
        f"toy: E|f| over ID E|f| beside the first layer's rank-one projection (epsilon, same "
        f"ratio), seed means ({curve}); at {top:g} degrees",
    )


@_no_toy
def rank_move(ev: Evidence) -> Measurement:
    pm = paired(
        _col(ev, "rank_share_trained"),
        _col(ev, "rank_share_init"),
        names=("trained", "initialisation"),
    )
    return Measurement(pm.value, "toy: " + pm.detail, samples=pm.samples)


@_no_toy
def rank_share(ev: Evidence) -> Measurement:
    return per_seed(_col(ev, "rank_share_trained"), "toy: top singular value's energy share")


@_no_toy
def depth_rank_gap(ev: Evidence) -> Measurement:
    pm = paired(
        _col(ev, "rank_share_trained"),
        _col(ev, "rank_share_shallow"),
        names=("deeper", "shallower"),
    )
    return Measurement(pm.value, "toy: " + pm.detail, samples=pm.samples)


def binomial_power(n: int, share: float, alpha: float = 0.05) -> float:
    """Power of the one-sided exact binomial test against one half at ``n`` trials when the true
    share is ``share``: P(X >= k) for the smallest k whose p is at most ``alpha``."""
    from scipy import stats

    for k in range(n + 1):
        if stats.binom.sf(k - 1, n, 0.5) <= alpha:
            return float(stats.binom.sf(k - 1, n, share))
    return 0.0


@_no_toy
def bias_sign_share(ev: Evidence) -> Measurement:
    """The share of seeds whose bias has the sign of the margin points' label sum, exact
    binomial test against one half."""
    from scipy import stats

    from ..theory import exponential_ocs

    agrees = _col(ev, "bias_sign_agrees")
    agree, n = int(agrees.sum()), int(agrees.count())
    if not n:
        return Measurement(math.nan, "toy: no bias recorded")
    per = ", ".join(
        f"{s}: b {b:.3g}, sum {y:+g}"
        for s, b, y in zip(
            ev.theory.index, _col(ev, "bias"), _col(ev, "margin_label_sum"), strict=True
        )
    )
    return Measurement(
        agree / n,
        f"toy: {agree} of {n} seeds' biases have the sign of the margin points' label sum "
        f"(per seed {per}; the OCS of the exponential loss is {exponential_ocs():+.3f})",
        float(stats.binomtest(agree, n, 0.5, alternative="greater").pvalue),
        n=n,
        p_opposite=float(stats.binomtest(agree, n, 0.5, alternative="less").pvalue),
        power=binomial_power(n, 0.5 + EFFECTS["theory_bias_margin_sign"][0]),
    )


@_no_toy
def bias_share(ev: Evidence) -> Measurement:
    top = _top()
    return per_seed(
        _col(ev, f"bias_share@{top:g}"),
        f"toy: |b| over E|f + b| at {top:g} degrees (the weight part grows with the L-th power "
        "of the weights' scale, the bias with the first)",
    )


def toy_claims(section: dict) -> list[Claim]:
    """Sec. 4.2's rows: the premise and the sanity row, then the claims on the norms, on the
    rank and on the bias, every one resting on ``theory_fitted``."""
    return (
        toy_premises(section) + norm_claims(section) + rank_claims(section) + bias_claims(section)
    )


def toy_premises(section: dict) -> list[Claim]:
    from ..theory import DEEP

    return [
        Claim(
            ClaimSpec(
                "theory_fitted",
                f"Premise (Sec. 4.2's toy): the bias-free {DEEP}-layer ReLU network and its "
                "biased twin fit the training data (every margin y f(x) > 0), as Prop. 4.1 and "
                "Thm 4.1 assume",
                "share of training points with y f(x) > 0, the smaller of the two networks, per "
                "seed",
                THEORY_FITTED,
                ">",
                kind="premise",
                **notes(section),
            ),
            toy_fitted,
        ),
        Claim(
            ClaimSpec(
                "theory_prop41_bound",
                "Sanity (Prop. 4.1's inequality, Cauchy-Schwarz): on the training points, "
                "||f_j(x)|| prod_{k>j} ||W_k||_2 is at least the margin y f(x), every hidden "
                "layer j",
                "min over training points and layers of ||f_j(x)|| prod_{k>j} ||W_k||_2 / "
                "(y f(x)), per seed",
                1.0,
                ">=",
                kind="sanity",
                requires=FIT,
                **notes(section),
            ),
            prop41_bound,
        ),
    ]


def norm_claims(section: dict) -> list[Claim]:
    """Prop. 4.1 / Thm 4.1: features and output drop off the training span."""
    top = _top()
    return [
        Claim(
            ClaimSpec(
                "theory_feature_norm_drops",
                f"Prop. 4.1 / Thm 4.1 (toy): features are large on P_train and drop on P_OOD: "
                f"the last hidden layer's norm on inputs rotated {top:g} degrees out of the "
                "training span is below its norm on held-out ID inputs",
                threshold=1.0,
                direction="<",
                requires=FIT,
                **powered(
                    "theory_feature_norm_drops",
                    f"E_OOD ||f_(L-1)(x)|| / E_ID ||f_(L-1)(x)|| at {top:g} degrees, per seed",
                ),
                **notes(section),
            ),
            feature_norm_ratio,
        ),
        Claim(
            ClaimSpec(
                "theory_output_collapses",
                f"Thm 4.1 (toy): where the inputs' rank-one projection is small, the output "
                f"collapses: E|f| on inputs rotated {top:g} degrees out of the training span is "
                "below E|f| on held-out ID inputs (the detail gives the ratio at every angle "
                "beside the projection ratio epsilon)",
                threshold=1.0,
                direction="<",
                requires=FIT,
                **powered(
                    "theory_output_collapses",
                    f"E_OOD |f(x)| / E_ID |f(x)| at {top:g} degrees, per seed",
                ),
                **notes(section),
            ),
            output_ratio,
        ),
    ]


def rank_claims(section: dict) -> list[Claim]:
    """Thm 4.1: gradient descent drives the hidden layers toward rank one, more so deeper."""
    from ..theory import DEEP, SHALLOW, STEPS

    return [
        Claim(
            ClaimSpec(
                "theory_rank_moves",
                f"Thm 4.1 (toy): gradient descent drives the {DEEP}-layer network's hidden "
                "layers toward rank one (control: the same network at its initialisation)",
                threshold=0.0,
                direction=">",
                requires=FIT,
                **powered(
                    "theory_rank_moves",
                    "mean over W_2..W_(L-1) of sigma_1^2 / ||W||_F^2: trained - initialisation, "
                    "per seed",
                ),
                **notes(section),
            ),
            rank_move,
        ),
        Claim(
            ClaimSpec(
                "theory_near_rank_one",
                f"Thm 4.1 (toy): the solution is almost rank one in every hidden layer (top "
                f"singular value's energy share above {NEAR_RANK_ONE:g}) after {STEPS} steps "
                "(the theorem is about directional convergence, which is logarithmically slow: "
                "a failure here may be the budget)",
                threshold=NEAR_RANK_ONE,
                direction=">",
                requires=FIT,
                **powered(
                    "theory_near_rank_one",
                    "mean over W_2..W_(L-1) of sigma_1^2 / ||W||_F^2, per seed",
                ),
                **notes(section),
            ),
            rank_share,
        ),
        Claim(
            ClaimSpec(
                "theory_depth_lowers_rank",
                f"Thm 4.1 (toy): depth exacerbates the low rank: the {DEEP}-layer network's "
                f"hidden layers are nearer rank one than the {SHALLOW}-layer network's",
                threshold=0.0,
                direction=">",
                requires=FIT,
                **powered(
                    "theory_depth_lowers_rank",
                    "mean sigma_1^2 / ||W||_F^2 over the hidden-to-hidden layers: deeper - "
                    "shallower, per seed",
                ),
                **notes(section),
            ),
            depth_rank_gap,
        ),
    ]


def bias_claims(section: dict) -> list[Claim]:
    """Prop. 4.2 and Thm 4.1 with it: the bias's sign, and the OOD output is mostly the bias."""
    top = _top()
    return [
        Claim(
            ClaimSpec(
                "theory_bias_margin_sign",
                "Prop. 4.2 (toy): the output bias points along the sum of the labels of the "
                "margin points (argmin_j y_j f(W; x_j)): the bias has that sum's sign",
                threshold=0.5,
                direction=">",
                requires=FIT,
                **powered(
                    "theory_bias_margin_sign",
                    "share of seeds whose bias has the sign of the margin points' label sum "
                    "(exact binomial test against one half)",
                ),
                **notes(section),
            ),
            bias_sign_share,
        ),
        Claim(
            ClaimSpec(
                "theory_ood_output_is_bias",
                f"Thm 4.1 with Prop. 4.2 (toy): on inputs rotated {top:g} degrees out of the "
                "training span the biased network's output is mostly its bias (the route by "
                "which the bias, and so the OCS, would set the OOD prediction)",
                threshold=BIAS_SHARE,
                direction=">",
                requires=FIT,
                **powered(
                    "theory_ood_output_is_bias",
                    f"|b| / E_OOD |f(x) + b| at {top:g} degrees, per seed",
                ),
                **notes(section),
            ),
            bias_share,
        ),
    ]
