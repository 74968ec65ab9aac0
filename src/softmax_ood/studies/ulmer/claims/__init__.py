"""The claims of Ulmer & Cinà tested on this run, declared as data for the shared engine
(:mod:`softmax_ood.analysis.claims`).

Theorem 1 says two things: the input gradients of the uncertainty metrics vanish far from the
data (what Lemmas 4-9 prove), and the models therefore reach *perfect certainty* there (what the
theorem states for averaged models too, but the lemmas do not prove: the mean of saturated
samples that disagree is flat and uncertain). The rows keep the two apart. Per dataset:

Premises (listed first)

* ``F-<ds>`` — every model fitted: per seed, the worst model removed more than half of its
  optimal constant solution's loss (:func:`softmax_ood.analysis.premises.fitted`: the gap
  OCS − final training loss over the OCS loss, above 0.5).
* ``N-<ds>`` — the certainty measurement can fail: the control model (a bounded smooth last
  hidden layer, outside the theorem's assumptions) is *not* certain far from the data.
* ``K-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble, MCMC) — ``K`` is large enough **for
  the finite-alpha certainty level**: the per-seed change ``stat(2K) - stat(K)`` of the mean max
  probability at the largest alpha over the points and the non-degenerate directions is
  equivalent to zero within ``± k_margin``, a margin fixed in the config before any run (half
  the distance from ``certain_max_prob`` to 1, so the change cannot flip a certainty verdict by
  itself). Equivalence test (TOST) on the paired changes: the engine's one-sided t-test of the
  changes oriented to their mean's side against ``k_margin`` is the binding half; its power is
  the whole TOST's (:func:`softmax_ood.analysis.claims.tost_power`) at change 0. (Not the seed
  spread of the same samples: a margin estimated from the data it judges is circular.) This is
  **not** the statistic C and P use (the share of direction cells whose *limiting* vote share
  is at most ``certain_max_prob``, every direction): the detail gives that share at K and 2K,
  the cells that cross the level when K doubles, and the C and P rows repeat their statistic
  at 2K. A premise that holds with power below the target, or with a seed's change beyond the
  margin, says so in its detail ("borderline"). For MCMC the K-sample model is the chain's
  first K kept samples and the 2K one the same chain run on, so K against 2K is also a split-
  chain check of the far-out statistic.
* ``E-<ds>-mcmc`` (the kinds whose samples form one Markov chain, :data:`.evidence.CHAINS`) —
  the chain mixed: per seed, the smaller of two effective sample sizes of its 2K kept samples,
  over K, above 1 (2K samples worth at least the K independent draws the vote share's standard
  error asks): that of the training-loss trace (on the data: a chain that is stuck or drifts
  there has few) and that of the limiting votes far out (mean over the directions whose votes
  split: what the C, P, R and T rows average). The C, P, R, T and M rows of a chain require it
  besides ``K``, so a chain that did not mix makes them "cannot test".

* ``B-<ds>-<kind>`` (every averaged kind) — the certainty bar
  ``certain_max_prob`` says more than in-distribution confidence: per seed, the model's mean max
  probability on the held-out points (alpha = 1 of the scaling curve) lies below the bar. When
  it does not, "certain far out" at the bar is no more certain than the data themselves: the
  bar is uninformative and the P row that counts cells above it reads "cannot test" (the R
  and T rows judge the same cells against the held-out confidence instead). The single
  network's held-out confidence is in the detail (and in S's).

Claims (tests of Theorem 1's certainty statement, as the paper hedges it and as it states it)

* ``C-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble, MCMC) — the averaged model mitigates
  the overconfidence along some directions: per seed, the share of directions (every direction,
  degenerate ones included) whose limiting mean max probability (the vote share) is at most
  ``certain_max_prob``, minus the single network's share; one-sided t-test over seeds (> 0).
* ``P-<ds>-<kind>`` — only partially: per seed, the share of directions (every direction)
  whose limiting mean max probability exceeds ``certain_max_prob``; one-sided t-test (> 0).
  C and P count degenerate directions (parallel to a class boundary, ``directions.degenerate``)
  like any other; their details give both numbers, with and without them.
* ``R-<ds>-<kind>`` — P judged against in-distribution confidence in place of the bar: per
  seed, the share of directions (all) whose limiting mean max probability is at least the
  model's own held-out mean max probability (same seed); one-sided t-test (> 0).
* ``T-<ds>-<kind>`` — Theorem 1 **as stated** for averaged models ("the same network(s) will
  reach perfect certainty"), a row the data can refute: per seed, the share of the
  non-degenerate directions (Assumption 1's) whose limiting mean max probability lies *below*
  the model's own held-out confidence; the theorem allows none, the row allows less than
  ``claims.effect_share`` (one direction in ten), one-sided t-test (< it). "Certain" is read as
  leniently as it can be while still saying something about OOD detection (at least as certain
  as on the data, not the fixed bar, not exactly 1); the detail gives the share at the bar and
  below 1 too. Declared only with ``effect_share`` in the config.
* ``M-<ds>-<kind>-<metric>`` — Theorem 1 on each of its four metrics (max probability, class
  variance, predictive entropy, mutual information; Lemmas 5, 7, 8, 9): along the paper's
  feature (the scaling curve), per seed, the gain in certainty from the held-out points to the
  largest alpha (max probability: its rise; the other three: their fall), one-sided t-test
  (> 0). Perfect certainty far out implies a gain equal to the held-out distance from perfect
  certainty; the power is computed at that gain (by the study; the paper gives no effect).
  The single network's values are in the detail (its class variance and mutual information are
  identically 0).
* ``D-<ds>`` — §6, hedged ("may ... have the unwanted consequence"): more in-domain data
  worsens OOD detection (AUROC change < 0). The row tests the directional reading; a "does not
  hold" refutes that reading, not the paper's "may".

Power: C and P at the share ``claims.effect_share``, D at the AUROC change
``claims.effect_auroc`` (both fixed in the config; the paper gives no effect size), at the
seeds' spread; n/a when the config gives none.

Sanity rows (true by construction, never counted as support)

* ``S-<ds>-single`` — a single ReLU network is certain far from the data: along a ray its logits
  are eventually affine in alpha, so its softmax saturates (unless two top logits have equal
  slopes: the degenerate directions, left out of this row, of N and of the K premise).
* ``G-<ds>-<metric>`` — the metric's input-gradient norm falls below ``grad_ratio`` times its
  alpha = 1 value along the paper's feature (Lemmas 5, 7, 8, 9; largest ratio over the ReLU
  models): once every sample saturates its softmax is flat, so this holds by construction (many
  ratios underflow to exactly 0). The control's ratio is in the detail: its gradients vanish too,
  without certainty.
* ``lemma3-<ds>`` — Lemma 3's network side: the ReLU models' largest |logit| grows at most
  linearly along the paper's feature (log-log slope between the two largest alphas below
  ``1 + LINEAR_TOL``): a ReLU network is piecewise linear, so its logit gradient stays bounded
  while the inverse softmax derivative grows exponentially in the logit gap (the note's
  Property 5). True by construction.
* ``lemma1`` — Lemma 1 holds for logit *differences*, not for the logits: the probabilities fix
  the logits only up to a shift ``g(x) 1`` (Property 1), so ``f = (|x|, |x| - x)`` has
  ``p_1 = sigmoid(x)`` strictly increasing while ``f_1 = |x|`` is not monotonic. The row checks
  the identity the counterexample rests on (Property 1's float64 error); the detail gives the
  counterexample. As stated (for the logits) the lemma does not follow; nothing else rests on it
  here.

Each claim is one :class:`~softmax_ood.analysis.claims.Claim`, its spec beside its named
measurement, in the modules of this package: :mod:`.premises` (F, N, K, E, B), :mod:`.averaged`
(L, C, P, R, T), :mod:`.metrics` (M, D) and :mod:`.sanity` (S, G, lemma3, note-*, lemma1);
:func:`claims` lists them in the table's order, measured on one :class:`.evidence.Evidence`.
"""

