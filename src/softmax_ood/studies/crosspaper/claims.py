"""The cross-paper claims, declared as data and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`). Every row names both papers it joins (column ``paper``).

Premises (first rows):

* ``fitted:<loss>`` -- each network fitted: the share of its OCS's training loss removed by its
  final training loss, per seed (:func:`softmax_ood.analysis.premises.fitted`), above 0.5. For
  LogitNorm the OCS loss is the label marginal's entropy too: a constant unit-norm logit vector
  over tau reaches any near-uniform marginal, so the best constant's LogitNorm loss is the CE
  OCS's (the loss's own floor, ``log(1 + (k-1) e^{-sqrt(k/(k-1))/tau})``, is ~1e-11 at tau 0.04).
* ``changes:<shift>`` -- every level of the shift changes the images vs the level below (the
  level with the smallest mean change; per-image mean |pixel change| above
  ``change_epsilon``, t-test over its images).
* ``predictions_change:<shift>`` -- the top level changes the networks' decisions: the share of
  test images whose arg-max differs from the clean image's, per seed (mean of the two losses),
  above ``prediction_epsilon``.
* ``discriminator_null`` -- the discriminator scores the clean test images as ID: per repeat
  ``|score - 0.5|`` below ``null_tolerance`` (t-test).
* ``score_rises:<shift>`` -- the OOD score rises with the level (Spearman over the levels, level
  0 included, exact one-sided p): the shift axis is graded.
* ``score_separated:<shift>`` -- the axis spans more than the study's null tolerance (Kang's
  bar, ``null_tolerance`` 0.05): the top level's OOD score minus level 0's, one-sided Welch
  t-test over the two sets' discriminator repeats (Kang's ``score_separated``). Gates every row
  that reads the shift (``ocs_trend``, ``same_rate``): along an axis the discriminator cannot
  tell from clean, the order of the levels is noise.

Claims (a), Kang et al.'s reversion asked of the LogitNorm study's networks:

* ``ocs_trend:<loss>:far_ood`` -- along LogitNorm's own OOD test sets ordered on Kang's axis
  (those whose ``far_nontrivial`` premise holds: the pixel-statistics floor accepts more than
  ``far_floor_fpr95`` of the set at 95 % ID recall, binomial test), per seed Spearman rho(OOD
  score, distance) below 0, as Kang's far-OOD rows.
* ``ocs_trend:<loss>:<shift>`` -- predictions approach the OCS as the OOD score grows: per seed,
  Spearman rho(OOD score, KL of the raw-logit softmax to the OCS) over the levels; the seeds'
  rhos are below 0 (t-test), as Kang's ``ocs_trend`` rows.
* ``same_rate:<shift>`` -- LogitNorm's normalisation leaves the rate unchanged: per seed the
  least-squares slope of the relative raw logit norm ``||z||(level) / ||z||(clean)`` on the OOD
  score, LogitNorm minus CE; equivalence (TOST) within ``± rate_bar``. The logit norm has no
  ceiling; the KL to the OCS does (about log K, the OCS's entropy for balanced classes), and a
  confident CE network's clean KL sits near it, so a KL-ratio slope reads the ceiling more than
  the reversion (issue 46): the detail gives the KL slopes and each loss's clean KL against the
  ceiling. "does not hold": the rates differ (the detail says which shrinks faster).

Claims (b), Ulmer & Cinà's Theorem 1 asked of the same networks, along rays ``alpha * x'`` in the
network's input space:

* ``normalised_uncertain:<method>`` -- the normalised logits LogitNorm trains on do not become
  certain: per seed, the mean MSP of ``softmax(z / (tau ||z||))`` at the largest alpha below
  ``certain_max_prob``. Alone it is no finding about LogitNorm or about rays: CE's normalised
  logits and LogitNorm's on the clean images stay below the bar too (the detail gives both).
* ``normalised_below_ce:<method>`` -- what LogitNorm's training adds: per seed, the normalised
  MSP at the largest alpha of the LogitNorm network minus the CE network's (paired), below 0.
  "does not hold" / "too few seeds": along the rays LogitNorm's normalised logits are no less
  certain than CE's, and the bound is the normalisation's.

Sanity rows (true by construction, never counted as support):

* ``rays_certain:<loss>`` -- Theorem 1's conclusion, the raw-logit confidence tends to 1: per
  seed, the mean MSP at the largest alpha above ``certain_max_prob``. A network that is piecewise
  affine in eval mode (a ReLU WRN) has it by construction once ``rays_linear`` holds, so it is
  a sanity row, not a finding.

* ``rays_linear:<loss>`` -- a ReLU network's logits grow linearly far out: the log-log slope of
  the mean raw logit norm between the two largest alphas is within ``linear_tolerance`` of 1
  (largest deviation over seeds).
* ``normalised_bounded`` -- ``max_i |z_i| / (tau ||z||) <= 1 / tau`` on every ray.
* ``score_reads_raw`` -- the OOD score the LogitNorm study evaluates (the core's MSP score) is the
  raw logits' MSP log-odds (largest relative gap <= 1e-9), not the normalised logits' (their
  median relative gap is in the detail): this answers "which of the two does its OOD score use".

Claims (c), Seddik et al.'s Theorem 4.8 asked of the same networks' penultimate features (the
Seddik study's Fig. 5 frame, ``seddik``, per loss; the Seddik study's own measurements, reused):

* ``features_informative:<loss>`` (premise) -- the features are informative and the match is
  not trivial: every network's softmax classifier's test accuracy lies more than
  ``seddik_gap_points`` inside both guessing (100/k %) and 100 % (exact binomial tests, p = the
  largest; Seddik's P3).
* ``stats_independent:<loss>`` (sanity) -- the theory's class statistics share no point with
  the fit or test part (Seddik's S2; true by construction with ``stats_from: independent``).
* ``seddik_weights:<loss>`` -- the learned weights lie where the theory puts them: mean over
  networks of ``r = ‖w − E w‖ / √(Σ Var w)`` below Seddik's C3-weights bar
  (:data:`~softmax_ood.studies.seddik.claims.WEIGHT_RATIO_BAR`), one-sided t-test over seeds;
  power at the exact theory's ``r = √(1 + n_fit/n_stats)``.
* ``seddik_logits:<loss>`` -- the test logits' class means lie within Seddik's C3-logits bar
  (:data:`~softmax_ood.studies.seddik.claims.LOGIT_GAP_BAR` predicted SD) of the predicted ones.
* ``seddik_accuracy:<loss>`` -- Seddik's C3: per network an exact binomial TOST of the test
  accuracy against its theory within ``± seddik_gap_points``, every network.
* ``seddik_same_weights`` / ``seddik_same_logits`` -- the theory predicts LogitNorm's features as
  well as CE's: per seed the statistic of ``seddik_weights`` / ``seddik_logits``, LogitNorm minus
  CE (the same seed's networks), equivalence (TOST) within ``± weights_difference_bar`` /
  ``± logits_difference_bar``; "does not hold": the detail says which loss's features the theory
  predicts better; a straddling interval is "not established".

Selection: every setting (shifts, image budget, alphas, bars) is fixed in the config before any
verdict; the discriminator's alpha is the authors' 10, fixed in advance. Every verdict reads the
test images x the runs' seeds.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ...analysis.claims import ClaimSpec, Measurement, evaluate_claims, paired, spearman
from ...analysis.measures import per_seed, separation
from ...analysis.premises import FITTED_SHARE, fitted, floor_not_solved
from ..seddik import claims as seddik
from .shared import HEADLINE

__all__ = [
    "PAPERS",
    "claim_specs",
    "crosspaper_claims",
    "evaluate_crosspaper_claims",
    "measure_seddik",
    "seddik_per_seed",
    "seddik_specs",
]

WEI = "Wei et al. 2022 (LogitNorm)"  # the LogitNorm study's paper name
KANG = "Kang et al. 2024"
ULMER = "Ulmer & Cinà 2021"
SEDDIK = seddik.PAPER
#: the papers each kind of row joins (the ``paper`` column)
PAPERS = {
    "fitted": WEI,
    "changes": f"{KANG} × {WEI}",
    "predictions_change": f"{KANG} × {WEI}",
    "discriminator_null": f"{KANG} × {WEI}",
    "score_rises": f"{KANG} × {WEI}",
    "score_separated": f"{KANG} × {WEI}",
    "ocs_trend": f"{KANG} × {WEI}",
    "far_nontrivial": f"{KANG} × {WEI}",
    "same_rate": f"{KANG} × {WEI}",
    "rays_certain": f"{ULMER} × {WEI}",
    "normalised_uncertain": f"{ULMER} × {WEI}",
    "normalised_below_ce": f"{ULMER} × {WEI}",
    "rays_linear": f"{ULMER} × {WEI}",
    "normalised_bounded": f"{ULMER} × {WEI}",
    "score_reads_raw": f"{ULMER} × {WEI}",
    "features_informative": f"{SEDDIK} × {WEI}",
    "stats_independent": f"{SEDDIK} × {WEI}",
    "seddik_weights": f"{SEDDIK} × {WEI}",
    "seddik_logits": f"{SEDDIK} × {WEI}",
    "seddik_accuracy": f"{SEDDIK} × {WEI}",
    "seddik_same_weights": f"{SEDDIK} × {WEI}",
    "seddik_same_logits": f"{SEDDIK} × {WEI}",
}
RAY = "ray"
FAR = "far_ood"
SELECTION = "fixed in advance in the config (shifts, image budget, alphas, bars; discriminator alpha 10, the authors')"


def shifts(section: dict) -> list[str]:
    g = section["grid"]
    return list(g["corruptions"]) + (["rotation"] if g["rotations"] else [])


def claim_specs(section: dict, expected_ratio: dict | None = None) -> list[ClaimSpec]:
    """Every row of the claims table for the study section ``section`` (its ``losses``:
    ``baseline`` and ``method``); ``expected_ratio``: :func:`seddik_specs`'."""
    c = section["claims"]
    base, method = section["baseline"], section["method"]
    losses = [base, method]
    conf = f"seeds {', '.join(str(s) for s in section['seeds'])} × the first {section['grid']['eval_size']} test images"
    kw = {"selection": SELECTION, "confirmation": conf}
    rays = section["rays"]
    ray_kw = {
        "selection": SELECTION,
        "confirmation": f"seeds {', '.join(str(s) for s in section['seeds'])} × rays through "
        f"the first {rays['n_points']} test images",
    }
    out = [
        ClaimSpec(
            f"fitted:{loss}",
            f"Premise: the {loss} network fitted (training loss far below its OCS's)",
            "share of the OCS's training loss removed, per seed",
            FITTED_SHARE,
            ">",
            kind="premise",
            **kw,
        )
        for loss in losses
    ]
    out.append(
        ClaimSpec(
            "discriminator_null",
            "Premise: the discriminator scores the clean test images as ID (OOD score 0.5)",
            "|OOD score − 0.5| of the clean test split, per discriminator repeat",
            float(c["null_tolerance"]),
            "<",
            kind="premise",
            **kw,
        )
    )
    for s in shifts(section):
        out += [
            ClaimSpec(
                f"changes:{s}",
                f"Premise: every {s} level changes the images vs the level below",
                "mean |pixel change| vs the level below, per image, at the level changing least",
                float(c["change_epsilon"]),
                ">",
                kind="premise",
                **kw,
            ),
            ClaimSpec(
                f"predictions_change:{s}",
                f"Premise: the top {s} level changes the networks' decisions",
                "share of images whose arg-max differs from the clean image's, per seed",
                float(c["prediction_epsilon"]),
                ">",
                kind="premise",
                **kw,
            ),
            ClaimSpec(
                f"score_rises:{s}",
                f"Premise: the OOD score rises with the {s} level (the axis is graded)",
                "Spearman rho(level, OOD score), level 0 included, exact one-sided p",
                0.0,
                ">",
                kind="premise",
                **kw,
            ),
            ClaimSpec(
                f"score_separated:{s}",
                f"Premise: the top {s} level is clearly more OOD than level 0 (OOD score higher "
                f"by more than the null tolerance {float(c['null_tolerance']):g}, Kang's bar)",
                "OOD score(top level) − OOD score(level 0), Welch t-test over the "
                "discriminator repeats",
                float(c["null_tolerance"]),
                ">",
                kind="premise",
                requires=("discriminator_null",),
                **kw,
            ),
        ]
    floor_bar = float(c["far_floor_fpr95"])
    for name in section["far_ood"]:
        out.append(
            ClaimSpec(
                f"far_nontrivial:{name}",
                f"Premise: pixel statistics do not solve LogitNorm's OOD set {name}",
                "share of the set the pixel-statistics floor accepts at 95 % ID recall (FPR95), "
                "one-sided binomial test",
                floor_bar,
                ">",
                kind="premise",
                **kw,
            )
        )
    for s in shifts(section):
        needs = (
            f"changes:{s}",
            f"predictions_change:{s}",
            f"score_rises:{s}",
            f"score_separated:{s}",
            "discriminator_null",
        )
        for loss in losses:
            out.append(
                ClaimSpec(
                    f"ocs_trend:{loss}:{s}",
                    f"Kang et al.'s reversion holds for the {loss} network under {s}: its "
                    "predictions approach the OCS as the OOD score grows",
                    "per seed Spearman rho(OOD score, KL(softmax(raw logits) ‖ OCS)) over the "
                    "levels; t-test of the seeds' rhos below 0",
                    0.0,
                    "<",
                    requires=(f"fitted:{loss}", *needs),
                    **kw,
                )
            )
        out.append(
            ClaimSpec(
                f"same_rate:{s}",
                f"LogitNorm's normalisation leaves the rate of reversion under {s} unchanged",
                f"per seed slope of ||z||(level)/||z||(clean) (raw logit norm, no ceiling) on "
                f"the OOD score, {method} − {base}; equivalence within ± {c['rate_bar']:g}",
                float(c["rate_bar"]),
                "<",
                test="equivalence",
                effect=0.0,
                requires=(f"fitted:{base}", f"fitted:{method}", *needs),
                **kw,
            )
        )
    for loss in losses:
        out.append(
            ClaimSpec(
                f"ocs_trend:{loss}:{FAR}",
                f"Kang et al.'s reversion along LogitNorm's own OOD test sets: the {loss} "
                "network predicts the sets further out on Kang's axis closer to the OCS "
                "(between sets, not within a set: each set one point at its mean score; not "
                "in Kang et al., whose shifts are covariate shifts)",
                "per seed Spearman rho(OOD score, KL(softmax(raw logits) ‖ OCS)) over the far "
                "sets whose far_nontrivial premise holds; t-test of the seeds' rhos below 0",
                0.0,
                "<",
                requires=(f"fitted:{loss}", "discriminator_null"),
                **kw,
            )
        )
    bar = float(c["certain_max_prob"])
    for loss in losses:
        out.append(
            ClaimSpec(
                f"rays_certain:{loss}",
                f"Sanity: Theorem 1's conclusion for the {loss} network: along rays far from "
                "the data its raw-logit confidence tends to 1 (true by construction for a "
                "network that is piecewise affine in eval mode; rays_linear checks that)",
                "per seed mean MSP (raw logits) at the largest alpha",
                bar,
                ">",
                kind="sanity",
                requires=(f"fitted:{loss}",),
                **ray_kw,
            )
        )
    out.append(
        ClaimSpec(
            f"normalised_uncertain:{method}",
            "The normalised logits LogitNorm trains on stay uncertain along the same rays "
            f"(alone no finding about LogitNorm or rays: {base}'s normalised logits and the "
            f"clean images' are in the detail; normalised_below_ce:{method} is the comparison)",
            "per seed mean MSP of softmax(z / (tau ‖z‖)) at the largest alpha",
            bar,
            "<",
            requires=(f"fitted:{method}",),
            **ray_kw,
        )
    )
    out.append(
        ClaimSpec(
            f"normalised_below_ce:{method}",
            f"LogitNorm's training keeps its normalised logits less certain along the rays than "
            f"the {base} network's normalised logits (what the loss adds beyond the "
            "normalisation)",
            f"per seed normalised MSP at the largest alpha, {method} − {base} (paired)",
            0.0,
            "<",
            requires=(f"fitted:{base}", f"fitted:{method}"),
            **ray_kw,
        )
    )
    tol = float(c["linear_tolerance"])
    out += [
        ClaimSpec(
            f"rays_linear:{loss}",
            f"Sanity: the {loss} network's raw logits grow linearly far out (ReLU network)",
            "largest |log-log slope of the mean logit norm − 1| over seeds, two largest alphas",
            tol,
            "<=",
            kind="sanity",
        )
        for loss in losses
    ]
    out += [
        ClaimSpec(
            "normalised_bounded",
            "Sanity: the normalised logits are bounded by 1/tau on every ray",
            "largest max_i |z_i| / (tau ‖z‖) × tau over every ray, alpha and seed",
            1.0,
            "<=",
            kind="sanity",
        ),
        ClaimSpec(
            "score_reads_raw",
            f"Sanity: the OOD score the LogitNorm study evaluates ({method}'s MSP) reads the raw "
            "logits, not the normalised ones",
            "largest relative gap between the core's MSP score and the raw logits' MSP log-odds",
            1e-9,
            "<=",
            kind="sanity",
        ),
    ]
    rows = out + seddik_specs(section, expected_ratio)
    # the table's order: premises, claims, sanity rows, each in declaration order
    return sorted(rows, key=lambda s: ("premise", "claim", "sanity").index(s.kind))


