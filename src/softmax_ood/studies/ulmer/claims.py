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
* ``K-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble) — ``K`` is large enough **for
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
  margin, says so in its detail ("borderline").

* ``B-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble) — the certainty bar
  ``certain_max_prob`` says more than in-distribution confidence: per seed, the model's mean max
  probability on the held-out points (alpha = 1 of the scaling curve) lies below the bar. When
  it does not, "certain far out" at the bar is no more certain than the data themselves: the
  bar is uninformative and the P row that counts cells above it reads "cannot test" (the R
  and T rows judge the same cells against the held-out confidence instead). The single
  network's held-out confidence is in the detail (and in S's).

Claims (tests of Theorem 1's certainty statement, as the paper hedges it and as it states it)

* ``C-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble) — the averaged model mitigates
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

Not run: MCMC, the third family of §3.3 (a declared departure).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from softmax_ood.analysis.claims import (
    ClaimSpec,
    Measurement,
    evaluate_claims,
    fmt_mean_std,
    t_power,
    tost_power,
)
from softmax_ood.analysis.measures import per_frame, rows
from softmax_ood.analysis.premises import FITTED_SHARE, fitted
from softmax_ood.analysis.seeds import require_columns

from .shared import HEADLINE

__all__ = [
    "PAPER",
    "DEGENERATE",
    "STOCHASTIC",
    "cell_shares",
    "certainty_per_seed",
    "claim_specs",
    "claims_table",
    "evaluate_ulmer_claims",
    "held_out",
    "k_stability",
]

PAPER = "Ulmer & Cinà 2021"
#: (kind, metric) pairs that are identically zero (one sample): no gradient claim for them
DEGENERATE = {
    ("single", "class_variance"),
    ("single", "mutual_information"),
    ("control", "class_variance"),
    ("control", "mutual_information"),
}
#: kinds whose prediction averages K samples / members: their certainty is a test
STOCHASTIC = ("mc_dropout", "bbb", "ensemble")
_LABELS = {
    "single": "single network",
    "mc_dropout": "MC dropout",
    "bbb": "Bayes-by-backprop",
    "ensemble": "deep ensemble",
}
_METRIC_TEXT = {
    "max_prob": "max softmax probability (Lemma 5)",
    "class_variance": "class variance (Lemma 7)",
    "predictive_entropy": "predictive entropy (Lemma 8)",
    "mutual_information": "mutual information (Lemma 9)",
}
_METRICS = tuple(_METRIC_TEXT)
#: what the M rows measure per metric: the gain in certainty far out (> 0: more certain)
_GAIN_TEXT = {
    "max_prob": "the rise of the mean max probability",
    "class_variance": "the fall of the class variance",
    "predictive_entropy": "the fall of the predictive entropy",
    "mutual_information": "the fall of the mutual information",
}
#: Lemma 3's sanity: the logits' log-log growth slope may exceed linear (1) by this much (an
#: affine offset a moves it by about |a| / (b alpha), ~1e-3 at alpha = 1e4); fixed in advance
LINEAR_TOL = 0.1
#: largest float64 error of the softmax note's identities (a few ulps of a probability)
NOTE_TOL = 1e-12


def _effect(spec: dict, key: str) -> float | None:
    """The config's effect size ``claims.<key>`` (a distance from the threshold), None when
    absent (power n/a)."""
    v = spec.get(key)
    return None if v is None else float(v)