from __future__ import annotations

import pandas as pd

from softmax_ood.analysis.claims import Claim, ClaimSpec, judge
from softmax_ood.analysis.seeds import require_columns

from ..shared import HEADLINE
from .averaged import limit_claim, mitigation_claims
from .evidence import (
    CHAINS,
    DEGENERATE,
    METRICS,
    PAPER,
    STOCHASTIC,
    Evidence,
    cell_shares,
    certainty_per_seed,
    held_out,
    k_stability,
)
from .metrics import datasize_claim, metric_claim
from .premises import bar_claim, control_claim, fitted_claim, k_claim, mixing_claim
from .sanity import gradient_claim, lemma1_claim, lemma3_claim, note_claims, single_claim

__all__ = [
    "PAPER",
    "DEGENERATE",
    "STOCHASTIC",
    "CHAINS",
    "Evidence",
    "cell_shares",
    "certainty_per_seed",
    "claim_specs",
    "claims",
    "claims_table",
    "evaluate_ulmer_claims",
    "held_out",
    "k_stability",
]


def _dataset_claims(ds: str, section: dict) -> list[Claim]:
    """The rows of one dataset, premises first, in the table's order."""
    kinds = list(section["kinds"])
    averaged = [kind for kind in kinds if kind in STOCHASTIC]
    out = [fitted_claim(ds), control_claim(ds, section)]
    out += [k_claim(ds, kind, section) for kind in averaged]
    out += [mixing_claim(ds, kind) for kind in averaged if kind in CHAINS]
    out += [bar_claim(ds, kind, section) for kind in averaged]
    out += [limit_claim(ds, kind, section) for kind in averaged]
    if "single" in kinds:
        for kind in averaged:
            out += mitigation_claims(ds, kind, section)
    out += [metric_claim(ds, kind, metric) for kind in averaged for metric in METRICS]
    if "ensemble" in kinds:
        out.append(datasize_claim(ds, section))
    if "single" in kinds:
        out.append(single_claim(ds, section))
    out += [gradient_claim(ds, metric, section) for metric in METRICS]
    out.append(lemma3_claim(ds))
    return out