def seddik_specs(section: dict, expected_ratio: dict | None = None) -> list[ClaimSpec]:
    """The rows of (c): Seddik's Theorem 4.8 on both networks' features. ``expected_ratio``
    (loss -> :func:`~softmax_ood.studies.seddik.claims.expected_weight_ratio` of its frame) sets
    ``seddik_weights``' effect (``None``: no effect, power n/a), as Seddik's ``claim_specs``."""
    c = section["claims"]
    base, method = section["baseline"], section["method"]
    b = float(c["seddik_gap_points"])
    wbar, lbar = seddik.WEIGHT_RATIO_BAR, seddik.LOGIT_GAP_BAR
    conf = f"seeds {', '.join(str(s) for s in section['seeds'])} × the test part of the pooled ID splits {', '.join(section['seddik']['splits'])}"
    sel = (
        f"fixed in advance: the Seddik study's bars (C3-weights {wbar:g}, C3-logits {lbar:g} predicted "
        f"SD, accuracy ± {b:g} points) and its Fig. 5 settings (lambda, row norm, thirds)"
    )
    kw = {"selection": sel, "confirmation": conf}
    expected = expected_ratio or {}
    out = []
    for loss in (base, method):
        out += [
            ClaimSpec(
                f"features_informative:{loss}",
                f"Premise: the {loss} network's penultimate features are informative and the "
                "match is not trivial: the softmax classifier's test accuracy lies more than "
                f"{b:g} points inside both guessing (100/k %) and 100 %",
                "smallest over networks of min(accuracy − 100/k, 100 − accuracy), points; exact "
                "binomial tests per network, p = the largest",
                b,
                ">",
                kind="premise",
                **kw,
            ),
            ClaimSpec(
                f"stats_independent:{loss}",
                f"Sanity: the theory's class statistics on the {loss} features share no point "
                "with the classifier's fit or test part (true by construction with "
                "stats_from: independent)",
                "largest over networks of the share of the statistics' points that are also fit "
                "or test points",
                0.0,
                "<=",
                kind="sanity",
                **kw,
            ),
        ]
    for loss in (base, method):
        needs = (f"fitted:{loss}", f"features_informative:{loss}", f"stats_independent:{loss}")
        r = expected.get(loss)
        out += [
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
            ClaimSpec(
                f"seddik_logits:{loss}",
                f"Seddik's Theorem 4.8 predicts the law of the test logits on the {loss} "
                f"features: per true class and logit the measured mean lies within {lbar:g} "
                "predicted SD of the predicted mean (on average)",
                "mean over seeds of the mean over (true class, logit) of |measured − predicted "
                "mean| / predicted SD; one-sided t-test over seeds",
                lbar,
                "<",
                requires=needs,
                effect=lbar,
                **kw,
            ),
            ClaimSpec(
                f"seddik_accuracy:{loss}",
                f"Seddik's Theorem 4.8 predicts the test accuracy of the softmax classifier on "
                f"the {loss} features (within ± {b:g} points, every network)",
                "largest |theory − practice| test accuracy over networks, points; exact binomial "
                "TOST per network (90 % Clopper–Pearson interval), p = the largest",
                b,
                "<",
                requires=needs,
                effect=0.0,
                test="equivalence",
                **kw,
            ),
        ]
    both = tuple(
        f"{kind}:{loss}"
        for loss in (base, method)
        for kind in ("fitted", "features_informative", "stats_independent")
    )
    for what, unit, bar_key in (
        ("weights", "r (units of the predicted fluctuation)", "weights_difference_bar"),
        ("logits", "logit-mean gap (predicted SDs)", "logits_difference_bar"),
    ):
        bar = float(c[bar_key])
        out.append(
            ClaimSpec(
                f"seddik_same_{what}",
                f"The theory predicts the {what} of a softmax classifier on LogitNorm's features "
                f"as well as on CE's: the {what} statistic of {method} and {base} agree within "
                f"± {bar:g}",
                f"per seed {unit}, {method} − {base} (the same seed's networks); equivalence "
                f"(TOST, 90 % t interval) within ± {bar:g}",
                bar,
                "<",
                test="equivalence",
                effect=0.0,
                requires=both,
                **kw,
            )
        )
    return out