def _claim_specs(datasets: list[str], spec: dict) -> list[ClaimSpec]:
    """The claims as data for ``datasets``; ``spec`` holds ``kinds``, ``control`` (activation),
    ``certain_max_prob``, ``grad_ratio``, ``k_margin``, ``confident``."""
    level = float(spec["certain_max_prob"])
    kinds = list(spec["kinds"])
    share_effect = _effect(spec, "effect_share")
    auroc_effect = _effect(spec, "effect_auroc")
    specs = []
    for ds in datasets:
        fid, nid = f"F-{ds}", f"N-{ds}"
        specs.append(
            ClaimSpec(
                fid,
                f"Every model fits the {ds} data (far below its optimal constant solution)",
                "per seed, the worst model's share of its constant solution's loss removed "
                "((OCS loss − final training loss) / OCS loss)",
                FITTED_SHARE,
                ">",
                kind="premise",
            )
        )
        specs.append(
            ClaimSpec(
                nid,
                f"The certainty measurement can fail on {ds}: a control outside the theorem "
                f"({spec['control']} last hidden layer, bounded logits) is not certain far out",
                "per seed, the control's mean max probability at the largest alpha (points x "
                "non-degenerate directions)",
                level,
                "<",
                kind="premise",
            )
        )
        for kind in kinds:
            if kind in STOCHASTIC:
                specs.append(
                    ClaimSpec(
                        f"K-{ds}-{kind}",
                        f"{_LABELS[kind]} on {ds}: K is large enough for the certainty level "
                        "far out (the mean max probability at the largest alpha over the "
                        "non-degenerate directions does not move when K doubles: equivalent to "
                        f"no change within ± {spec['k_margin']:g}; not C/P's share of limiting "
                        "cells, whose K -> 2K change is in the detail)",
                        "per seed, stat(2K) - stat(K) of the mean max probability at the largest "
                        "alpha (points x non-degenerate directions), oriented to its mean's side; "
                        "equivalence test (TOST) at ± k_margin (the binding one-sided test; "
                        "power of the whole TOST at change 0)",
                        float(spec["k_margin"]),
                        "<",
                        kind="premise",
                    )
                )
        for kind in kinds:
            if kind in STOCHASTIC:
                specs.append(
                    ClaimSpec(
                        f"B-{ds}-{kind}",
                        f"The certainty bar {level:g} says more than in-distribution confidence "
                        f"for {_LABELS[kind]} on {ds}: its held-out confidence (alpha = 1) lies "
                        "below the bar (otherwise 'certain far out' at the bar is no more certain "
                        "than the data themselves, and the bar is uninformative)",
                        "per seed, the mean max probability of the averaged prediction on the "
                        "held-out points (alpha = 1 of the scaling curve)",
                        level,
                        "<",
                        kind="premise",
                    )
                )
        for kind in kinds:
            if kind in STOCHASTIC:
                specs.append(
                    ClaimSpec(
                        f"L-{ds}-{kind}",
                        f"{_LABELS[kind]} on {ds}: far out the averaged prediction's max "
                        "probability equals its exact limit, the largest vote share of the "
                        "samples' limiting arg-max read from the logits' slopes (by construction: "
                        "each saturated sample is one-hot)",
                        "mean over direction x seed cells of |mean max probability at the "
                        "largest alpha - its limit| (tolerance k_margin: half the distance from "
                        "the certainty level to 1)",
                        float(spec["k_margin"]),
                        "<",
                        kind="sanity",
                        requires=(fid,),
                    )
                )
        for kind in kinds:
            if kind in STOCHASTIC and "single" in kinds:
                specs.append(
                    ClaimSpec(
                        f"C-{ds}-{kind}",
                        f"{_LABELS[kind]} mitigates the overconfidence on {ds} along some "
                        "directions (Fig. 1, Discussion): far out it stays below certainty on a "
                        "share of directions where a single network stays below on none",
                        "per seed, share of directions (all, degenerate included) whose limiting "
                        f"mean max probability (alpha -> infinity: the vote share) is at most "
                        f"{level:g}, minus the single network's share",
                        0.0,
                        ">",
                        requires=(fid, f"K-{ds}-{kind}"),
                        effect=share_effect,
                        effect_source="power target",
                    )
                )
                specs.append(
                    ClaimSpec(
                        f"P-{ds}-{kind}",
                        f'... but only partially (Fig. 1: "only partially mitigated by ensemble '
                        f'models"): {_LABELS[kind]} still reaches certainty far from the {ds} '
                        "data along a share of directions",
                        "per seed, share of directions (all) whose limiting mean max probability "
                        f"exceeds {level:g}",
                        0.0,
                        ">",
                        requires=(fid, nid, f"K-{ds}-{kind}", f"B-{ds}-{kind}"),
                        effect=share_effect,
                        effect_source="power target",
                    )
                )
                specs.append(
                    ClaimSpec(
                        f"R-{ds}-{kind}",
                        f"... judged against in-distribution confidence in place of the bar: "
                        f"{_LABELS[kind]} is, along a share of directions, at least as certain "
                        f"far from the {ds} data as on the held-out data",
                        "per seed, share of directions (all) whose limiting mean max probability "
                        "is at least the model's own held-out mean max probability (alpha = 1, "
                        "same seed)",
                        0.0,
                        ">",
                        requires=(fid, f"K-{ds}-{kind}"),
                        effect=share_effect,
                        effect_source="power target",
                    )
                )
                if share_effect is not None:
                    specs.append(
                        ClaimSpec(
                            f"T-{ds}-{kind}",
                            f"Theorem 1 as stated for averaged models ('the same network(s) will "
                            f"reach perfect certainty'): {_LABELS[kind]} reaches certainty far "
                            f"from the {ds} data along (nearly) every direction of Assumption 1 "
                            "(the non-degenerate ones), at least its own in-distribution "
                            "certainty",
                            "per seed, share of the non-degenerate directions whose limiting mean "
                            "max probability lies below the model's own held-out mean max "
                            "probability (alpha = 1, same seed): less certain far out than on the "
                            "data; the theorem allows none, the row one direction in ten "
                            "(claims.effect_share)",
                            share_effect,
                            "<",
                            requires=(fid, f"K-{ds}-{kind}"),
                            effect=share_effect,
                            effect_source="power target",
                        )
                    )
        for kind in kinds:
            if kind in STOCHASTIC:
                for metric in _METRICS:
                    specs.append(
                        ClaimSpec(
                            f"M-{ds}-{kind}-{metric}",
                            f"Theorem 1 on the {_METRIC_TEXT[metric]}: {_LABELS[kind]} tends to "
                            f"perfect certainty as the paper's feature of the {ds} data is "
                            "scaled, so far out it is more certain than on the held-out data",
                            f"per seed, {_GAIN_TEXT[metric]} from alpha = 1 to the largest "
                            "alpha along the paper's feature (mean over points); power at the "
                            "gain perfect certainty would give (the held-out distance from it)",
                            0.0,
                            ">",
                            requires=(fid, f"K-{ds}-{kind}"),
                        )
                    )
        if "ensemble" in kinds:
            specs.append(
                ClaimSpec(
                    f"D-{ds}",
                    f"§6, hedged: more in-domain data 'may' worsen OOD detection on {ds} "
                    "(it 'may' decrease the ensemble's diversification far out); tested in its "
                    "directional reading, so a 'does not hold' refutes that reading, not the "
                    "paper's 'may'",
                    "per seed, AUROC of the deep ensemble's predictive entropy (held-out points "
                    "against the same points at the largest alpha, every direction) trained on "
                    "all training rows minus that trained on a stratified datasize.fraction",
                    0.0,
                    "<",
                    requires=(fid,),
                    effect=auroc_effect,
                    effect_source="power target",
                )
            )
        if "single" in kinds:
            specs.append(
                ClaimSpec(
                    f"S-{ds}-single",
                    f"A single ReLU network is certain far from the {ds} data (by construction: "
                    "its logits grow linearly along a ray)",
                    "mean over seeds of the mean max probability at the largest alpha (points x "
                    "non-degenerate directions)",
                    level,
                    ">",
                    kind="sanity",
                    requires=(fid,),
                )
            )
        for metric in _METRICS:
            specs.append(
                ClaimSpec(
                    f"G-{ds}-{metric}",
                    f"The input-gradient norm of the {_METRIC_TEXT[metric]} falls towards zero "
                    f"as a feature of the {ds} data is scaled (by construction once every sample "
                    "saturates)",
                    "largest ratio over the ReLU models of the mean gradient norm at the largest "
                    "alpha to that at alpha = 1",
                    float(spec["grad_ratio"]),
                    "<",
                    kind="sanity",
                    requires=(fid,),
                )
            )
        specs.append(
            ClaimSpec(
                f"lemma3-{ds}",
                "Lemma 3's network side: a ReLU network's logits grow at most linearly along the "
                f"scaled feature of the {ds} data (bounded logit gradient), so the inverse "
                "softmax derivative, exponential in the logits, outgrows it (by construction: "
                "piecewise linear)",
                "largest over the ReLU models and seeds of the log-log slope of the largest "
                "|logit| between the two largest alphas (1: linear growth)",
                1.0 + LINEAR_TOL,
                "<",
                kind="sanity",
                requires=(fid,),
            )
        )
    for cid, what in (
        ("note-P1", "Property 1, shift invariance: S(z + c1) = S(z)"),
        ("note-P2", "Property 2, the inverse: z = log S(z) + c1"),
        (
            "note-P3",
            "Property 3, superposition and scaling: S(a1 z + a2 z' + c1) ∝ S(z)^a1 ⊙ S(z')^a2",
        ),
        (
            "note-logistic",
            "two outputs: the softmax's first output is the logistic 1 / (1 + exp(z2 - z1))",
        ),
    ):
        specs.append(
            ClaimSpec(
                cid,
                f"Softmax note, {what} (an identity: true by construction)",
                "largest entry-wise error in float64 with the stable softmax over the note's "
                "vectors",
                NOTE_TOL,
                "<",
                kind="sanity",
            )
        )
    specs.append(
        ClaimSpec(
            "lemma1",
            "Lemma 1 (p strictly monotonic => the logits f too) holds for logit differences, not "
            "for the logits: the probabilities fix the logits only up to a shift g(x)1 "
            "(Property 1), so f = (|x|, |x| - x) has p_1 = sigmoid(x) strictly increasing while "
            "f_1 = |x| is not monotonic; the row checks the identity the counterexample rests on",
            "largest entry-wise error of Property 1 (shift invariance) in float64 over the note's "
            "vectors; the counterexample's probabilities and logit slopes in the detail",
            NOTE_TOL,
            "<",
            kind="sanity",
        )
    )
    return specs


