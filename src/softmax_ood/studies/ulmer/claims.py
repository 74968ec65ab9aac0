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
* ``K-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble) — ``K`` is large enough: the
  per-seed change ``stat(2K) - stat(K)`` is equivalent to zero within ``± k_margin``, a margin
  fixed in the config before any run (half the distance from ``certain_max_prob`` to 1, so the
  change cannot flip a certainty verdict by itself). Equivalence test (TOST) on the paired
  changes: the engine's one-sided t-test of the changes oriented to their mean's side against
  ``k_margin`` is the binding half; its power is the whole TOST's
  (:func:`softmax_ood.analysis.claims.tost_power`) at change 0. (Not the seed spread of the same
  samples: a margin estimated from the data it judges is circular.)

Claims (tests of Theorem 1's certainty statement)

* ``C-<ds>-<kind>`` (MC dropout, Bayes-by-backprop, ensemble) — far from the data the averaged
  prediction is certain: per seed, the mean max probability at the largest alpha over the scaled
  points and every non-degenerate direction (all axes and random directions; degenerate ones,
  parallel to a class boundary, are labelled in the tables and left out) exceeds
  ``certain_max_prob``; one-sided t-test over seeds, power to detect the theorem's limit 1.

Sanity rows (true by construction, never counted as support)

* ``S-<ds>-single`` — a single ReLU network is certain far from the data: along a ray its logits
  are eventually affine in alpha, so its softmax saturates (unless two top logits have equal
  slopes: the degenerate directions, left out).
* ``G-<ds>-<metric>`` — the metric's input-gradient norm falls below ``grad_ratio`` times its
  alpha = 1 value along the paper's feature (Lemmas 5, 7, 8, 9; largest ratio over the ReLU
  models): once every sample saturates its softmax is flat, so this holds by construction (many
  ratios underflow to exactly 0). The control's ratio is in the detail: its gradients vanish too,
  without certainty.
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
    tost_power,
)
from softmax_ood.analysis.premises import FITTED_SHARE, fitted
from softmax_ood.analysis.seeds import require_columns

__all__ = [
    "PAPER",
    "DEGENERATE",
    "STOCHASTIC",
    "certainty_per_seed",
    "k_stability",
    "ulmer_claim_specs",
    "evaluate_ulmer_claims",
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


def ulmer_claim_specs(datasets: list[str], spec: dict) -> list[ClaimSpec]:
    """The claims as data for ``datasets``; ``spec`` holds ``kinds``, ``control`` (activation),
    ``certain_max_prob``, ``grad_ratio``, ``k_margin``, ``confident``."""
    level = float(spec["certain_max_prob"])
    kinds = list(spec["kinds"])
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
                        f"{_LABELS[kind]} on {ds}: K is large enough (the certainty statistic "
                        "does not move when K doubles: equivalent to no change within "
                        f"± {spec['k_margin']:g})",
                        "per seed, stat(2K) - stat(K), oriented to its mean's side; equivalence "
                        "test (TOST) at ± k_margin (the binding one-sided test; power of the "
                        "whole TOST at change 0)",
                        float(spec["k_margin"]),
                        "<",
                        kind="premise",
                    )
                )
        for kind in kinds:
            if kind in STOCHASTIC:
                specs.append(
                    ClaimSpec(
                        f"C-{ds}-{kind}",
                        f"{_LABELS[kind]}: far from the {ds} data the averaged prediction is "
                        "certain (Theorem 1's certainty statement; its lemmas prove only that "
                        "the gradients vanish)",
                        "per seed, mean max probability at the largest alpha (points x "
                        "non-degenerate directions)",
                        level,
                        ">",
                        requires=(fid, nid, f"K-{ds}-{kind}"),
                        effect=1.0 - level,
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
    sel = directions[
        (directions["dataset"] == dataset)
        & (directions["kind"] == kind)
        & (directions["k_role"] == role)
        & ~directions["degenerate"].astype(bool)
    ]
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
    sel = directions[
        (directions["dataset"] == ds)
        & (directions["kind"] == kind)
        & (directions["k_role"] == role)
    ]
    return int(sel["k"].iloc[0]) if len(sel) else 0


def _per_seed(series: pd.Series) -> str:
    return ", ".join(f"{s}: {v:.3f}" for s, v in series.items())


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
    fit: pd.DataFrame, scaling: pd.DataFrame, directions: pd.DataFrame, spec: dict
) -> pd.DataFrame:
    """The claims table (premises first) from the per-seed ``fit``, ``scaling`` (the alpha curve
    along the paper's feature) and ``directions`` (certainty at the largest alpha per direction,
    at K and 2K) frames of every dataset.

    :param spec: :func:`softmax_ood.studies.ulmer.study.claims_spec`: ``kinds``, ``control``,
        ``certain_max_prob``, ``grad_ratio``, ``k_margin``, ``alpha``, ``confident``.
    """
    require_columns(
        fit,
        ["dataset", "model", "kind", "seed", "accuracy", "chance", "train_loss", "ocs_loss"],
        "fit",
    )
    require_columns(
        scaling, ["dataset", "model", "kind", "seed", "alpha", "metric", "grad_norm"], "scaling"
    )
    require_columns(
        directions,
        ["dataset", "kind", "seed", "direction", "degenerate", "k_role", "k", "mean_max_prob"],
        "directions",
    )
    datasets = list(dict.fromkeys(fit["dataset"]))
    specs = ulmer_claim_specs(datasets, spec)
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
                measured[f"K-{ds}-{kind}"] = Measurement(
                    float(oriented.mean()) if len(oriented) else math.nan,
                    f"K = {k1}: {fmt_mean_std(a)}; 2K = {k2}: {fmt_mean_std(b)}; change per seed "
                    f"{_per_seed(b - a)}; equivalence margin ± {margin:g} (config k_margin)",
                    samples=tuple(oriented.to_numpy()),
                    power=tost_power(margin, sd, len(oriented), float(spec["alpha"]))
                    if len(oriented) > 1
                    else math.nan,
                )
                votes = certainty_per_seed(directions, ds, kind, column="vote_share")
                measured[f"C-{ds}-{kind}"] = Measurement(
                    float(stat.mean()) if len(stat) else math.nan,
                    f"{_LABELS[kind]} (K = {k1}): mean max probability {fmt_mean_std(stat)} "
                    f"(per seed {_per_seed(stat)}), vote share {fmt_mean_std(votes)}; {note}",
                    samples=tuple(stat.to_numpy()),
                )
            elif kind == "single":
                below = int((stat <= level).sum())
                measured[f"S-{ds}-single"] = Measurement(
                    float(stat.mean()) if len(stat) else math.nan,
                    f"single network: mean max probability {fmt_mean_std(stat)} (per seed "
                    f"{_per_seed(stat)}; {below} seed(s) at or below {level:g}); {note}",
                    samples=tuple(stat.to_numpy()),
                )
        sc = scaling[scaling["dataset"] == ds]
        if sc.empty:
            raise ValueError(f"The scaling frame has no rows for dataset {ds!r}.")
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
            measured[f"G-{ds}-{metric}"] = Measurement(
                value,
                f"alpha {a_min:g} -> {a_max:g} along the paper's feature, mean over points and "
                "seeds: " + "; ".join(parts),
            )
    return evaluate_claims(PAPER, specs, measured, alpha=float(spec["alpha"]))


def claims_table(frames: dict, spec: dict) -> pd.DataFrame:
    """The study's claims table from its frames (the shared claims rule's function)."""
    return evaluate_ulmer_claims(frames["fit"], frames["scaling"], frames["directions"], spec)