# --------------------------------------------------------------------------- measurements
def _per_seed(values: pd.Series, what: str) -> Measurement:
    """Per-seed values (index: seed) as samples for the engine (Kang's helper, NaNs dropped)."""
    return per_seed(values.dropna().astype(float), what)


def _series(shift: pd.DataFrame, s: str) -> pd.DataFrame:
    """Rows of shift ``s`` with level 0 = its own level-0 set (rotation@0) or the clean split."""
    own = shift[shift["shift"] == s]
    if not (own["level"] == 0).any():
        zero = shift[shift["shift"] == "none"].assign(shift=s, level=0.0)
        own = pd.concat([zero, own], ignore_index=True)
    return own.sort_values("level")


def _scores_of(ood: pd.DataFrame) -> pd.Series:
    return ood.set_index("eval_set")["ood_score"].astype(float)


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(x) == 0:
        return math.nan
    return float(np.polyfit(x, y, 1)[0])


def _far(frames: dict, section: dict, scores: pd.Series) -> dict[str, Measurement]:
    """``far_nontrivial:<set>`` (binomial test of the pixel floor's FPR95 against the bar) and
    ``ocs_trend:<loss>:far_ood`` over the far sets that pass it."""
    from scipy import stats

    c = section["claims"]
    floor_bar, alpha = float(c["far_floor_fpr95"]), float(c["alpha"])
    ood = frames["ood_scores"].set_index("eval_set")
    m: dict[str, Measurement] = {}
    kept = []
    for name in section["far_ood"]:
        key = f"far:{name}"
        if key not in ood.index or int(ood.loc[key, "floor_n"]) <= 0:
            m[f"far_nontrivial:{name}"] = Measurement(math.nan, f"{name}: no pixel floor")
            continue
        r = ood.loc[key]
        fm = floor_not_solved(
            name, r["floor_accepted"], r["floor_n"], r["floor_detector"], floor_bar
        )
        m[f"far_nontrivial:{name}"] = fm
        if fm.p_value < alpha and fm.value > floor_bar:
            kept.append(key)
    shift = frames["shift"]
    far = shift[shift["eval_set"].isin(kept)]
    for loss in (section["baseline"], section["method"]):
        rhos = {}
        for seed, g in far[far["loss"] == loss].groupby("seed"):
            x = g["eval_set"].map(scores).to_numpy(float)
            d = g["distance"].to_numpy(float)
            if len(g) >= 3 and np.ptp(x) > 0 and np.ptp(d) > 0:
                rhos[seed] = float(stats.spearmanr(x, d).statistic)
        sets = ", ".join(k.removeprefix("far:") for k in kept) or "none"
        m[f"ocs_trend:{loss}:{FAR}"] = _per_seed(
            pd.Series(rhos, dtype=float),
            f"{loss}, LogitNorm's far sets not solved by pixel statistics ({sets}): Spearman "
            "rho(OOD score, distance to the OCS) per seed",
        )
    return m