def certainty_per_seed(
    directions: pd.DataFrame,
    dataset: str,
    kind: str,
    role: str = "K",
    column: str = "mean_max_prob",
) -> pd.Series:
    """Per seed: ``column`` averaged over the non-degenerate directions (each already a mean
    over the scaled points) of model ``kind`` at sample count ``role`` (``"K"`` or ``"2K"``)."""
    sel = rows(directions, dataset=dataset, kind=kind, k_role=role)
    sel = sel[~sel["degenerate"].astype(bool)]
    return sel.groupby("seed")[column].mean().astype(float).sort_index()


def k_stability(
    directions: pd.DataFrame, dataset: str, kind: str, k_margin: float
) -> tuple[pd.Series, pd.Series, pd.Series, float]:
    """``(stat(K), stat(2K), oriented change per seed, margin)`` of :func:`certainty_per_seed`:
    the change ``stat(2K) - stat(K)`` times the sign of its mean (the side the binding half of
    the equivalence test looks at) and the fixed margin ``k_margin``."""
    a = certainty_per_seed(directions, dataset, kind, "K")
    b = certainty_per_seed(directions, dataset, kind, "2K")
    seeds = sorted(set(a.index) & set(b.index))
    a, b = a.loc[seeds], b.loc[seeds]
    change = b - a
    sign = 1.0 if float(change.mean()) >= 0 else -1.0
    return a, b, sign * change, float(k_margin)


def _k(directions: pd.DataFrame, ds: str, kind: str, role: str) -> int:
    sel = rows(directions, dataset=ds, kind=kind, k_role=role)
    return int(sel["k"].iloc[0]) if len(sel) else 0


def _per_seed(series: pd.Series, digits: int = 3) -> str:
    return ", ".join(f"{s}: {v:.{digits}f}" for s, v in series.items())


def _fine(values: pd.Series) -> str:
    """Mean ± sd over seeds with four significant digits (confidences near 1, metrics near 0)."""
    if not len(values):
        return "n/a"
    sd = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    return (
        f"{float(values.mean()):.4g} ± {sd:.2g}"
        if math.isfinite(sd)
        else f"{float(values.mean()):.4g}"
    )


