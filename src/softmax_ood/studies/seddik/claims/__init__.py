"""Seddik et al.'s claims as data, measured on the study's frames and judged by the shared engine
(:mod:`softmax_ood.analysis.claims`).

The paper's claims are matches: Theorem 4.8's predicted test accuracy lies on the trained
classifier's (Figs. 2, 4, 5). A match is an **equivalence** statement, so each is judged by the engine's equivalence test
(``ClaimSpec(test="equivalence")``) against the bar ``b`` (``claims.max_gap_points``, accuracy
points): "holds" when the ``1 − 2·alpha`` interval of the signed gap lies inside ``± b``, "does
not hold" when it lies entirely outside, "not established" when it straddles the bar (a
borderline gap is not evidence against the theory). Power is the whole TOST's (both one-sided
tests must reject: :func:`softmax_ood.analysis.claims.tost_power`) when the theory is exact
(true gap 0: the spec's ``effect``).

* ``P1``, ``P2``, ``P3`` (premises, one per claim): the comparison is informative — the measured
  test accuracy lies more than ``b`` away from both trivial predictions, guessing (100/k %) and
  perfect (100 %). A classifier at 99.6 % would be "predicted within 2 points" by anyone
  predicting 100 %, so a match there says nothing about the theory.
* ``S1`` (sanity): with the squared loss the fixed point reproduces the ridge closed form
  (Marchenko–Pastur) up to O(1/n). Both sides are deterministic computations (no sample), so it
  is a check of the implementation, true by construction when the code is right: a sanity row.
* ``S2`` (sanity): Fig. 5's class statistics are independent of the classifier and of its test
  points: none of the points behind the theory's class means and covariances is a fit or test
  point (``statistics`` panel of the Fig. 5 frame). True by construction with
  ``seddik.fig5.stats_from: independent``; with ``train`` the learned weights are almost a
  function of the statistics (r far below 1: the weights match is built in), with ``all`` the
  test points feed the theory too, so C3-weights, C3-logits and C3 rest on S2 and read
  "cannot test" there.
* ``C1``: Fig. 2, Gaussian mixtures: the signed gap theory − practice of the test accuracy at
  **every** ``p`` (the paper: "a perfect match"): per ``p`` a TOST over seeds (each seed draws
  every training and test set anew), intersection–union over ``p`` (:func:`gap_over`): holds
  only if every ``p``'s TOST holds, "not established" when one ``p``'s interval straddles.
* ``C1-train``: the same on the training points (the paper: "both for training and test
  data").
* ``C2``: the same on digits (Fig. 4, "consistently estimated") at every training size ``n``.
  The population is the balanced digit pool (its class statistics feed the theory); a seed
  draws the training points and tests on the rest. (Fig. 4's training accuracy is not claimed
  in the text, so it is not tested.)
* ``C3-weights``: Fig. 5 (left), network features: the learned weights against the theory's
  predicted mean and spread. Per network (seed) ``r = ‖w − E w‖₂ / √(Σ Var w)`` over every class
  and coordinate, the error in units of the theory's own predicted fluctuation: if the theory's
  mean and covariance are right, ``E r² = 1`` (``r ≈ 1``); with statistics estimated from
  ``n_stats`` independent points the predicted mean carries their sampling error too, about
  ``r ≈ √(1 + n/n_stats)`` (√2 for as many statistics as fit points, on a Gaussian mixture
  where the theory is exact: ``test_independent_statistics_put_r_near_sqrt2``). Claim: the mean ``r`` over networks
  lies below :data:`WEIGHT_RATIO_BAR` (twice the predicted fluctuation), one-sided t-test over
  cuts of the pool (samples: one ``r`` per cut, :func:`per_cut`; with ``seddik.fig5.cut:
  per_network`` each network has its own cut, so one ``r`` per network; networks sharing a cut
  share its statistics, fit and test points and count once, issue 42); the effect at which the power is computed: the
  ``r`` an exact theory gives with the frame's own sizes, ``√(1 + n_fit/n_stats)``
  (:func:`expected_weight_ratio`: ``n_fit`` from the fit part's accuracy row, ``n_stats`` from
  the ``statistics`` panel), i.e. ``bar − √(1 + n_fit/n_stats)`` below the bar (undefined, so
  no power, when the statistics are not independent of the classifier). The detail gives per
  network the correlation of the learned with the predicted weights and their relative L2
  error.
* ``C3-logits``: Fig. 5 (middle, right): the law of the test logits. Per network, the mean over
  (true class, logit) of ``|measured mean − predicted mean| / predicted std`` of the test
  logits (``logit_moments`` panel). Claim: below :data:`LOGIT_GAP_BAR` (half a predicted standard
  deviation), one-sided t-test over cuts of the pool (as C3-weights); the paper's effect: 0 (the theory exact: the
  measured mean then differs from the predicted one by sampling noise only), i.e. the bar's
  distance from 0. The detail gives the mean ratio measured / predicted std.
* ``C3``: an additional check, not drawn in Fig. 5 (the paper plots weights and logits, not
  the accuracy): network features (k classes), one trained network per seed: per network an
  exact binomial TOST of its test accuracy against the network's own theory ± ``b``, with its
  ``1 − 2·alpha`` exact (Clopper–Pearson) interval of the gap; the claim holds for the networks
  only if it holds for each (intersection–union test: p = the largest network p, valid whatever
  the networks' correlation). The interval handed to the engine is that of a network whose
  interval lies entirely outside the bar if there is one (the claim "for every network" then
  does not hold; the one with the largest |gap|, the value's, when it is outside), else the
  hull of all networks' intervals; the detail names the network. ``p_opposite``: the exact
  one-sided p that some network lies beyond the bar (Bonferroni over networks). ``n`` is the
  test points per network. The detail splits the mean gap as C1/C2's does
  (:func:`features_shape`): theory vs a Gaussian with the measured test logits' per-class mean
  and covariance (the predicted moments' part), that Gaussian vs the measured accuracy (the
  logits' non-Gaussian shape), and states the regime (p, n/p) against the paper's p = 512,
  n/p ≈ 6 (a statement, not a test: the Gaussian law is a CLT over p).
* ``P4`` (premise of C4): Fig. 3's input is far from Gaussian: per class, the median over the
  non-constant pixels of their distance from Gaussian (max(|skewness| / 0.5, |excess
  kurtosis| / 1)) exceeds 1, z-test with a bootstrap SE over images (:func:`input_far_from_gaussian`).
* ``C4``: Fig. 3's leave-one-out scores are Gaussian per class: |skewness| < 0.5 and |excess
  kurtosis| < 1, equivalence tests with bootstrapped SEs, intersection–union over classes and
  moments (:func:`scores_gaussian`; the D'Agostino–Pearson K² test in the detail).
* ``C5``: Theorem 4.3 over Fig. 4's n: the log-log slope of ‖w − E w‖₂ against n (finite-pool
  factor removed) is −1/2 ± :data:`RATE_BAR`, TOST over seeds (:func:`spread_rate`).

Gaps are in accuracy points (percent).

Each claim is one unit (:class:`~softmax_ood.analysis.claims.Claim`): its spec beside its named
measurement, a function of the study's :class:`~.evidence.Evidence` (the frames and bars, with
what two claims share cached). :func:`~.table.claims` lists them in their declaration order,
:func:`~.table.evaluate_seddik_claims` judges them with
:func:`~softmax_ood.analysis.claims.judge`. The package:

* :mod:`.premises`: P1–P4, S1, S2; :mod:`.matches`: C1–C5 (the units);
* :mod:`.curves` (Figs. 2 and 4), :mod:`.gaussianity` (Fig. 3, Theorem 4.3), :mod:`.network`
  (Fig. 5's accuracy), :mod:`.weights` (Fig. 5's weights and logits), :mod:`.sanity`: the
  measurements on frames (public, reused by the cross-paper study);
* :mod:`.common`: the paper, the bars fixed in advance, shared helpers; :mod:`.evidence`;
  :mod:`.table`: the claims list and table.
"""