def measure(frames: dict, section: dict) -> dict[str, Measurement]:
    """One measurement per claim id of :func:`claim_specs` from the frames ``shift``, ``rays``,
    ``fit``, ``levels`` and ``ood_scores`` (:mod:`.measure`)."""
    base, method = section["baseline"], section["method"]
    losses = [base, method]
    shift, rays, fit = frames["shift"], frames["rays"], frames["fit"]
    levels, ood = frames["levels"], frames["ood_scores"]
    scores = _scores_of(ood)
    m: dict[str, Measurement] = {}
    for loss in losses:
        f = fit[fit["loss"] == loss].set_index("seed")
        family = str(f["family"].iloc[0]) if len(f) else "ce"
        m[f"fitted:{loss}"] = fitted(
            f["train_loss"],
            f["ocs_loss"],
            loss={"logitnorm": "logit_norm"}.get(family, family),
            what=loss,
        )
    clean = ood[ood["shift"] == "none"]
    reps = (
        np.abs(np.asarray(clean["per_repeat"].iloc[0], dtype=float) - 0.5)
        if len(clean)
        else np.array([])
    )
    m["discriminator_null"] = Measurement(
        float(reps.mean()) if len(reps) else math.nan,
        f"clean test split: OOD score {scores.get('id', math.nan):.3f}; |score − 0.5| per repeat "
        + ", ".join(f"{v:.3f}" for v in reps),
        samples=tuple(reps),
    )
    lv = levels.set_index("eval_set")
    # the KL to the OCS is at most -log(min OCS component), log K for balanced classes: the
    # OCS's entropy (the fit frame's OCS loss) stands for it
    ceiling = float(fit["ocs_loss"].astype(float).mean()) if len(fit) else math.nan
    for s in shifts(section):
        rows = levels[(levels["shift"] == s) & (levels["level"] > 0)]
        if rows.empty:
            m[f"changes:{s}"] = Measurement(math.nan, f"{s}: no level")
        else:
            least = rows.loc[rows["change"].astype(float).idxmin()]
            per = np.asarray(lv.loc[least["eval_set"], "change_per_image"], dtype=float)
            m[f"changes:{s}"] = Measurement(
                float(per.mean()),
                f"{s}: smallest mean change at {least['eval_set']} ({per.mean():.4f}; per level "
                + ", ".join(f"{r.eval_set}: {float(r.change):.4f}" for r in rows.itertuples())
                + f"), {len(per)} images",
                samples=tuple(per),
            )
        ser = _series(shift, s)
        top = ser["level"].max()
        at_top = ser[ser["level"] == top].groupby("seed")["changed"].mean()
        m[f"predictions_change:{s}"] = _per_seed(
            at_top, f"{s}@{top:g}: share of decisions changed vs clean (mean of {base}, {method})"
        )
        lvls = sorted(ser["level"].unique())
        names = [
            ("id" if lvl == 0 and not (ser["eval_set"] == f"{s}@0").any() else f"{s}@{lvl:g}")
            for lvl in lvls
        ]
        sc = [scores.get(n, math.nan) for n in names]
        m[f"score_rises:{s}"] = spearman(
            lvls,
            sc,
            what=f"{s}: OOD score per level "
            + ", ".join(f"{lvl:g}: {v:.3f}" for lvl, v in zip(lvls, sc, strict=True))
            + "; ",
            alternative="greater",
        )
        reps = ood.set_index("eval_set")["per_repeat"]
        top_name, zero_name = names[-1], names[0]
        m[f"score_separated:{s}"] = separation(
            np.asarray(reps.get(top_name, []) if len(lvls) > 1 else [], dtype=float),
            np.asarray(reps.get(zero_name, []), dtype=float),
            float(section["claims"]["null_tolerance"]),
            f"{s}: top level {top_name} vs level 0 ({zero_name})",
        )
        by_level = dict(zip(lvls, sc, strict=True))
        slopes, kl = {}, {}
        for loss in losses:
            g = ser[ser["loss"] == loss]
            g = g.assign(ood_score=g["level"].map(by_level))
            rhos, sl, kl_sl, kl0 = {}, {}, {}, {}
            for seed, gs in g.groupby("seed"):
                gs = gs.sort_values("level")
                x, d = gs["ood_score"].to_numpy(float), gs["distance"].to_numpy(float)
                if len(gs) >= 3 and np.ptp(x) > 0 and np.ptp(d) > 0:
                    from scipy import stats

                    rhos[seed] = float(stats.spearmanr(x, d).statistic)
                d0 = float(gs.loc[gs["level"] == 0, "distance"].iloc[0])
                kl0[seed] = d0
                kl_sl[seed] = _slope(x, d / d0) if d0 > 0 else math.nan
                z = gs["logit_norm"].to_numpy(float)
                z0 = float(gs.loc[gs["level"] == 0, "logit_norm"].iloc[0])
                sl[seed] = _slope(x, z / z0) if z0 > 0 else math.nan
            m[f"ocs_trend:{loss}:{s}"] = _per_seed(
                pd.Series(rhos, dtype=float),
                f"{loss}, {s}: Spearman rho(OOD score, distance to the OCS) per seed",
            )
            slopes[loss] = pd.Series(sl, dtype=float)
            kl[loss] = (pd.Series(kl_sl, dtype=float).mean(), pd.Series(kl0, dtype=float).mean())
        common = sorted(set(slopes[base].dropna().index) & set(slopes[method].dropna().index))
        diff = slopes[method].loc[common] - slopes[base].loc[common]
        if len(diff):
            faster = method if diff.mean() < 0 else base
            m[f"same_rate:{s}"] = Measurement(
                float(diff.mean()),
                f"{s}: slope of ||z||/||z||(clean) (raw logit norm) per unit OOD score, {base} "
                f"{slopes[base].mean():.3f}, {method} {slopes[method].mean():.3f}; difference "
                f"{diff.mean():.3f} (per seed "
                + ", ".join(f"{k}: {v:.3f}" for k, v in diff.items())
                + f"); {faster}'s logits shrink faster. The KL to the OCS (ceiling about log K "
                f"= {ceiling:.3f}, the OCS's entropy) is not used: clean KL "
                + ", ".join(
                    f"{loss} {kl[loss][1]:.3f} ({kl[loss][1] / ceiling:.0%} of the ceiling), "
                    f"slope of d/d(clean) {kl[loss][0]:.3f}"
                    for loss in losses
                ),
                samples=tuple(diff.to_numpy()),
            )
        else:
            m[f"same_rate:{s}"] = Measurement(math.nan, f"{s}: no slope")
    m.update(_far(frames, section, scores))
    top_alpha = rays["alpha"].max() if len(rays) else math.nan
    for loss in losses:
        r = rays[rays["loss"] == loss]
        at = r[r["alpha"] == top_alpha].set_index("seed")
        m[f"rays_certain:{loss}"] = _per_seed(
            at["msp"], f"{loss}: mean raw-logit MSP at alpha = {top_alpha:g}"
        )
        a_sorted = sorted(r["alpha"].unique())
        devs = {}
        if len(a_sorted) >= 2:
            a1, a2 = a_sorted[-2], a_sorted[-1]
            for seed, g in r.groupby("seed"):
                n1 = float(g.loc[g["alpha"] == a1, "logit_norm"].iloc[0])
                n2 = float(g.loc[g["alpha"] == a2, "logit_norm"].iloc[0])
                devs[seed] = abs(math.log(n2 / n1) / math.log(a2 / a1) - 1.0)
        dv = pd.Series(devs, dtype=float)
        m[f"rays_linear:{loss}"] = Measurement(
            float(dv.max()) if len(dv) else math.nan,
            f"{loss}: |log-log slope − 1| per seed "
            + ", ".join(f"{k}: {v:.2g}" for k, v in dv.items()),
        )
    r = rays[rays["loss"] == method]
    at = r[r["alpha"] == top_alpha].set_index("seed")
    low_alpha = rays["alpha"].min() if len(rays) else math.nan
    on_data = r.loc[r["alpha"] == low_alpha, "msp_normalised"].mean()
    control = rays.loc[
        (rays["loss"] == base) & (rays["alpha"] == top_alpha), "msp_normalised"
    ].mean()
    m[f"normalised_uncertain:{method}"] = _per_seed(
        at["msp_normalised"],
        f"{method}: mean MSP of the normalised logits at alpha = {top_alpha:g} (raw: "
        f"{at['msp'].mean():.4f}; normalised at alpha = {low_alpha:g}, the images themselves: "
        f"{on_data:.4f}; {base}'s normalised logits at alpha = {top_alpha:g}: {control:.4f}; "
        f"normalised_below_ce:{method} compares the two)",
    )
    on_base = rays.loc[(rays["loss"] == base) & (rays["alpha"] == low_alpha), "msp_normalised"]
    try:
        d = paired(
            at["msp_normalised"],
            rays[(rays["loss"] == base) & (rays["alpha"] == top_alpha)].set_index("seed")[
                "msp_normalised"
            ],
            names=(method, base),
        )
        m[f"normalised_below_ce:{method}"] = replace(
            d,
            detail=f"normalised MSP at alpha = {top_alpha:g}: {d.detail}; on the images "
            f"themselves (alpha = {low_alpha:g}): {method} {on_data:.4f}, {base} "
            f"{on_base.mean():.4f}",
        )
    except ValueError as err:
        m[f"normalised_below_ce:{method}"] = Measurement(math.nan, f"normalised MSP: {err}")
    tau = float(section["tau"])
    mx = float(rays["max_normalised_logit"].max()) * tau if len(rays) else math.nan
    m["normalised_bounded"] = Measurement(
        mx, f"largest |normalised logit| {mx / tau:.3f} vs 1/tau = {1 / tau:g}"
    )
    raw_gap = float(r["score_vs_raw"].max()) if len(r) else math.nan
    norm_gap = float(r["score_vs_normalised"].median()) if len(r) else math.nan
    m["score_reads_raw"] = Measurement(
        raw_gap,
        f"{method}: largest relative gap of the core's MSP score to the raw logits' log-odds "
        f"{raw_gap:.2g}; to the normalised logits' (median over rays) {norm_gap:.3g}",
    )
    m.update(measure_seddik(frames["seddik"], section))
    return m