def _fit_premise(fit: pd.DataFrame, ds: str) -> Measurement:
    sel = fit[fit["dataset"] == ds]
    if sel.empty:
        raise ValueError(f"The fit frame has no rows for dataset {ds!r}.")
    ratio = sel["train_loss"] / sel["ocs_loss"]
    worst = sel.loc[ratio.groupby(sel["seed"]).idxmax()].set_index("seed").sort_index()
    m = fitted(worst["train_loss"], worst["ocs_loss"], what="worst model per seed")
    chance = float(sel["chance"].iloc[0])
    acc = "; ".join(
        f"{model} {fmt_mean_std(g.set_index('seed')['accuracy'] * 100, ' %')}"
        for model, g in sel.groupby("model", sort=False)
    )
    detail = (
        f"{m.detail}. Held-out accuracy: {acc}; chance (majority class) {chance * 100:.1f} %; "
        f"scaled feature {sel['feature'].iloc[0]!r} (|Spearman rho| with the label "
        f"{float(sel['monotonicity'].iloc[0]):.2f})"
    )
    return Measurement(m.value, detail, samples=m.samples)


def _directions_note(directions: pd.DataFrame, ds: str) -> str:
    d = directions[directions["dataset"] == ds].drop_duplicates("direction")
    used = d[~d["degenerate"].astype(bool)]
    left = d[d["degenerate"].astype(bool)]["direction"].tolist()
    note = (
        f"{len(used)} non-degenerate directions ({(used['direction_type'] == 'axis').sum()} axes, "
        f"{(used['direction_type'] == 'random').sum()} random)"
    )
    return note + (f"; degenerate, left out: {', '.join(left)}" if left else "")


def _ratio(end: float, start: float) -> float:
    return end / start if start > 0 else math.nan


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
    datasets = list(dict.fromkeys(fit["dataset"]))
    specs = claim_specs(datasets, spec)
    level = float(spec["certain_max_prob"])
    measured: dict[str, Measurement] = {}
    for ds in datasets:
        measured[f"F-{ds}"] = _fit_premise(fit, ds)
        note = _directions_note(directions, ds)
        ctrl = certainty_per_seed(directions, ds, "control")
        vote = certainty_per_seed(directions, ds, "control", column="vote_share")
        measured[f"N-{ds}"] = Measurement(
            float(ctrl.mean()) if len(ctrl) else math.nan,
            f"control: mean max probability {fmt_mean_std(ctrl)} over {len(ctrl)} seeds "
            f"(per seed {_per_seed(ctrl)}), vote share {fmt_mean_std(vote)}; {note}",
            samples=tuple(ctrl.to_numpy()),
        )
        for kind in spec["kinds"]:
            stat = certainty_per_seed(directions, ds, kind)
            if kind in STOCHASTIC:
                a, b, oriented, margin = k_stability(directions, ds, kind, float(spec["k_margin"]))
                k1, k2 = _k(directions, ds, kind, "K"), _k(directions, ds, kind, "2K")
                sd = float(oriented.std(ddof=1)) if len(oriented) > 1 else math.nan
                power = (
                    tost_power(margin, sd, len(oriented), float(spec["alpha"]))
                    if len(oriented) > 1
                    else math.nan
                )
                measured[f"K-{ds}-{kind}"] = Measurement(
                    float(oriented.mean()) if len(oriented) else math.nan,
                    f"mean max probability at the largest alpha, non-degenerate directions: "
                    f"K = {k1}: {fmt_mean_std(a)}; 2K = {k2}: {fmt_mean_std(b)}; change per seed "
                    f"{_per_seed(b - a)}; equivalence margin ± {margin:g} (config k_margin); "
                    f"K fixed in advance: a vote share's binomial standard error "
                    f"1/(2 sqrt(K)) = {0.5 / math.sqrt(max(k1, 1)):.3f} (the principle asks "
                    f"<= {float(spec.get('vote_se', math.nan)):g})"
                    + _borderline(oriented, b - a, margin, power, float(spec["alpha"]))
                    + _k_share_text(directions, ds, kind, level),
                    samples=tuple(oriented.to_numpy()),
                    power=power,
                )
                measured.update(_averaged_rows(directions, ds, kind, k1, level))
                measured.update(_stated_rows(directions, scaling, ds, kind, spec))
            elif kind == "single":
                below = int((stat <= level).sum())
                held = held_out(scaling, ds, "single")
                measured[f"S-{ds}-single"] = Measurement(
                    float(stat.mean()) if len(stat) else math.nan,
                    f"single network: mean max probability {fmt_mean_std(stat)} (per seed "
                    f"{_per_seed(stat)}; {below} seed(s) at or below {level:g}); on the held-out "
                    f"data (alpha = 1) already {_fine(held)} ({int((held > level).sum())} "
                    f"of {len(held)} seeds above the bar {level:g}); {note}",
                    samples=tuple(stat.to_numpy()),
                )
        if datasize is not None and f"D-{ds}" in {c.id for c in specs}:
            measured[f"D-{ds}"] = _datasize_row(datasize, ds)
        sc = rows(scaling, dataset=ds)
        if sc.empty:
            raise ValueError(f"The scaling frame has no rows for dataset {ds!r}.")
        paper = _paper_direction(directions, ds)
        a_min, a_max = float(sc["alpha"].min()), float(sc["alpha"].max())
        start, end = sc[sc["alpha"] == a_min], sc[sc["alpha"] == a_max]
        relu_kinds = [k for k in dict.fromkeys(sc["kind"]) if k != "control"]
        for metric in _METRICS:
            ratios, parts = [], []
            for kind in [*relu_kinds, "control"]:
                if (kind, metric) in DEGENERATE or kind not in set(sc["kind"]):
                    continue
                e = end[(end["kind"] == kind) & (end["metric"] == metric)]["grad_norm"]
                s = start[(start["kind"] == kind) & (start["metric"] == metric)]["grad_norm"]
                if e.empty or s.empty:
                    continue
                r = _ratio(float(e.mean()), float(s.mean()))
                zeros = int((e == 0).sum())
                label = _LABELS.get(kind, "control (not counted)")
                parts.append(
                    f"{label}: {float(s.mean()):.3g} -> {float(e.mean()):.3g} (ratio {r:.3g}; "
                    f"{zeros} of {e.size} seeds exactly 0)"
                )
                if kind != "control":
                    ratios.append(r)
            value = (
                math.nan
                if not ratios or any(math.isnan(r) for r in ratios)
                else float(np.max(ratios))
            )
            where = f"alpha {a_min:g} -> {a_max:g} along the paper's feature"
            if paper is not None and paper[1]:
                # Assumption 1 fails along a direction parallel to a class boundary
                value = math.nan
                where += f" {paper[0]!r}, which is degenerate (|cos| {paper[2]:.3f}): not counted"
            measured[f"G-{ds}-{metric}"] = Measurement(
                value, f"{where}, mean over points and seeds: " + "; ".join(parts)
            )
        measured[f"lemma3-{ds}"] = _lemma3_row(sc, relu_kinds)
    if checks is not None:
        measured.update(_note_rows(checks))
        measured["lemma1"] = _lemma1_row(checks)
    return evaluate_claims(PAPER, specs, measured, alpha=float(spec["alpha"]), headline=HEADLINE)