from __future__ import annotations

from .common import (
    BUILT_IN_RATIO,
    CONFIRMATION,
    IMAGES,
    LOGIT_GAP_BAR,
    PAPER,
    RATE,
    RATE_BAR,
    TRIVIAL,
    WEIGHT_RATIO_BAR,
)
from .curves import gap_over, informative, score_moments
from .evidence import Evidence, Settings
from .gaussianity import (
    SCORE_BOOTSTRAP,
    input_far_from_gaussian,
    scores_gaussian,
    spread_rate,
)
from .network import (
    GAUSS_DRAWS_LOG2,
    PAPER_FIG5_N,
    PAPER_FIG5_P,
    binomial_tost,
    features_gap,
    features_informative,
    features_shape,
)
from .sanity import ridge_sanity, statistics_independent
from .table import claim_specs, claims, claims_table, evaluate_seddik_claims
from .weights import (
    cuts_of,
    expected_weight_ratio,
    features_logits,
    features_weights,
    per_cut,
)

__all__ = [
    "BUILT_IN_RATIO",
    "CONFIRMATION",
    "Evidence",
    "GAUSS_DRAWS_LOG2",
    "IMAGES",
    "LOGIT_GAP_BAR",
    "PAPER",
    "PAPER_FIG5_N",
    "PAPER_FIG5_P",
    "RATE",
    "RATE_BAR",
    "SCORE_BOOTSTRAP",
    "Settings",
    "TRIVIAL",
    "WEIGHT_RATIO_BAR",
    "binomial_tost",
    "claim_specs",
    "claims",
    "claims_table",
    "cuts_of",
    "evaluate_seddik_claims",
    "features_gap",
    "features_informative",
    "features_logits",
    "features_shape",
    "features_weights",
    "expected_weight_ratio",
    "gap_over",
    "informative",
    "input_far_from_gaussian",
    "per_cut",
    "scores_gaussian",
    "spread_rate",
    "ridge_sanity",
    "score_moments",
    "statistics_independent",
]