def _of_loss(frame: pd.DataFrame, loss: str) -> pd.DataFrame:
    return frame[frame["loss"] == loss].drop(columns="loss")


def seddik_per_seed(frame: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per loss and network (seed) of the ``seddik`` frame: the Seddik statistics of (c), one
    network at a time: ``r`` (C3-weights), ``r_exact`` (the exact theory's), ``logit_gap``
    (C3-logits), the softmax classifier's and the theory's test accuracy (%) and its test points."""
    rows = []
    for (loss, seed), g in frame.groupby(["loss", "seed"], sort=False):
        g = g.drop(columns="loss")
        acc = g[(g["panel"] == "accuracy") & (g["split"] == "test") & (g["cls"] == "all")]
        prac = acc[acc["source"] == "practice"]
        rows.append(
            {
                "loss": loss,
                "seed": int(seed),
                "r": seddik.features_weights(g, seddik.WEIGHT_RATIO_BAR, alpha).value,
                "r_exact": seddik.expected_weight_ratio(g),
                "logit_gap": seddik.features_logits(g).value,
                "accuracy": 100 * float(prac["value"].iloc[0]),
                "theory_accuracy": 100 * float(acc[acc["source"] == "theory"]["value"].iloc[0]),
                "n_test": int(prac["n_points"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def measure_seddik(frame: pd.DataFrame, section: dict) -> dict[str, Measurement]:
    """The measurements of (c) from the ``seddik`` frame (:func:`.measure.seddik_frame`): the
    Seddik study's own functions on each loss's rows, and per seed the paired differences."""
    c = section["claims"]
    base, method = section["baseline"], section["method"]
    b, alpha = float(c["seddik_gap_points"]), float(c["alpha"])
    m: dict[str, Measurement] = {}
    stats = {}
    for loss in (base, method):
        f = _of_loss(frame, loss)
        if f.empty:
            for kind in ("features_informative", "stats_independent", *SEDDIK_CLAIMS):
                m[f"{kind}:{loss}"] = Measurement(math.nan, f"no features of the {loss} networks")
            stats[loss] = {}
            continue
        m[f"features_informative:{loss}"] = seddik.features_informative(f, b)
        m[f"stats_independent:{loss}"] = seddik.statistics_independent(f)
        m[f"seddik_weights:{loss}"] = seddik.features_weights(f, seddik.WEIGHT_RATIO_BAR, alpha)
        m[f"seddik_logits:{loss}"] = seddik.features_logits(f)
        m[f"seddik_accuracy:{loss}"] = seddik.features_gap(f, b, alpha)
        per = seddik_per_seed(frame[frame["loss"] == loss], alpha).set_index("seed")
        stats[loss] = {"weights": per["r"], "logits": per["logit_gap"]}
    for what in ("weights", "logits"):
        if not stats[base] or not stats[method]:
            m[f"seddik_same_{what}"] = Measurement(math.nan, "a loss has no features")
            continue
        try:
            d = paired(stats[method][what], stats[base][what], names=(method, base))
        except ValueError as err:
            m[f"seddik_same_{what}"] = Measurement(math.nan, f"{what}: {err}")
            continue
        better = base if d.value > 0 else method
        m[f"seddik_same_{what}"] = replace(
            d,
            detail=f"{what}: {d.detail}; smaller on average (nearer the theory): {better}'s features",
        )
    return m


#: the (c) claims measured per loss
SEDDIK_CLAIMS = ("seddik_weights", "seddik_logits", "seddik_accuracy")


def evaluate_crosspaper_claims(frames: dict, section: dict) -> pd.DataFrame:
    """The claims table (premises first), its ``paper`` column naming both papers of each row."""
    frame = frames["seddik"]
    expected = {
        loss: seddik.expected_weight_ratio(_of_loss(frame, loss))
        for loss in (section["baseline"], section["method"])
    }
    specs = claim_specs(section, expected)
    table = evaluate_claims(
        WEI,
        specs,
        measure(frames, section),
        alpha=float(section["claims"]["alpha"]),
        headline=HEADLINE,
    )
    table["paper"] = [PAPERS[cid.split(":")[0]] for cid in table["claim_id"]]
    return table


def crosspaper_claims(frames: dict, section: dict) -> pd.DataFrame:
    """What the shared claims rule calls (``study.claims_job``)."""
    return evaluate_crosspaper_claims(frames, section)