def held_out(
    scaling: pd.DataFrame, ds: str, kind: str, metric: str = "max_prob", *, far: bool = False
) -> pd.Series:
    """Per seed, ``metric`` (mean over the scaled points) of model ``kind`` on the held-out
    points themselves (the scaling curve's alpha = 1) or, with ``far``, at its largest alpha
    along the paper's feature."""

    def compute() -> pd.Series:
        sel = rows(scaling, dataset=ds, kind=kind, metric=metric)
        if sel.empty:
            return pd.Series(dtype=float)
        at = sel["alpha"].max() if far else sel["alpha"].min()
        return sel[sel["alpha"] == at].groupby("seed")["value"].mean().astype(float).sort_index()

    return per_frame(scaling, ("held_out", ds, kind, metric, far), compute).copy()


def _relative_cells(
    directions: pd.DataFrame, scaling: pd.DataFrame, ds: str, kind: str
) -> pd.DataFrame:
    """The direction x seed cells of ``kind`` at K with its held-out confidence (``held``)."""
    sel = rows(directions, dataset=ds, kind=kind, k_role="K").copy()
    sel["held"] = sel["seed"].map(held_out(scaling, ds, kind))
    return sel.dropna(subset=["held", "limit_max_prob"])


def _stated_rows(
    directions: pd.DataFrame, scaling: pd.DataFrame, ds: str, kind: str, spec: dict
) -> dict[str, Measurement]:
    """Theorem 1 as stated and the certainty bar against in-distribution confidence for an
    averaged model: ``B`` (the bar above its held-out confidence), ``R`` (at least as certain
    far out as on the data along some directions), ``T`` (along nearly every non-degenerate
    direction) and ``M`` (each of the four metrics along the paper's feature)."""
    level, alpha = float(spec["certain_max_prob"]), float(spec["alpha"])
    label = _LABELS[kind]
    out: dict[str, Measurement] = {}
    held = held_out(scaling, ds, kind)
    single = held_out(scaling, ds, "single")
    single_text = (
        f"; single network {_fine(single)} ({int((single >= level).sum())} of "
        f"{len(single)} seeds at or above the bar)"
        if len(single)
        else ""
    )
    out[f"B-{ds}-{kind}"] = Measurement(
        float(held.mean()) if len(held) else math.nan,
        f"{label}: held-out mean max probability {_fine(held)} (per seed "
        f"{_per_seed(held, 4)}; {int((held >= level).sum())} of {len(held)} seeds at or above the "
        f"bar {level:g}){single_text}",
        samples=tuple(held.to_numpy()),
    )
    cells = _relative_cells(directions, scaling, ds, kind)
    if "limit_max_prob" not in directions or cells.empty:
        for cid in (f"R-{ds}-{kind}", f"T-{ds}-{kind}"):
            out[cid] = Measurement(math.nan, "no direction cells with a held-out confidence")
    else:
        at_least = (cells["limit_max_prob"] >= cells["held"]).groupby(cells["seed"]).mean()
        n_dirs = cells["direction"].nunique()
        out[f"R-{ds}-{kind}"] = Measurement(
            float(at_least.mean()),
            f"{label}, {n_dirs} directions (every one): share whose limit is at least the "
            f"held-out confidence, per seed {_per_seed(at_least)}; held-out confidence per seed "
            f"{_per_seed(held)}; the limits {_distribution(cells['limit_max_prob'])}",
            samples=tuple(at_least.astype(float).to_numpy()),
        )
        used = cells[~cells["degenerate"].astype(bool)]
        if spec.get("effect_share") is not None:
            if used.empty:
                out[f"T-{ds}-{kind}"] = Measurement(math.nan, "no non-degenerate direction")
            else:
                less = (used["limit_max_prob"] < used["held"]).groupby(used["seed"]).mean()
                bar = (used["limit_max_prob"] <= level).groupby(used["seed"]).mean()
                perfect = (used["limit_max_prob"] < 1.0).groupby(used["seed"]).mean()
                every = (cells["limit_max_prob"] < cells["held"]).groupby(cells["seed"]).mean()
                below = used.loc[used["limit_max_prob"] < used["held"], "limit_max_prob"]
                where = (
                    f"; those limits range {float(below.min()):.3f}-{float(below.max()):.3f}"
                    if len(below)
                    else ""
                )
                out[f"T-{ds}-{kind}"] = Measurement(
                    float(less.mean()),
                    f"{label}, {used['direction'].nunique()} non-degenerate directions: share "
                    f"less certain in the limit than on the held-out data, per seed "
                    f"{_per_seed(less)}{where}; held-out confidence per seed {_per_seed(held)}; "
                    f"the same share at the fixed bar (limit <= {level:g}) {_per_seed(bar)}, "
                    f"below perfect certainty (limit < 1: the samples disagree) "
                    f"{_per_seed(perfect)}; counting the degenerate directions too "
                    f"{_per_seed(every)}",
                    samples=tuple(less.astype(float).to_numpy()),
                )
    for metric in _METRICS:
        start = held_out(scaling, ds, kind, metric)
        end = held_out(scaling, ds, kind, metric, far=True)
        seeds = sorted(set(start.index) & set(end.index))
        start, end = start.loc[seeds], end.loc[seeds]
        sign = 1.0 if metric == "max_prob" else -1.0
        gain = sign * (end - start)
        perfect = 1.0 if metric == "max_prob" else 0.0
        effect = float((sign * (perfect - start)).mean()) if len(start) else math.nan
        sd = float(gain.std(ddof=1)) if len(gain) > 1 else math.nan
        power = (
            t_power(effect, sd, len(gain), alpha)
            if len(gain) > 1 and math.isfinite(effect) and effect > 0
            else math.nan
        )
        extra = ""
        if (("single", metric) not in DEGENERATE) and len(held_out(scaling, ds, "single", metric)):
            s0 = held_out(scaling, ds, "single", metric)
            s1 = held_out(scaling, ds, "single", metric, far=True)
            extra = f"; single network {_fine(s0)} -> {_fine(s1)}"
        out[f"M-{ds}-{kind}-{metric}"] = Measurement(
            float(gain.mean()) if len(gain) else math.nan,
            f"{label}, {_METRIC_TEXT[metric]}: held-out {_fine(start)} -> largest alpha "
            f"{_fine(end)} (perfect certainty: {perfect:g}); gain per seed "
            f"{_per_seed(gain, 4)}; power at the gain perfect certainty would give "
            f"({effect:.3g}: the held-out distance from it){extra}",
            samples=tuple(gain.to_numpy()),
            power=power,
        )
    return out