def claims(datasets: list[str], section: dict) -> list[Claim]:
    """The claims of ``datasets``, each its spec beside its measurement, with what decided
    each row's settings and what confirms it (issue 25): K, the certainty level and the data
    fraction are fixed in advance. ``section`` holds ``kinds``, ``control`` (activation),
    ``certain_max_prob``, ``grad_ratio``, ``k_margin``, ``alpha``, ``confident``, ``seeds``
    and the effect sizes."""
    from softmax_ood.analysis.selection import annotate, seeds_text

    listed = [c for ds in datasets for c in _dataset_claims(ds, section)]
    listed += [*note_claims(), lemma1_claim()]
    seeds = section.get("seeds")
    confirmation = (
        f"{seeds_text(seeds)} x every direction" if seeds else "every seed x every direction"
    )
    selection = {
        "note-*": "fixed in advance: the note's vectors and scales",
        "*": "fixed in advance: K from the vote share's binomial standard error <= "
        "claims.vote_se (K = 100), certainty level and margins in the config, the data "
        "fraction 1/4; nothing scanned on these seeds",
    }
    specs = annotate([c.spec for c in listed], selection, confirmation)
    return [Claim(spec, c.measure) for spec, c in zip(specs, listed, strict=True)]


def claim_specs(datasets: list[str], section: dict) -> list[ClaimSpec]:
    """The specs of :func:`claims` (the table's rows as data)."""
    return [c.spec for c in claims(datasets, section)]


def evaluate_ulmer_claims(
    fit: pd.DataFrame,
    scaling: pd.DataFrame,
    directions: pd.DataFrame,
    spec: dict,
    datasize: pd.DataFrame | None = None,
    checks: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The claims table (premises first) from the per-seed ``fit``, ``scaling`` (the alpha curve
    along the paper's feature) and ``directions`` (certainty at the largest alpha per direction,
    at K and 2K) frames of every dataset.

    :param spec: :func:`softmax_ood.studies.ulmer.study.claims_spec`: ``kinds``, ``control``,
        ``certain_max_prob``, ``grad_ratio``, ``k_margin``, ``alpha``,
        ``confident``.
    :param datasize: the §6 data-size frame
        (:func:`~softmax_ood.studies.ulmer.experiment.datasize_frame`), rows ``D-*``.
    :param checks: the softmax note's table (with
        :func:`~softmax_ood.studies.ulmer.softmax_note.property_checks`), rows ``note-*``.
    """
    require_columns(
        fit,
        ["dataset", "model", "kind", "seed", "accuracy", "chance", "train_loss", "ocs_loss"],
        "fit",
    )
    require_columns(
        scaling,
        ["dataset", "model", "kind", "seed", "alpha", "metric", "value", "grad_norm"],
        "scaling",
    )
    require_columns(
        directions,
        ["dataset", "kind", "seed", "direction", "degenerate", "k_role", "k", "mean_max_prob"],
        "directions",
    )
    ev = Evidence(fit, scaling, directions, spec, datasize=datasize, checks=checks)
    table = judge(
        PAPER, claims(ev.datasets, spec), ev, alpha=float(spec["alpha"]), headline=HEADLINE
    )
    ev.check_measured()
    return table


def claims_table(frames: dict, spec: dict) -> pd.DataFrame:
    """The study's claims table from its frames (the shared claims rule's function)."""
    return evaluate_ulmer_claims(
        frames["fit"],
        frames["scaling"],
        frames["directions"],
        spec,
        datasize=frames.get("datasize"),
        checks=frames.get("note"),
    )
