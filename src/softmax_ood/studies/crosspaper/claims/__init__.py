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
  (those whose ``far_nontrivial`` premise holds: the floor battery's best detector accepts more than
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

The claims live in this package, each one :class:`~softmax_ood.analysis.claims.Claim` (its spec
beside its named measurement, a function of the :class:`~.evidence.Evidence`): the premises in
:mod:`.premises`, (a) in :mod:`.reversion`, (b) in :mod:`.rays`, (c) in :mod:`.features`;
:func:`claims` lists them all in the table's order.
"""

from __future__ import annotations

import pandas as pd

from ....analysis.claims import Claim, ClaimSpec, Measurement, judge
from ..shared import HEADLINE
from .common import PAPERS, WEI, shifts
from .evidence import Evidence, seddik_per_seed
from .features import SEDDIK_CLAIMS, feature_claims, feature_premises, same_claims
from .premises import fit_premises, shift_premises
from .rays import certainty_claims, normalised_claims, sanity_claims
from .reversion import far_claims, shift_claims

__all__ = [
    "PAPERS",
    "SEDDIK_CLAIMS",
    "Evidence",
    "claim_specs",
    "claims",
    "crosspaper_claims",
    "evaluate_crosspaper_claims",
    "measure_seddik",
    "seddik_per_seed",
    "seddik_specs",
    "shifts",
]

#: the table's order of the kinds (each in declaration order)
_KIND_ORDER = ("premise", "claim", "sanity")


def seddik_claims(section: dict, expected_ratio: dict | None = None) -> list[Claim]:
    """The claims of (c): Seddik's Theorem 4.8 on both networks' features, in declaration
    order (``expected_ratio``: :func:`.features.feature_claims`')."""
    return [
        *feature_premises(section),
        *feature_claims(section, expected_ratio),
        *same_claims(section),
    ]


def claims(section: dict, expected_ratio: dict | None = None) -> list[Claim]:
    """Every row of the claims table for the study section ``section`` (its ``losses``:
    ``baseline`` and ``method``), premises first, then claims, then sanity rows, each in
    declaration order; ``expected_ratio``: loss -> the exact theory's weights ratio (the
    evidence's), which sets ``seddik_weights``' effect (``None``: power n/a)."""
    declared = [
        *fit_premises(section),
        *shift_premises(section),
        *shift_claims(section),
        *far_claims(section),
        *certainty_claims(section),
        *normalised_claims(section),
        *sanity_claims(section),
        *seddik_claims(section, expected_ratio),
    ]
    return sorted(declared, key=lambda c: _KIND_ORDER.index(c.spec.kind))


def claim_specs(section: dict, expected_ratio: dict | None = None) -> list[ClaimSpec]:
    """The specs of :func:`claims`, in the table's order."""
    return [c.spec for c in claims(section, expected_ratio)]


def seddik_specs(section: dict, expected_ratio: dict | None = None) -> list[ClaimSpec]:
    """The specs of (c), in declaration order."""
    return [c.spec for c in seddik_claims(section, expected_ratio)]


def measure_seddik(frame: pd.DataFrame, section: dict) -> dict[str, Measurement]:
    """The measurements of (c) from the ``seddik`` frame (:func:`..measure.seddik_frame`) alone:
    the Seddik study's own functions on each loss's rows, and per seed the paired differences."""
    evidence = Evidence({"seddik": frame}, section)
    return {c.id: c.measure(evidence) for c in seddik_claims(section)}


def evaluate_crosspaper_claims(frames: dict, section: dict) -> pd.DataFrame:
    """The claims table (premises first), its ``paper`` column naming both papers of each row."""
    evidence = Evidence(frames, section)
    table = judge(
        WEI,
        claims(section, evidence.expected_ratio),
        evidence,
        alpha=float(section["claims"]["alpha"]),
        headline=HEADLINE,
    )
    table["paper"] = [PAPERS[cid.split(":")[0]] for cid in table["claim_id"]]
    return table


def crosspaper_claims(frames: dict, section: dict) -> pd.DataFrame:
    """What the shared claims rule calls (``study.claims_job``)."""
    return evaluate_crosspaper_claims(frames, section)