def _lemma3_row(sc: pd.DataFrame, relu_kinds: list[str]) -> Measurement:
    """Lemma 3's network side: the log-log slope of the largest |logit| between the two
    largest alphas, per ReLU model and seed (the control's in the detail)."""
    if "max_abs_logit" not in sc:
        return Measurement(math.nan, "the scaling frame has no max_abs_logit column")
    alphas = sorted(set(sc["alpha"]))
    if len(alphas) < 2:
        return Measurement(math.nan, "fewer than two alphas")
    a1, a2 = alphas[-2], alphas[-1]
    per = sc[sc["alpha"].isin([a1, a2])].groupby(["kind", "seed", "alpha"])["max_abs_logit"].max()
    slopes, parts = [], []
    for kind in [*relu_kinds, "control"]:
        if kind not in per.index.get_level_values(0):
            continue
        k = per.loc[kind].unstack("alpha")
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.log(k[a2] / k[a1]) / math.log(a2 / a1)
        label = _LABELS.get(kind, "control (not counted)")
        parts.append(
            f"{label}: {float(slope.mean()):.4f} (largest |logit| {float(k[a2].mean()):.3g} at "
            f"alpha {a2:g})"
        )
        if kind != "control":
            slopes.extend(slope.to_numpy(dtype=float).tolist())
    value = float(np.max(slopes)) if slopes and all(math.isfinite(x) for x in slopes) else math.nan
    return Measurement(
        value,
        f"log-log slope of the largest |logit| from alpha {a1:.4g} to {a2:.4g}, mean over seeds: "
        + "; ".join(parts)
        + "; the inverse softmax derivative 1 / (p (1 - p)) grows like exp of the logit gap "
        "(softmax note, Property 5), faster than any linear growth",
    )


def _lemma1_row(note: pd.DataFrame) -> Measurement:
    """Lemma 1: the error of Property 1 (the identity the counterexample rests on), and the
    counterexample itself in the detail."""
    from softmax_ood.softmax import softmax

    sel = note[note["check"].astype(str).str.startswith("Property 1")]
    value = float(sel["abs_error"].max()) if len(sel) else math.nan
    x = np.linspace(-3.0, 3.0, 13)
    f = np.stack([np.abs(x), np.abs(x) - x], axis=1)
    p1 = np.asarray(softmax(f))[:, 0]
    sigmoid = 1.0 / (1.0 + np.exp(-x))
    slope = np.diff(f[:, 0])
    return Measurement(
        value,
        f"Property 1's largest error {value:.2g}; the counterexample f = (|x|, |x| - x) on "
        f"x in [-3, 3]: p_1 rises at every step ({int((np.diff(p1) > 0).sum())} of "
        f"{len(x) - 1}), equal to sigmoid(x) within {float(np.abs(p1 - sigmoid).max()):.2g}; "
        f"f_1 falls on {int((slope < 0).sum())} steps and rises on {int((slope > 0).sum())}: "
        "not monotonic, so Lemma 1 as stated does not follow (its proof takes the softmax as "
        "increasing in each logit alone); f_1 - f_2 = x is monotonic",
    )


