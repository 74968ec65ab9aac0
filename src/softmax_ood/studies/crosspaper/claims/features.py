"""Claims (c): Seddik et al.'s Theorem 4.8 asked of the LogitNorm study's networks'
penultimate features (the ``seddik`` frame, per loss), measured by the Seddik study's own
functions on each loss's rows and, per seed, by the paired differences of the two losses. Each
claim is its spec beside its named measurement."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

from ....analysis.claims import Claim, ClaimSpec, Measurement, paired
from ...seddik import claims as seddik
from .common import losses
from .evidence import Evidence

__all__ = ["SEDDIK_CLAIMS", "feature_claims", "feature_premises", "same_claims"]

#: the (c) claims measured per loss
SEDDIK_CLAIMS = ("seddik_weights", "seddik_logits", "seddik_accuracy")


def _kw(section: dict) -> dict[str, str]:
    """Selection and confirmation of the rows of (c)."""
    b = float(section["claims"]["seddik_gap_points"])
    wbar, lbar = seddik.WEIGHT_RATIO_BAR, seddik.LOGIT_GAP_BAR
    conf = f"seeds {', '.join(str(s) for s in section['seeds'])} × the test part of the pooled ID splits {', '.join(section['seddik']['splits'])}"
    sel = (
        f"fixed in advance: the Seddik study's bars (C3-weights {wbar:g}, C3-logits {lbar:g} predicted "
        f"SD, accuracy ± {b:g} points) and its Fig. 5 settings (lambda, row norm, thirds)"
    )
    return {"selection": sel, "confirmation": conf}


def _no_features(loss: str) -> Measurement:
    return Measurement(math.nan, f"no features of the {loss} networks")


def informative_accuracy(ev: Evidence, loss: str) -> Measurement:
    f = ev.seddik_frames[loss]
    if f.empty:
        return _no_features(loss)
    return seddik.features_informative(f, float(ev.bars["seddik_gap_points"]))


def shared_statistics(ev: Evidence, loss: str) -> Measurement:
    f = ev.seddik_frames[loss]
    if f.empty:
        return _no_features(loss)
    return seddik.statistics_independent(f)


def weights_ratio(ev: Evidence, loss: str) -> Measurement:
    f = ev.seddik_frames[loss]
    if f.empty:
        return _no_features(loss)
    return seddik.features_weights(f, seddik.WEIGHT_RATIO_BAR, float(ev.bars["alpha"]))


def logits_gap(ev: Evidence, loss: str) -> Measurement:
    f = ev.seddik_frames[loss]
    if f.empty:
        return _no_features(loss)
    return seddik.features_logits(f)


def accuracy_gap(ev: Evidence, loss: str) -> Measurement:
    f = ev.seddik_frames[loss]
    if f.empty:
        return _no_features(loss)
    return seddik.features_gap(f, float(ev.bars["seddik_gap_points"]), float(ev.bars["alpha"]))


def feature_premises(section: dict) -> list[Claim]:
    b, kw = float(section["claims"]["seddik_gap_points"]), _kw(section)
    out = []
    for loss in losses(section):
        out += [
            Claim(
                ClaimSpec(
                    f"features_informative:{loss}",
                    f"Premise: the {loss} network's penultimate features are informative and "
                    "the match is not trivial: the softmax classifier's test accuracy lies more "
                    f"than {b:g} points inside both guessing (100/k %) and 100 %",
                    "smallest over networks of min(accuracy − 100/k, 100 − accuracy), points; "
                    "exact binomial tests per network, p = the largest",
                    b,
                    ">",
                    kind="premise",
                    **kw,
                ),
                partial(informative_accuracy, loss=loss),
            ),
            Claim(
                ClaimSpec(
                    f"stats_independent:{loss}",
                    f"Sanity: the theory's class statistics on the {loss} features share no "
                    "point with the classifier's fit or test part (true by construction with "
                    "stats_from: independent)",
                    "largest over networks of the share of the statistics' points that are also "
                    "fit or test points",
                    0.0,
                    "<=",
                    kind="sanity",
                    **kw,
                ),
                partial(shared_statistics, loss=loss),
            ),
        ]
    return out


def feature_claims(section: dict, expected_ratio: dict | None = None) -> list[Claim]:
    """``expected_ratio`` (loss -> the exact theory's weights ratio) sets ``seddik_weights``'
    effect (``None``: no effect, power n/a), as Seddik's ``claim_specs``."""
    b, kw = float(section["claims"]["seddik_gap_points"]), _kw(section)
    wbar, lbar = seddik.WEIGHT_RATIO_BAR, seddik.LOGIT_GAP_BAR
    out = []
    for loss in losses(section):
        needs = (f"fitted:{loss}", f"features_informative:{loss}", f"stats_independent:{loss}")
        r = (expected_ratio or {}).get(loss)
        out += [
            Claim(
                ClaimSpec(
                    f"seddik_weights:{loss}",
                    f"Seddik's Theorem 4.8 predicts the softmax classifier trained on the {loss} "
                    "network's features: its weights lie within twice the theory's predicted "
                    "fluctuation of the predicted mean",
                    "mean over seeds of r = ‖w − predicted mean‖₂ / √(Σ predicted variance); "
                    "one-sided t-test over seeds (one r per network)",
                    wbar,
                    "<",
                    requires=needs,
                    effect=None if r is None or not math.isfinite(r) else wbar - r,
                    **kw,
                ),
                partial(weights_ratio, loss=loss),
            ),
            Claim(
                ClaimSpec(
                    f"seddik_logits:{loss}",
                    f"Seddik's Theorem 4.8 predicts the law of the test logits on the {loss} "
                    f"features: per true class and logit the measured mean lies within {lbar:g} "
                    "predicted SD of the predicted mean (on average)",
                    "mean over seeds of the mean over (true class, logit) of |measured − "
                    "predicted mean| / predicted SD; one-sided t-test over seeds",
                    lbar,
                    "<",
                    requires=needs,
                    effect=lbar,
                    **kw,
                ),
                partial(logits_gap, loss=loss),
            ),
            Claim(
                ClaimSpec(
                    f"seddik_accuracy:{loss}",
                    "Seddik's Theorem 4.8 predicts the test accuracy of the softmax classifier "
                    f"on the {loss} features (within ± {b:g} points, every network)",
                    "largest |theory − practice| test accuracy over networks, points; exact "
                    "binomial TOST per network (90 % Clopper–Pearson interval), p = the largest",
                    b,
                    "<",
                    requires=needs,
                    effect=0.0,
                    test="equivalence",
                    **kw,
                ),
                partial(accuracy_gap, loss=loss),
            ),
        ]
    return out


def loss_difference(ev: Evidence, what: str) -> Measurement:
    """Per seed the ``what`` statistic (``weights``: r, ``logits``: the logit-mean gap) of the
    method's network minus the baseline's (the same seed's)."""
    base, method, stats = ev.base, ev.method, ev.seddik_stats
    if not stats[base] or not stats[method]:
        return Measurement(math.nan, "a loss has no features")
    try:
        d = paired(stats[method][what], stats[base][what], names=(method, base))
    except ValueError as err:
        return Measurement(math.nan, f"{what}: {err}")
    better = base if d.value > 0 else method
    return replace(
        d,
        detail=f"{what}: {d.detail}; smaller on average (nearer the theory): {better}'s features",
    )


def same_claims(section: dict) -> list[Claim]:
    c, kw = section["claims"], _kw(section)
    base, method = section["baseline"], section["method"]
    both = tuple(
        f"{kind}:{loss}"
        for loss in losses(section)
        for kind in ("fitted", "features_informative", "stats_independent")
    )
    return [
        Claim(
            ClaimSpec(
                f"seddik_same_{what}",
                f"The theory predicts the {what} of a softmax classifier on LogitNorm's features "
                f"as well as on CE's: the {what} statistic of {method} and {base} agree within "
                f"± {float(c[bar_key]):g}",
                f"per seed {unit}, {method} − {base} (the same seed's networks); equivalence "
                f"(TOST, 90 % t interval) within ± {float(c[bar_key]):g}",
                float(c[bar_key]),
                "<",
                test="equivalence",
                effect=0.0,
                requires=both,
                **kw,
            ),
            partial(loss_difference, what=what),
        )
        for what, unit, bar_key in (
            ("weights", "r (units of the predicted fluctuation)", "weights_difference_bar"),
            ("logits", "logit-mean gap (predicted SDs)", "logits_difference_bar"),
        )
    ]