def _paper_direction(directions: pd.DataFrame, ds: str) -> tuple[str, bool, float] | None:
    """``(name, degenerate, min |cos|)`` of the direction the scaling frame scales along."""
    if "paper_direction" not in directions:
        return None
    d = directions[(directions["dataset"] == ds) & directions["paper_direction"].astype(bool)]
    if d.empty:
        return None
    r = d.iloc[0]
    return str(r["direction"]), bool(r["degenerate"]), float(r["min_cos"])


def cell_shares(
    directions: pd.DataFrame,
    ds: str,
    kind: str,
    level: float,
    column: str = "limit_max_prob",
    role: str = "K",
    degenerate: bool = True,
) -> tuple[pd.Series, pd.Series]:
    """Per seed, the share of directions (every direction, degenerate ones included; only the
    non-degenerate ones with ``degenerate=False``) whose ``column`` (default: the alpha ->
    infinity limit of the mean max probability; Theorem 1 is a statement about the limit) at
    sample count ``role`` (``"K"`` or ``"2K"``) is at most ``level`` (below certainty), and the
    share above it."""
    sel = rows(directions, dataset=ds, kind=kind, k_role=role)
    if not degenerate:
        sel = sel[~sel["degenerate"].astype(bool)]
    below = (sel[column] <= level).groupby(sel["seed"]).mean().astype(float)
    return below.sort_index(), (1.0 - below).sort_index()


def _distribution(values: pd.Series) -> str:
    q = values.quantile([0.0, 0.25, 0.5, 0.75, 1.0]).to_numpy()
    return (
        f"min {q[0]:.3f}, quartiles {q[1]:.3f} / {q[2]:.3f} / {q[3]:.3f}, max {q[4]:.3f} "
        f"over {len(values)} direction x seed cells"
    )


def _averaged_rows(
    directions: pd.DataFrame, ds: str, kind: str, k: int, level: float
) -> dict[str, Measurement]:
    """The rows of an averaged model: the sanity of its exact limit (``L``), the partial
    mitigation (``C``: below certainty along some directions where the single network is not;
    ``P``: certain along others)."""
    sel = rows(directions, dataset=ds, kind=kind, k_role="K")
    out: dict[str, Measurement] = {}
    if "limit_max_prob" in sel:
        cell = (sel["mean_max_prob"] - sel["limit_max_prob"]).abs()
        flips = int(((sel["mean_max_prob"] <= level) != (sel["limit_max_prob"] <= level)).sum())
        out[f"L-{ds}-{kind}"] = Measurement(
            float(cell.mean()) if len(cell) else math.nan,
            f"{_LABELS[kind]} (K = {k}): measured mean max probability "
            f"{_distribution(sel['mean_max_prob'])}; its limit from the slopes "
            f"{_distribution(sel['limit_max_prob'])}; |measured - limit| per cell: mean "
            f"{float(cell.mean()):.2g}, largest {float(cell.max()):.2g} (of a single point "
            f"{float(sel['max_prob_gap'].max()):.2g}: samples not yet saturated at this alpha); "
            f"{flips} cell(s) on the other side of {level:g} at this alpha than in the limit",
        )
    below, certain = cell_shares(directions, ds, kind, level)
    single_below, _ = cell_shares(directions, ds, "single", level)
    seeds = sorted(set(below.index) & set(single_below.index))
    diff = below.loc[seeds] - single_below.loc[seeds]
    n_dirs = sel["direction"].nunique()
    n_deg = sel.loc[sel["degenerate"].astype(bool), "direction"].nunique()
    dist = _distribution(sel["limit_max_prob"])
    alt = _share_variants(directions, ds, kind, level, n_deg)
    out[f"C-{ds}-{kind}"] = Measurement(
        float(diff.mean()) if len(diff) else math.nan,
        f"{_LABELS[kind]} (K = {k}), {n_dirs} directions ({n_deg} degenerate, counted): share "
        f"below certainty per seed {_per_seed(below)}; single network {_per_seed(single_below)}; "
        f"limit of the mean max probability {dist}" + alt["C"],
        samples=tuple(diff.to_numpy()),
    )
    out[f"P-{ds}-{kind}"] = Measurement(
        float(certain.mean()) if len(certain) else math.nan,
        f"{_LABELS[kind]} (K = {k}), {n_dirs} directions ({n_deg} degenerate, counted): share "
        f"certain (> {level:g}) per seed {_per_seed(certain)}; limit of the mean max "
        f"probability {dist}" + alt["P"],
        samples=tuple(certain.to_numpy()),
    )
    return out


def _mean_p(samples: pd.Series, direction: str = ">") -> str:
    from softmax_ood.analysis.claims import one_sided_t

    x = samples.to_numpy(dtype=float)
    p = one_sided_t(x, 0.0, direction) if len(x) > 1 else math.nan
    return f"{float(x.mean()):.3f}" + (f" (p {p:.2g})" if math.isfinite(p) else "")


def _share_variants(
    directions: pd.DataFrame, ds: str, kind: str, level: float, n_deg: int
) -> dict[str, str]:
    """The C and P statistics two other ways, for the detail: without the degenerate
    directions, and at 2K samples / members (the K -> 2K robustness C and P rest on)."""
    texts = {"C": "", "P": ""}

    def both(**kw):
        below, certain = cell_shares(directions, ds, kind, level, **kw)
        single, _ = cell_shares(
            directions, ds, "single", level, degenerate=kw.get("degenerate", True)
        )
        seeds = sorted(set(below.index) & set(single.index))
        return below.loc[seeds] - single.loc[seeds], certain

    if n_deg:
        c, p = both(degenerate=False)
        if len(c):
            texts["C"] += f"; without the {n_deg} degenerate direction(s): {_mean_p(c)}"
            texts["P"] += f"; without the {n_deg} degenerate direction(s): {_mean_p(p)}"
    has_2k = len(rows(directions, dataset=ds, kind=kind, k_role="2K")) > 0
    if has_2k:
        c, p = both(role="2K")
        if len(c):
            texts["C"] += f"; at 2K: {_mean_p(c)}"
            texts["P"] += f"; at 2K: {_mean_p(p)}"
    return texts


def _k_share_text(directions: pd.DataFrame, ds: str, kind: str, level: float) -> str:
    """What the K premise does not test, for its detail: C/P's share of direction cells whose
    limiting mean max probability is at most ``level`` at K and 2K, and the cells that cross
    the level when K doubles."""
    sel = rows(directions, dataset=ds, kind=kind)
    if "limit_max_prob" not in sel or not (sel["k_role"] == "2K").any():
        return ""
    piv = sel.pivot_table(index=["seed", "direction"], columns="k_role", values="limit_max_prob")
    if not {"K", "2K"} <= set(piv.columns):
        return ""
    piv = piv.dropna()
    a, b = piv["K"] <= level, piv["2K"] <= level
    share_k, share_2k = a.groupby(level=0).mean(), b.groupby(level=0).mean()
    return (
        f"; C/P's statistic (share of direction cells, every direction, whose limiting mean max "
        f"probability is <= {level:g}) at K {_per_seed(share_k)}, at 2K {_per_seed(share_2k)}: "
        f"{int((a != b).sum())} of {len(piv)} cells cross the level when K doubles (not tested "
        "here; the C and P rows give their statistic at 2K)"
    )


def _borderline(
    oriented: pd.Series, change: pd.Series, margin: float, power: float, alpha: float
) -> str:
    """A K premise near its bar: the TOST p close to alpha or power below the target, or a
    seed's change beyond the margin though the mean is inside."""
    from softmax_ood.analysis.claims import POWER_TARGET, one_sided_t

    if len(oriented) < 2:
        return ""
    p = one_sided_t(oriented.to_numpy(dtype=float), margin, "<")
    worst = float(change.abs().max())
    reasons = []
    if math.isfinite(power) and power < POWER_TARGET:
        reasons.append(f"power {power:.2f} below {POWER_TARGET:g}")
    if worst > margin:
        reasons.append(f"the largest per-seed change {worst:.4f} exceeds the margin {margin:g}")
    if not reasons or not p < alpha:
        return ""
    return (
        f"; borderline: the mean change is inside the margin (p {p:.2g}) but "
        + " and ".join(reasons)
        + ", so K's adequacy rests on the mean over seeds"
    )


def _datasize_row(datasize: pd.DataFrame, ds: str) -> Measurement:
    d = datasize[datasize["dataset"] == ds]
    if d.empty:
        return Measurement(math.nan, "no data-size rows")
    full = d[d["fraction"] == 1.0].set_index("seed").sort_index()
    small = d[d["fraction"] < 1.0].set_index("seed").sort_index()
    seeds = sorted(set(full.index) & set(small.index))
    full, small = full.loc[seeds], small.loc[seeds]
    diff = full["auroc"] - small["auroc"]
    frac = float(small["fraction"].iloc[0]) if len(small) else math.nan
    return Measurement(
        float(diff.mean()) if len(diff) else math.nan,
        f"deep ensemble (K = {int(full['k'].iloc[0]) if len(full) else 0}): AUROC with all "
        f"{int(full['n_train'].iloc[0]) if len(full) else 0} training rows "
        f"{fmt_mean_std(full['auroc'])}, with {frac:g} of them "
        f"({int(small['n_train'].iloc[0]) if len(small) else 0}) {fmt_mean_std(small['auroc'])}; "
        f"far-away mutual information (diversification) {fmt_mean_std(full['far_mutual_information'])} "
        f"against {fmt_mean_std(small['far_mutual_information'])}; change per seed {_per_seed(diff)} "
        f"({int((diff < 0).sum())} of {len(diff)} seeds below 0, {int((diff == 0).sum())} at 0)",
        samples=tuple(diff.to_numpy()),
    )


def _note_rows(note: pd.DataFrame) -> dict[str, Measurement]:
    from .softmax_note import PROPERTIES

    out = {}
    for prefix, cid in PROPERTIES.items():
        sel = note[note["check"].astype(str).str.startswith(prefix)]
        value = float(sel["abs_error"].max()) if len(sel) else math.nan
        out[cid] = Measurement(
            value,
            "; ".join(f"{r['vector']}: {r['abs_error']:.2g}" for _, r in sel.iterrows())
            + (f" ({sel['check'].iloc[0]})" if len(sel) else ""),
        )
    return out


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


def claim_specs(datasets: list[str], spec: dict) -> list[ClaimSpec]:
    """:func:`_claim_specs` with what decided each row's settings and what confirms it
    (issue 25): K, the certainty level and the data fraction are fixed in advance."""
    from ...analysis.selection import annotate, seeds_text

    seeds = spec.get("seeds")
    confirmation = (
        f"{seeds_text(seeds)} x every direction" if seeds else "every seed x every direction"
    )
    selection = {
        "note-*": "fixed in advance: the note's vectors and scales",
        "*": "fixed in advance: K from the vote share's binomial standard error <= "
        "claims.vote_se (K = 100), certainty level and margins in the config, the data "
        "fraction 1/4; nothing scanned on these seeds",
    }
    return annotate(_claim_specs(datasets, spec), selection, confirmation)
